// InlineNameTests.swift — inline chains and their names from real compilers' DWARF, built at test time from
// sources written here (no fixture files): g++ without linkage names (functions of an anonymous namespace's
// types) must give names qualified by namespaces and classes; clang's DWARF 5 call sites in the primary file
// (file 0) must keep their file; rustc, which nests every function in namespaces, must give its inline chain.
// Each test is skipped when its compiler is not installed.
import CrashwatchSymbols
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// The compilers and nm, nil when not installed.
private let gxx = Paths.which("g++")
private let clangxx = Paths.which("clang++")
private let rustc = Paths.which("rustc", extra: ["/root/.cargo/bin/rustc", NSHomeDirectory() + "/.cargo/bin/rustc"])
private let nm = Paths.which("nm")

/// Writes `source` as `name` in `directory`, compiles it with `compiler` and `flags` into `binary`, and
/// returns the binary's path.
private func build(_ source: String, name: String, compiler: String, flags: [String], in directory: TemporaryDirectory) throws -> String {
    try source.write(toFile: directory.join(name), atomically: true, encoding: .utf8)
    _ = try Subprocess.output(compiler, flags + [name, "-o", "binary"], workingDirectory: directory.path)
    return directory.join("binary")
}

/// The start and size of the function symbol whose raw name contains `fragment` (`nm -S`).
private func symbolRange(_ fragment: String, in binary: String) throws -> (start: UInt64, size: UInt64) {
    let listing = try Subprocess.output(try #require(nm), ["-S", "--defined-only", binary])
    for line in listing.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 4, fields[2].lowercased() == "t", fields[3].contains(fragment),
              let start = UInt64(fields[0], radix: 16), let size = UInt64(fields[1], radix: 16) else { continue }
        return (start, size)
    }
    Issue.record("no function symbol containing \(fragment) in \(binary)")
    throw CancellationError()
}

/// The lookups of every byte address of a function in `binary` (reported at its link-time addresses).
private func lookups(ofFunction fragment: String, in binary: String) throws -> [SymbolLookup] {
    let range = try symbolRange(fragment, in: binary)
    let symbolizer = try Symbolizer(debugDirectories: [], useDebuginfod: false)
    let fd = open(binary, O_RDONLY | O_CLOEXEC)
    try #require(fd >= 0)
    defer { close(fd) }
    #expect(symbolizer.report(name: binary, fd: fd, loadAddress: 0) == nil)
    return (range.start..<range.start + range.size).compactMap { symbolizer.lookup($0) }
}

/// Levels as `name@inlined` strings, names through `SymbolizedFrame.functionName` as reports show them.
private func describe(_ levels: [SourceLevel]) -> [String] {
    levels.map { "\($0.name.map(SymbolizedFrame.functionName) ?? "?")\($0.inlined ? "@inlined" : "")" }
}

/// C++ whose inlined member functions have no DWARF linkage name with g++: their class lives in an anonymous
/// namespace, so they have internal linkage.
private let cxxSource = """
    namespace app {
    namespace {
    struct Box {
        int *p;
        inline int get() const { return *p; }
    };
    }
    template <typename T> struct Holder {
        T value;
        __attribute__((always_inline)) inline int read() const { return value.get() + 1; }
    };
    __attribute__((noinline)) int use(const Holder<Box> &h) { return h.read() * 2; }
    }
    int main(int argc, char **) {
        app::Holder<app::Box> h{{argc > 5 ? &argc : nullptr}};
        return app::use(h);
    }
    """

/// Rust with a method and std's `Vec` indexing inlined into a function; all of them nested in namespaces.
private let rustSource = """
    pub struct Table { values: Vec<u32> }
    impl Table {
        #[inline(always)]
        fn pick(&self, i: usize) -> u32 { self.values[i] }
    }
    #[inline(never)]
    fn index(t: &Table, i: usize) -> u32 { t.pick(i) + 1 }
    fn main() {
        let t = Table { values: vec![1, 2, 3] };
        println!("{}", index(&t, std::env::args().count()));
    }
    """

