// DemangleTests.swift — demangled names as reports show them: Rust v0 and legacy symbols (taken from a real
// rustc 1.95 binary and checked against binutils 2.40's `nm --demangle=rust`), C++, Swift, names that are not
// mangled, and hostile ones (a v0 back-reference bomb, deep nesting, over-long input) that must stay capped
// and quick. Also which name a concrete frame gets when both the symbol table and DWARF name it.
import CrashwatchSymbols
import CrashwatchSystem
import Foundation
import Testing

/// A mangled symbol and the name a report shows for it.
struct DemangleVector: CustomTestStringConvertible, Sendable {
    let symbol: String
    let expected: String?
    var testDescription: String { symbol }
    init(_ symbol: String, _ expected: String?) {
        self.symbol = symbol
        self.expected = expected
    }
}

/// Rust v0 symbols (`_R…`): what `nm --demangle=rust` prints (no crate disambiguators).
let rustV0Vectors: [DemangleVector] = [
    .init("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar"),
    .init("_RNvNtCsjrHSEGnQ3l9_3std3env4args", "std::env::args"),
    .init("_RNvXNtNtNtCsgEmfK2I1SDS_4core3fmt3num3imphNtB6_7Display3fmt", "<u8 as core::fmt::Display>::fmt"),
    .init("_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner11finish_growB7_",
          "<alloc::raw_vec::RawVecInner>::finish_grow"),
    .init("_RNCNvNtCsjrHSEGnQ3l9_3std9panicking13panic_handler0B5_", "std::panicking::panic_handler::{closure#0}"),
    .init("_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_backtraceNCNvNtB6_9panicking13panic_handler0zEB6_",
          "std::sys::backtrace::__rust_end_short_backtrace::<std::panicking::panic_handler::{closure#0}, !>"),
    .init("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
          "<str>::trim_start_matches::<&str>"),
    .init("_RINvMs5_NtNtCsjrHSEGnQ3l9_3std2io5errorNtB6_5Error3newReEBa_", "<std::io::error::Error>::new::<&str>"),
    .init("_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
          "core::escape::escape_unicode::<10>"),
    // Punycode identifiers: `mod grüße { fn café() }` in crate p.
    .init("_RNvNtCs12jkoC9p3aE_1pu9gre_6ka8lu7caf_dma", "p::grüße::café"),
    // An LLVM suffix is not part of the name.
    .init("_RNvNtCs1234_7mycrate3foo3bar.llvm.123", "mycrate::foo::bar"),
]

/// Legacy Rust symbols (`_ZN…17h<16 hex>E`): hash removed, `$…$` and `..` escapes decoded.
let rustLegacyVectors: [DemangleVector] = [
    .init("_ZN1x5index17h586e5c138113057aE", "x::index"),
    .init("_ZN4core9panicking5panic17h0123456789abcdefE", "core::panicking::panic"),
    .init("_ZN71_$LT$core..hash..sip..Hasher$LT$S$GT$$u20$as$u20$core..hash..Hasher$GT$5write17hba429d975eeb7629E",
          "<core::hash::sip::Hasher<S> as core::hash::Hasher>::write"),
    .init("_ZN73_$LT$x..outer..inner..Thing$LT$T$GT$$u20$as$u20$x..outer..inner..Doer$GT$2go17he8d9dae974470472E",
          "<x::outer::inner::Thing<T> as x::outer::inner::Doer>::go"),
    .init("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h0a352264874963e3E", "std::rt::lang_start::{{closure}}"),
    .init("_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$17h6f528c34518dea83E",
          "core::ops::function::FnOnce::call_once{{vtable.shim}}"),
    .init("_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17hcb2d4c8f67479baaE.llvm.17882241207441725688",
          "hashbrown::raw::RawTable<T,A>::reserve_rehash"),
]

/// C++ (Itanium, through libiberty), including `_ZN` names that are not Rust's (no hash); a template function's
/// return type is left out, as gdb and eu-stack print names (c++filt prints `void std::__invoke_impl<…>`).
let cxxVectors: [DemangleVector] = [
    .init("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)"),
    .init("_ZN3app3useERKNS_6HolderINS_12_GLOBAL__N_13BoxEEE",
          "app::use(app::Holder<app::(anonymous namespace)::Box> const&)"),
    .init("_ZN3foo3barE", "foo::bar"),
    .init("_Z4fillRSt6vectorIiSaIiEEi", "fill(std::vector<int, std::allocator<int> >&, int)"),
    .init("_ZSt13__invoke_implIvPFvvEJEET_St14__invoke_otherOT0_DpOT1_",
          "std::__invoke_impl<void, void (*)()>(std::__invoke_other, void (*&&)())"),
]

/// Swift (through the runtime's `swift_demangle`).
let swiftVectors: [DemangleVector] = [
    .init("$s4main3fooyyF", "main.foo() -> ()"),
]

