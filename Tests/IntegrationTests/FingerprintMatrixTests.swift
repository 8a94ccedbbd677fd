// FingerprintMatrixTests.swift — fingerprints of real crashes under `crashwatch run`: one per bug, across the
// matrix of (C at -O0 and -O2, rebuilt with other build-ids) × (two inputs reaching the same site, another thread,
// ASLR), the real-toolchain programs (C++ terminate, Rust panic and abort, Go, Swift's runtime trap) run twice and
// rebuilt, and a different fingerprint for every different bug; then `list --group`, `--fingerprint`, `show`,
// retention and the OTLP record on the same real reports.
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// Runs `executable` under `crashwatch run` into a fresh spool (or `spool`) and returns its one report.
private func crashReport(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
                         spool: String? = nil) throws -> CrashReport {
    let temporary = try TemporaryDirectory("cw-fp-spool")
    defer { temporary.remove() }
    let directory = spool ?? temporary.path
    let before = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
    let result = try run(Paths.crashwatch, ["run", "--spool", directory, "--", executable] + arguments, environment: environment)
    let added = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") && !before.contains($0) }
    try #require(added.count == 1, "\(executable) \(arguments): \(added.count) new reports; stderr: \(result.stderr)")
    let bytes = try #require(FileManager.default.contents(atPath: "\(directory)/\(added[0])"))
    return try CrashReport.decode(Array(bytes))
}

/// The main executable's build-id in a report.
private func buildID(_ report: CrashReport) -> String? { report.mainExecutable?.buildID }

/// Whether the kernel randomizes where programs are loaded (`kernel.randomize_va_space` not 0).
private var aslrOn: Bool {
    ((try? String(contentsOfFile: "/proc/sys/kernel/randomize_va_space", encoding: .utf8)) ?? "2").trimmingCharacters(in: .whitespacesAndNewlines) != "0"
}