@Suite(.serialized) struct InlineNameTests {
    @Test(.enabled(if: gxx != nil && nm != nil, "g++ or nm (binutils) is not installed"))
    func gccInlineLevelsAreQualifiedByNamespacesAndClasses() throws {
        let directory = try TemporaryDirectory("crashwatch-inline")
        defer { directory.remove() }
        let binary = try build(cxxSource, name: "inline.cpp", compiler: try #require(gxx), flags: ["-O2", "-g"], in: directory)
        let chains = try lookups(ofFunction: "_ZN3app3use", in: binary).map(\.levels)
        let expected = ["app::(anonymous namespace)::Box::get@inlined", "app::Holder<app::(anonymous namespace)::Box>::read@inlined",
                        "app::use"]
        #expect(chains.contains { describe($0) == expected }, "\(Set(chains.map(describe)))")
        // Every level of every address is qualified: no bare `get`, `read` or `use`.
        let bare = chains.filter { chain in chain.contains { $0.name?.hasPrefix("app::") != true } }
        #expect(bare.isEmpty, "\(Set(bare.map(describe)))")
    }

    @Test(.enabled(if: clangxx != nil && nm != nil, "clang++ or nm (binutils) is not installed"))
    func clangInlineLevelsKeepTheirCallSiteFiles() throws {
        let directory = try TemporaryDirectory("crashwatch-inline")
        defer { directory.remove() }
        let binary = try build(cxxSource, name: "inline.cpp", compiler: try #require(clangxx),
                               flags: ["-O2", "-g", "-gdwarf-5"], in: directory)
        let chains = try lookups(ofFunction: "_ZN3app3use", in: binary).map(\.levels)
        let deepest = try #require(chains.max { $0.count < $1.count })
        #expect(describe(deepest) == ["app::(anonymous namespace)::Box::get() const@inlined",
                                      "app::Holder<app::(anonymous namespace)::Box>::read() const@inlined",
                                      "app::use(app::Holder<app::(anonymous namespace)::Box> const&)"])
        // clang's DWARF 5 names the primary source file 0 in DW_AT_call_file.
        #expect(deepest.map { $0.file?.hasSuffix("inline.cpp") } == [true, true, true], "\(deepest)")
        #expect(deepest.map(\.line) == [5, 10, 12], "\(deepest)")
    }

    @Test(.enabled(if: rustc != nil && nm != nil, "rustc or nm (binutils) is not installed"))
    func rustInlineChainThroughNamespaces() throws {
        let directory = try TemporaryDirectory("crashwatch-inline")
        defer { directory.remove() }
        let binary = try build(rustSource, name: "inlined.rs", compiler: try #require(rustc),
                               flags: ["-g", "-C", "opt-level=2", "-C", "panic=abort"], in: directory)
        let found = try lookups(ofFunction: "7inlined5index", in: binary)
        let chains = found.map(\.levels)
        let names = chains.map(describe)
        // The innermost levels are std's slice indexing; then the method; then the concrete function.
        let expectedTail = ["<alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index@inlined",
                            "inlined::Table::pick@inlined", "inlined::index"]
        #expect(names.contains { Array($0.suffix(3)) == expectedTail }, "\(Set(names))")
        // Every address has a named concrete function at the end of its chain.
        let unnamed = chains.filter { chain in chain.last.map { $0.inlined || $0.name == nil } ?? true }
        #expect(unnamed.isEmpty, "\(unnamed.count) of \(chains.count) addresses: \(Set(unnamed.map(describe)))")
        // std's panic handler is exported as `__rustc::rust_begin_unwind`: DWARF names it in its module.
        let handler = try lookups(ofFunction: "17rust_begin_unwind", in: binary).compactMap { $0.levels.last?.name }
        #expect(!handler.isEmpty && handler.allSatisfy { $0.hasPrefix("std::panicking::") && $0.hasSuffix("panic_handler") },
                "\(Set(handler))")
        // The call site of the method inside `index` is line 7 of the source.
        let pick = chains.lazy.compactMap { chain in chain.first { $0.name.map(SymbolizedFrame.functionName) == "inlined::Table::pick" } }.first
        #expect(pick?.file?.hasSuffix("inlined.rs") == true)
        #expect(pick?.line == 4)
    }
}