/// Names that are not mangled, or not validly: no demangled form.
let notMangledVectors: [DemangleVector] = [
    .init("main", nil),
    .init("__libc_start_main_impl", nil),
    .init("_start", nil),
    .init("_RNvNtCs1234_7mycrate3foo3barX", nil),  // trailing garbage
    .init("_RINvC1a1fB_E", nil),                    // a back-reference to itself
    .init("_R", nil),
    .init("_Z", nil),
    .init("_ZN3foo17h0123456789abcdeE", nil),        // a hash one digit short: neither Rust nor C++
]

/// A v0 symbol of `levels` nested tuples, each naming the previous one twice through back-references:
/// a few hundred bytes whose demangled text doubles with every level (2^levels tuples of `()`).
func backReferenceBomb(levels: Int) -> String {
    /// A base-62 number as v0 writes it (`_` is 0, `<digits>_` is the value + 1).
    func base62(_ value: Int) -> String {
        guard value > 0 else { return "_" }
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var n = value - 1, text = ""
        repeat {
            text = String(digits[n % 62]) + text
            n /= 62
        } while n > 0
        return text + "_"
    }
    var body = "INvC1a1f"  // a::f::<…>
    var previous = body.utf8.count
    body += "TuuE"
    for _ in 0..<levels {
        let position = body.utf8.count
        body += "TB\(base62(previous))B\(base62(previous))E"
        previous = position
    }
    return "_R" + body + "E"
}

/// `demangling(name)`'s name; nil when it gave none.
private func demangle(_ name: String) -> String? {
    if case .name(let demangled) = demangling(name) { return demangled }
    return nil
}

@Suite struct DemangleTests {
    @Test(arguments: rustV0Vectors)
    func rustV0(_ vector: DemangleVector) {
        #expect(demangle(vector.symbol) == vector.expected)
        #expect(SymbolizedFrame.functionName(vector.symbol) == vector.expected)
    }

    @Test(arguments: rustLegacyVectors)
    func rustLegacy(_ vector: DemangleVector) {
        #expect(demangle(vector.symbol) == vector.expected)
    }

    @Test(arguments: cxxVectors)
    func cxx(_ vector: DemangleVector) {
        #expect(demangle(vector.symbol) == vector.expected)
    }

    @Test(arguments: swiftVectors)
    func swift(_ vector: DemangleVector) {
        #expect(demangle(vector.symbol) == vector.expected)
    }

    @Test(arguments: notMangledVectors)
    func notMangled(_ vector: DemangleVector) {
        #expect(demangle(vector.symbol) == nil)
        #expect(SymbolizedFrame.functionName(vector.symbol) == vector.symbol)
    }

    /// A versioned ELF symbol loses its version, mangled or not.
    @Test func versionedSymbols() {
        #expect(SymbolizedFrame.functionName("__libc_start_main@@GLIBC_2.34") == "__libc_start_main")
        #expect(SymbolizedFrame.functionName("_ZN1x5index17h586e5c138113057aE@VERS_1") == "x::index")
    }

    /// Fixtures/demangle_bomb's Swift symbol: 142 bytes that swift_demangle spends over a second on (65 MiB), with
    /// no way to cut it short. It is given up after 100 ms of the demangling thread's CPU time, the caller back at
    /// once; the thread left with it finishes on its own, and the next Swift name gets a thread of its own.
    @Test func swiftNameThatExpandsWithoutBoundIsGivenUp() {
        let bomb = "$s13demangle_bomb7recurseyySaySaySaySaySaySaySaySaySaySaySaySaySiG_A2cCtG_A2dDtG_A2eEtG_A2fFtG"
            + "_A2gGtG_A2hHtG_A2iItG_A2jJtG_A2kKtG_AlLtG_AmMtGF"
        let clock = ContinuousClock()
        var outcome = Demangling.notMangled
        let elapsed = clock.measure { outcome = demangling(bomb) }
        #expect(outcome == .gaveUp("its demangling passed 100 ms of CPU time"))
        // 100 ms of CPU and a 5-ms poll; the bound is wide for a loaded machine, far below the bomb's own time.
        #expect(elapsed < .milliseconds(900), "\(elapsed)")
        #expect(demangle("$s4main3fooyyF") == "main.foo() -> ()")
        let names = NameCache()
        #expect(names.functionName("$s4main3fooyyF") == "main.foo() -> ()")
        #expect(names.softErrors.isEmpty)
    }

    /// The bomb's small cases demangle in full (so the generator writes valid v0); a 40-level one would be
    /// 2^40 tuples: it comes back cut at the cap, marked, at once.
    @Test func backReferenceBombIsCappedAndQuick() throws {
        #expect(demangle(backReferenceBomb(levels: 1)) == "a::f::<((), ()), (((), ()), ((), ()))>")
        let bomb = backReferenceBomb(levels: 40)
        #expect(bomb.utf8.count < 500)
        let clock = ContinuousClock()
        var name: String?
        let elapsed = clock.measure { name = demangle(bomb) }
        let text = try #require(name)
        #expect(text.utf8.count <= maximumNameBytes)
        #expect(text.hasSuffix(truncationMark))
        #expect(text.hasPrefix("a::f::<((), ()), (((), ()), ((), ()))"), "\(text.prefix(100))")
        #expect(elapsed < .seconds(1), "\(elapsed)")
    }