@Suite(.serialized) struct FingerprintMatrixTests {
    @Test("C, -O0 and -O2, rebuilt with other build-ids: inputs, threads and ASLR keep one fingerprint per bug")
    func cMatrix() throws {
        let gcc = try #require(Paths.which("gcc"), "no gcc; skip")
        let source = Paths.source("fingerprint_site.c")
        let builds = try TemporaryDirectory("cw-fp-builds")
        defer { builds.remove() }
        var programs = [("-O0 (build.sh)", Paths.fixture("fingerprint_site"))]
        for (flags, id) in [("-O0", "0x0123456789abcdef"), ("-O2", "0xfedcba9876543210"), ("-O2", "0x00112233445566778899")] {
            let output = "\(builds.path)/fingerprint_site"
            let name = "\(output)\(flags)-\(id)"
            let compiled = try run(gcc, [flags, "-g", "-pthread", "-Wall", source, "-Wl,--build-id=\(id)", "-o", name])
            try #require(compiled.succeeded, "gcc \(flags): \(compiled.stderr)")
            // The same file name: the program is part of the fingerprint, its directory is not.
            let directory = "\(builds.path)/\(flags)-\(id)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: name, toPath: "\(directory)/fingerprint_site")
            programs.append(("\(flags) build-id \(id)", "\(directory)/fingerprint_site"))
        }
        var siteA: [String: String] = [:]  // fingerprint value → what gave it
        var siteB: [String: String] = [:]
        var buildIDs = Set<String>()
        for (build, program) in programs {
            let first = try crashReport(program, ["a", "main", "1"])
            let again = try crashReport(program, ["a", "main", "1"])
            let otherInput = try crashReport(program, ["a", "main", "7"])
            let otherThread = try crashReport(program, ["a", "thread", "3"])
            let otherBug = try crashReport(program, ["b", "main", "1"])
            #expect(first.signal.faultAddress != otherInput.signal.faultAddress, "\(build): another input, another fault address")
            let thread = try #require(otherThread.crashedThread)
            #expect(thread.name == "worker" && thread.tid != otherThread.process.pid, "\(build): the crash is on the worker thread")
            if aslrOn { #expect(first.mainExecutable?.loadAddress != again.mainExecutable?.loadAddress, "\(build): ASLR moved the program") }
            for (what, report) in [("first", first), ("again", again), ("input 7", otherInput), ("thread", otherThread)] {
                let fingerprint = try #require(report.fingerprint)
                #expect(fingerprint.frames == ["store_a", "middle_a", "outer_a"], "\(build) \(what): \(fingerprint.frames)")
                siteA[fingerprint.value, default: "\(build) \(what)"] += ""
            }
            let b = try #require(otherBug.fingerprint)
            #expect(b.frames == ["store_b", "middle_b", "outer_b"])
            siteB[b.value, default: build] += ""
            if let id = buildID(first) { buildIDs.insert(id) }
        }
        #expect(buildIDs.count == programs.count, "every build has its own build-id: \(buildIDs)")
        #expect(siteA.count == 1, "site a: one fingerprint for every build, input, thread and run: \(siteA)")
        #expect(siteB.count == 1, "site b: \(siteB)")
        #expect(Set(siteA.keys).isDisjoint(with: siteB.keys), "two sites, two fingerprints")
    }

    /// The real-toolchain and runtime crashes: each fixture's fingerprint frames (machinery skipped), stable across
    /// two runs, and different for every bug.
    static let toolchainCases: [(name: String, extensions: [String], signal: String, frames: [String])] = [
        ("null_deref", ["c"], "SIGSEGV", ["crash_here", "middle", "outer"]),
        ("abort", ["c"], "SIGABRT", ["crash_here", "caller", "main"]),
        ("inline_o2", ["c"], "SIGSEGV", ["leaf_inlined", "middle_inlined", "crash_outer"]),
        ("segv_reraise", ["c"], "SIGSEGV", ["crash_here", "caller", "main"]),
        ("cxx_throw", ["cpp"], "SIGSEGV", ["crashwatch_demo::Widget::explode", "crashwatch_demo::run", "main"]),
        ("cxx_uncaught", ["cpp"], "SIGABRT", ["crashwatch_demo::thrower", "crashwatch_demo::run", "main"]),
        ("swift_trap", ["swift"], "SIGILL", ["swift_trap.crashHere", "swift_trap.middle", "main"]),
        ("rust_oob", ["rs"], "SIGSEGV", ["core::ptr::write_volatile", "rust_oob::write_at", "rust_oob::scatter"]),
        ("rust_panic_abort", ["rs"], "SIGABRT", ["rust_panic_abort::lookup", "rust_panic_abort::pick", "rust_panic_abort::entry"]),
        ("go_nil", ["go"], "SIGSEGV", ["main.crashHere", "main.walk", "main.start"]),
    ]

    @Test("C, C++ terminate, Swift trap, Rust segfault and panic=abort, Go: one fingerprint per bug, machinery skipped")
    func toolchains() throws {
        var values: [String: String] = [:]
        for item in Self.toolchainCases {
            let fixture = Fixture(item.name, extensions: item.extensions)
            let executable = try fixture.executable()
            let first = try crashReport(executable, fixture.arguments, environment: fixture.environment)
            let second = try crashReport(executable, fixture.arguments, environment: fixture.environment)
            let fingerprint = try #require(first.fingerprint, "\(item.name): no fingerprint")
            #expect(fingerprint.frames == item.frames, "\(item.name): \(fingerprint.frames)")
            #expect(fingerprint.signal == item.signal && fingerprint.program == item.name && fingerprint.algorithm == "crashwatch-1")
            #expect(second.fingerprint == fingerprint, "\(item.name): the second run differs")
            #expect(values.updateValue(item.name, forKey: fingerprint.value) == nil, "\(item.name) shares its fingerprint with \(values[fingerprint.value] ?? "")")
        }
        #expect(values.count == Self.toolchainCases.count)
    }

    @Test("rebuilt Rust (another crate hash and build-id) and C++ (another build-id) keep their fingerprints")
    func toolchainRebuilds() throws {
        let builds = try TemporaryDirectory("cw-fp-rebuilds")
        defer { builds.remove() }
        // Rust: another -C metadata gives every legacy symbol hash and the build-id a new value.
        let rustc = try #require(Paths.which("rustc", extra: ["\(NSHomeDirectory())/.cargo/bin/rustc"]), "no rustc; skip")
        let rust = Fixture("rust_panic_abort", extensions: ["rs"])
        let original = try crashReport(try rust.executable(), rust.arguments, environment: rust.environment)
        let rebuilt = "\(builds.path)/rust_panic_abort"
        let flags = (rust.keys["BUILD"] ?? "").split(separator: " ").map(String.init)
        let compiled = try run(rustc, ["--crate-name", "rust_panic_abort", "--crate-type", "bin", Paths.source("rust_panic_abort.rs")]
                                       + flags + ["-C", "metadata=crashwatch-rebuild", "-o", rebuilt])
        try #require(compiled.succeeded, "rustc: \(compiled.stderr)")
        let again = try crashReport(rebuilt, rust.arguments, environment: rust.environment)
        #expect(buildID(again) != buildID(original), "the rebuild has another build-id")
        let symbols = { (report: CrashReport) in report.crashedThread?.frames.compactMap(\.symbol).filter { $0.contains("lookup") } ?? [] }
        #expect(symbols(again) != symbols(original), "the rebuild's symbols differ (hash)")
        #expect(again.fingerprint?.value == original.fingerprint?.value)
        // C++: the same source with another build-id.
        let gxx = try #require(Paths.which("g++"), "no g++; skip")
        let cxx = Fixture("cxx_uncaught", extensions: ["cpp"])
        let before = try crashReport(try cxx.executable(), cxx.arguments)
        let cxxRebuilt = "\(builds.path)/cxx_uncaught"
        let cxxCompiled = try run(gxx, ["-O0", "-g", Paths.source("cxx_uncaught.cpp"), "-Wl,--build-id=0xc0ffee", "-o", cxxRebuilt])
        try #require(cxxCompiled.succeeded, "g++: \(cxxCompiled.stderr)")
        let after = try crashReport(cxxRebuilt, cxx.arguments)
        #expect(buildID(after) == "c0ffee" && buildID(before) != "c0ffee")
        #expect(after.fingerprint?.value == before.fingerprint?.value)
    }

    @Test("list --group counts real reports; --fingerprint and show filter; retention keeps each group; OTLP carries it")
    func groupsOnRealReports() throws {
        let spool = try TemporaryDirectory("cw-fp-groups")
        defer { spool.remove() }
        let program = Paths.fixture("fingerprint_site")
        let b = try crashReport(program, ["b", "main", "1"], spool: spool.path)
        var a: [CrashReport] = []
        for input in ["1", "2", "3"] { a.append(try crashReport(program, ["a", "main", input], spool: spool.path)) }
        let listed = try run(Paths.crashwatch, ["list", "--group", "--json", "--spool", spool.path])
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(groups.count == 2)
        let aValue = try #require(a[0].fingerprint?.value)
        #expect(groups.first?["fingerprint"] as? String == aValue, "newest first")
        #expect(groups.first?["count"] as? Int == 3 && groups.last?["count"] as? Int == 1)
        #expect(groups.first?["firstSeen"] as? String == a[0].captureTime && groups.first?["lastSeen"] as? String == a[2].captureTime)
        #expect(groups.last?["firstSeen"] as? String == b.captureTime && groups.last?["topFrame"] as? String == "store_b")
        let table = try run(Paths.crashwatch, ["list", "--group", "--spool", spool.path, "--color", "never"])
        #expect(table.stdout.split(separator: "\n").count == 3 && table.stdout.contains(String(aValue.prefix(12))))
        // --fingerprint: a's three reports; show: the newest of them.
        let filtered = try run(Paths.crashwatch, ["list", "--json", "--fingerprint", String(aValue.prefix(8)), "--spool", spool.path])
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(filtered.stdout.utf8)) as? [[String: Any]])
        #expect(reports.compactMap { $0["id"] as? String } == a.reversed().map(\.id))
        let shown = try run(Paths.crashwatch, ["show", "--json", "--fingerprint", String(aValue.prefix(8)), "--spool", spool.path])
        #expect(try CrashReport.decode(Array(shown.stdout.utf8)).id == a[2].id)
        // Retention down to two reports keeps the newest of each group (b's only report is the oldest), and the
        // counts stay.
        let pruned = try run(Paths.crashwatch, ["prune", "--max-reports", "2", "--spool", spool.path])
        #expect(pruned.succeeded, "\(pruned.stderr)")
        let left = try run(Paths.crashwatch, ["list", "--json", "--spool", spool.path])
        let ids = (try JSONSerialization.jsonObject(with: Data(left.stdout.utf8)) as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == [a[2].id, b.id])
        let after = try run(Paths.crashwatch, ["list", "--group", "--json", "--spool", spool.path])
        let counts = (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])?.compactMap { $0["count"] as? Int }
        #expect(counts == [3, 1])
        // The OTLP record ship sends.
        let otlp = try run(Paths.crashwatch, ["export", "--format", "otlp", "--spool", spool.path, a[2].id])
        #expect(otlp.stdout.contains(#"{"key": "crashwatch.fingerprint", "value": {"stringValue": "\#(aValue)"}}"#)
                || otlp.stdout.contains(#"{"key":"crashwatch.fingerprint","value":{"stringValue":"\#(aValue)"}}"#), "\(otlp.stdout.prefix(400))")
    }
}