    /// Nesting deeper than libiberty's recursion limit fails cleanly instead of exhausting the stack.
    @Test func deepNestingFails() {
        let depth = 100_000
        let tuples = demangle("_RINvC1a1f" + String(repeating: "T", count: depth) + "u" + String(repeating: "E", count: depth) + "E")
        #expect(tuples == nil)
        let arrays = demangle("_RINvC1a1f" + String(repeating: "A", count: depth) + "u" + String(repeating: "Kj1_", count: depth) + "E")
        #expect(arrays == nil)
    }

    /// Long valid names (a 20,000-component legacy path, a long v0 identifier, a C++ template with 1,000 arguments)
    /// are capped with the mark. (The inputs stay out of the expectations: a failure would print them.)
    @Test func overLongNamesAreCapped() throws {
        let legacy = demangle("_ZN" + String(repeating: "5abcde", count: 20_000) + "17h0123456789abcdefE")
        let legacyName = try #require(legacy)
        #expect(legacyName.utf8.count <= maximumNameBytes)
        #expect(legacyName.hasPrefix("abcde::abcde::"))
        #expect(legacyName.hasSuffix(truncationMark))
        let identifier = String(repeating: "x", count: 10_000)
        let v0 = demangle("_RNvCs1234_7mycrate\(identifier.utf8.count)\(identifier)")
        let v0Name = try #require(v0)
        #expect(v0Name.utf8.count <= maximumNameBytes)
        #expect(v0Name.hasPrefix("mycrate::xxxx"))
        #expect(v0Name.hasSuffix(truncationMark))
        // f<int, int, …>() with 1,000 template arguments (its return type left out): 5,003 bytes demangled.
        let cxx = demangle("_Z1fI" + String(repeating: "i", count: 1_000) + "Evv")
        let cxxName = try #require(cxx)
        #expect(cxxName.utf8.count <= maximumNameBytes)
        #expect(cxxName.hasPrefix("f<int, int, "))
        #expect(cxxName.hasSuffix(truncationMark))
    }

    /// A name just at the cap is whole; one byte over is cut and marked.
    @Test func capBoundary() throws {
        // "mycrate::" is 9 bytes: an identifier of maximumNameBytes - 9 bytes fills the cap exactly.
        let fits = String(repeating: "y", count: maximumNameBytes - 9)
        let whole = try #require(demangle("_RNvCs1234_7mycrate\(fits.utf8.count)\(fits)"))
        #expect(whole.utf8.count == maximumNameBytes)
        #expect(whole.hasPrefix("mycrate::yyyy") && !whole.hasSuffix(truncationMark))
        let over = fits + "y"
        let cut = try #require(demangle("_RNvCs1234_7mycrate\(over.utf8.count)\(over)"))
        #expect(cut.hasSuffix(truncationMark))
        #expect(cut.utf8.count <= maximumNameBytes)
    }
}

@Suite struct ConcreteFunctionNameTests {
    /// A C alias in the symbol table: DWARF names the function itself.
    @Test func cAliasTakesTheDWARFName() {
        #expect(SymbolizedFrame.concreteFunctionName(dwarfName: "__libc_start_main_impl",
                                                     symbol: "__libc_start_main@@GLIBC_2.34") == "__libc_start_main_impl")
    }

    /// A DWARF linkage name is demangled (Rust legacy: hash removed).
    @Test func linkageNameIsDemangled() {
        #expect(SymbolizedFrame.concreteFunctionName(dwarfName: "_ZN1x5index17h586e5c138113057aE",
                                                     symbol: "_ZN1x5index17h586e5c138113057aE") == "x::index")
    }

    /// A plain (qualified) DWARF name that the demangled symbol contains: the symbol says more (parameters).
    @Test func plainDWARFNameDefersToTheDemangledSymbol() {
        let symbol = "_ZN3app3useERKNS_6HolderINS_12_GLOBAL__N_13BoxEEE"
        let full = "app::use(app::Holder<app::(anonymous namespace)::Box> const&)"
        #expect(SymbolizedFrame.concreteFunctionName(dwarfName: "app::use", symbol: symbol) == full)
        #expect(SymbolizedFrame.concreteFunctionName(dwarfName: "use", symbol: symbol) == full)
    }

    /// A DWARF name the symbol does not contain (identical code folded under another name): DWARF's.
    @Test func otherFunctionKeepsTheDWARFName() {
        #expect(SymbolizedFrame.concreteFunctionName(dwarfName: "app::other",
                                                     symbol: "_ZN3app3useERKNS_6HolderINS_12_GLOBAL__N_13BoxEEE") == "app::other")
    }
}
