// FingerprintTests.swift — the fingerprint algorithm on hand-made reports: what changes it (the crash site, the
// signal, the kind) and what must not (addresses, build-ids, pids, tids, paths, hosts, machinery frames above the
// site), the name rules, the machinery table, SHA-256 against the standard's vectors, and the pinned values of
// `crashwatch-1`: when they change, the algorithm changed and its name must change too.
import CrashwatchModel
import CrashwatchTestSupport
import Testing

/// A small report builder: one crashed thread whose frames are (function or nil, image index, offset).
private enum Made {
    static let app = ImageRecord(path: "/opt/app/bin/app", buildID: "aa11", loadAddress: 0x5555_0000_0000, size: 0x10000,
                                 inApp: true, architecture: "x86_64", isMainExecutable: true)
    static let libc = ImageRecord(path: "/usr/lib/x86_64-linux-gnu/libc.so.6", buildID: "bb22", loadAddress: 0x7f00_0000_0000,
                                  size: 0x200000, inApp: false, architecture: "x86_64")

    static func report(_ frames: [(String?, Int?, UInt64)], signal: Int32 = 11, images: [ImageRecord] = [app, libc],
                       pid: Int32 = 100, tid: Int32? = nil, slide: UInt64 = 0) -> CrashReport {
        var report = SampleReport.report
        report.fingerprint = nil
        report.signal = SignalRecord(SignalInfo(signo: signal, code: 1, address: 0))
        report.process.pid = pid
        report.images = images.map { image in
            var moved = image
            moved.loadAddress = Address(image.loadAddress.value + slide)
            return moved
        }
        let records = frames.enumerated().map { index, frame in
            let base = frame.1.map { report.images[$0].loadAddress.value } ?? 0
            return FrameRecord(index: index, address: Address(base + frame.2), imageIndex: frame.1,
                               imageOffset: frame.1 == nil ? nil : Address(frame.2), symbol: frame.0, function: frame.0,
                               how: index == 0 ? .context : .cfi)
        }
        report.threads = [ThreadRecord(tid: tid ?? pid, name: "app", crashed: true, registers: [], frames: records)]
        return report
    }

    /// A SIGABRT under libc's abort machinery, from `site` in the app.
    static func abort(from site: String, caller: String = "main") -> CrashReport {
        report([("__pthread_kill_implementation", 1, 0x8a1c), ("raise", 1, 0x3c472), ("abort", 1, 0x2645a),
                (site, 0, 0x1180), (caller, 0, 0x1200), ("__libc_start_call_main", 1, 0x2724a)], signal: 6)
    }
}

@Suite struct FingerprintTests {
    @Test("the same site keeps its fingerprint across addresses, build-ids, pids, tids, paths and hosts")
    func stableAcrossRuns() {
        let frames: [(String?, Int?, UInt64)] = [("crash_here", 0, 0x1189), ("level_two", 0, 0x11c0), ("main", 0, 0x1203)]
        let first = Fingerprint.of(Made.report(frames))
        var rebuilt = Made.report(frames, pid: 9999, tid: 10_001, slide: 0x1234_5000)
        rebuilt.images[0].buildID = "ffff"
        rebuilt.images[0].path = "/somewhere/else/bin/app"
        rebuilt.process.executable = "/somewhere/else/bin/segv_reraise"
        rebuilt.host.hostname = "other-host"
        rebuilt.id = "00000000-0000-4000-8000-000000000000"
        #expect(Fingerprint.of(rebuilt) == first)
        #expect(first.frames == ["crash_here", "level_two", "main"])
        #expect(first.algorithm == "crashwatch-1" && first.kind == "crash" && first.signal == "SIGSEGV" && first.program == "segv_reraise")
        #expect(first.value.utf8.count == 32 && first.value.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }

    @Test("another site, another signal or another kind is another fingerprint")
    func differences() {
        let site: [(String?, Int?, UInt64)] = [("crash_here", 0, 0x1189), ("main", 0, 0x1203)]
        let base = Fingerprint.of(Made.report(site)).value
        #expect(Fingerprint.of(Made.report([("other_site", 0, 0x1189), ("main", 0, 0x1203)])).value != base)
        #expect(Fingerprint.of(Made.report([("crash_here", 0, 0x1189), ("other_caller", 0, 0x1203)])).value != base)
        #expect(Fingerprint.of(Made.report(site, signal: 7)).value != base)
        var otherProgram = Made.report(site)
        otherProgram.process.executable = "/opt/demo/bin/other_program"
        #expect(Fingerprint.of(otherProgram).value != base)
        var hang = Made.report(site)
        hang.kind = .hang
        #expect(Fingerprint.of(hang).value != base)
        #expect(Fingerprint.of(hang).kind == "hang")
        var killed = Made.report(site)
        killed.kind = .abnormalExit
        killed.exit = ExitRecord(reason: "memory", source: "platform", evidence: nil)
        #expect(Fingerprint.of(killed).kind == "abnormalExit/memory")
        killed.exit?.reason = "signal"
        #expect(Fingerprint.of(killed).kind == "abnormalExit/signal")
        #expect(Fingerprint.of(killed).value != base)
    }

    @Test("machinery above the site is skipped: the abort chain, then the top three in-app frames")
    func machinerySkipped() {
        let aborted = Fingerprint.of(Made.abort(from: "check_invariant"))
        #expect(aborted.frames == ["check_invariant", "main"])
        #expect(aborted.signal == "SIGABRT")
        #expect(Fingerprint.of(Made.abort(from: "check_invariant")).value == aborted.value)
        #expect(Fingerprint.of(Made.abort(from: "other_check")).value != aborted.value)
        // Machinery in an in-app image (a statically linked runtime) is skipped too.
        let rust = Made.report([("std::panicking::panic_with_hook", 0, 0x100), ("core::panicking::panic_bounds_check", 0, 0x200),
                                ("core::option::Option<T>::unwrap", 0, 0x280),
                                ("app::lookup::h0123456789abcdef", 0, 0x300), ("app::pick", 0, 0x400), ("app::entry", 0, 0x500),
                                ("app::main", 0, 0x600)], signal: 6)
        #expect(Fingerprint.of(rust).frames == ["app::lookup", "app::pick", "app::entry"])
    }

    @Test("with no in-app frame, the top non-machinery frames; with none, the top frames; unnamed: image+offset")
    func fallbacks() {
        let library = Made.report([("abort", 1, 0x2645a), ("__libc_message", 1, 0x300), ("qsort_r", 1, 0x4000),
                                   ("__libc_start_call_main", 1, 0x2724a)], signal: 6)
        #expect(Fingerprint.of(library).frames == ["qsort_r", "__libc_start_call_main"])
        let onlyMachinery = Made.report([("raise", 1, 0x3c472), ("abort", 1, 0x2645a)], signal: 6)
        #expect(Fingerprint.of(onlyMachinery).frames == ["raise", "abort"])
        // A minimal report: no names; the pc in no image (a call through NULL) has no key at all.
        let minimal = Made.report([(nil, nil, 0), (nil, 0, 0x1189), (nil, 1, 0x2724a)])
        #expect(Fingerprint.of(minimal).frames == ["app+0x1189"])
        #expect(Fingerprint.of(Made.report([(nil, 0, 0x1189)], slide: 0x7000_0000)).value == Fingerprint.of(minimal).value)
        #expect(Fingerprint.of(Made.report([], signal: 9)).frames == [])
    }

    @Test("a handled-then-fatal crash is fingerprinted by its original fault; a hang by its main thread")
    func originalFaultAndHang() {
        var report = Made.report([("segv_handler", 0, 0x1500), ("__restore_rt", 1, 0x3c050), ("crash_here", 0, 0x1189)], signal: 6)
        let fault = Made.report([("crash_here", 0, 0x1189), ("main", 0, 0x1203)]).threads[0].frames
        report.signal.originalFault = OriginalFault(SignalInfo(signo: 11, code: 1, address: 0), tid: 100,
                                                    time: "2026-11-30T09:01:57.120Z", frames: fault)
        let fingerprint = Fingerprint.of(report)
        #expect(fingerprint.signal == "SIGSEGV" && fingerprint.frames == ["crash_here", "main"])
        var hang = Made.report([("poll", 1, 0x100), ("event_loop", 0, 0x2000), ("main", 0, 0x1203)], pid: 100)
        hang.kind = .hang
        hang.signal = .none
        hang.threads[0].crashed = false
        hang.threads.insert(ThreadRecord(tid: 101, name: "other", crashed: false, registers: [],
                                         frames: Made.report([("worker", 0, 0x3000)]).threads[0].frames), at: 0)
        #expect(Fingerprint.of(hang).frames == ["event_loop", "main"])
        #expect(Fingerprint.of(hang).signal == "none")
    }

    @Test("names lose what varies across rebuilds and signature edits", arguments: [
        ("crash_here", "crash_here"),
        ("crash_here.isra.0", "crash_here"),
        ("crash_here.constprop.0.isra.0", "crash_here"),
        ("crash_here.part.0", "crash_here"),
        ("crash_here.cold", "crash_here"),
        ("crash_here.llvm.1234567890", "crash_here"),
        ("main.partition", "main.partition"),
        ("runtime.raise.abi0", "runtime.raise"),
        ("app::lookup::h0123456789abcdef", "app::lookup"),
        ("crashwatch_demo::Widget::explode(int)", "crashwatch_demo::Widget::explode"),
        ("crashwatch_demo::Widget::explode(int) const", "crashwatch_demo::Widget::explode"),
        ("demo::f(int) [clone .isra.0]", "demo::f"),
        ("std::vector<int, std::allocator<int> >::at(unsigned long)", "std::vector<int, std::allocator<int> >::at"),
        ("(anonymous namespace)::helper(char const*)", "(anonymous namespace)::helper"),
        ("demo::Functor::operator()(int)", "demo::Functor::operator()"),
        ("demo::Functor::operator()", "demo::Functor::operator()"),
        ("demo::operator<<(std::ostream&, demo::X const&)", "demo::operator<<"),
        ("main.(*Server).handle", "main.(*Server).handle"),
        ("swift_trap.crashHere(Swift.Array<Swift.Int>, Swift.Int) -> Swift.Int", "swift_trap.crashHere"),
        ("app.load() async throws -> Swift.Dictionary<Swift.String, Swift.Int>", "app.load"),
        ("closure #1 (Swift.Int) -> () in app.run(Swift.Int) -> ()", "closure #1 (Swift.Int) -> () in app.run"),
        ("core::ptr::write_volatile<u64>", "core::ptr::write_volatile<u64>"),
        ("  spaced  ", "spaced"),
    ])
    func names(name: String, expected: String) {
        #expect(FingerprintRules.normalizedName(name) == expected)
    }

    @Test("the machinery table", arguments: [
        ("__restore_rt", true), ("abort", true), ("__GI_raise", true), ("__pthread_kill_implementation", true),
        ("__assert_fail", true), ("std::terminate", true), ("__cxxabiv1::__terminate", true),
        ("__gnu_cxx::__verbose_terminate_handler", true), ("__cxa_throw", true), ("std::__throw_out_of_range_fmt", true),
        ("std::panicking::panic_with_hook", true), ("core::panicking::panic_fmt", true), ("__rustc::rust_begin_unwind", true),
        ("std::sys::backtrace::__rust_end_short_backtrace<std::panicking::panic_handler::{closure_env#0}, !>", true),
        ("core::result::unwrap_failed", true), ("core::option::Option<T>::expect", true), ("core::option::Option<T>::map", false),
        ("std::process::abort", true), ("panic_abort::__rust_start_panic", true),
        ("runtime.sigpanic", true), ("runtime.throw", true), ("runtime.fatalpanic", true), ("runtime.gopanic", true),
        ("runtime.panicmem", true), ("runtime.dieFromSignal", true), ("runtime.mapassign", false),
        ("Swift._assertionFailure", true), ("Swift.fatalError", true),
        ("closure #1 (Swift.UnsafeBufferPointer<Swift.UInt8>) -> () in Swift._assertionFailure", true),
        ("closure #1 () -> () in app.run", false),
        ("crash_here", false), ("main", false), ("abort_transaction", false), ("main.crashHere", false),
    ])
    func machinery(name: String, expected: Bool) {
        #expect(FingerprintRules.isMachinery(name) == expected)
    }

    @Test("SHA-256 gives FIPS 180-4's test vectors")
    func sha256() {
        #expect(Hex.string(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Hex.string(SHA256.digest(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.string(SHA256.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Hex.string(SHA256.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1000)))
            == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    /// Pinned values of `crashwatch-1`. If one fails, the algorithm changed: give it a new name
    /// (`Fingerprint.algorithm`, the README and the schema's description), then pin the new values.
    @Test("crashwatch-1 is pinned: a change of the algorithm must change its name")
    func pinned() {
        #expect(Fingerprint.algorithm == "crashwatch-1")
        #expect(Fingerprint.value(kind: "crash", signal: "SIGSEGV", program: "app", frames: ["crash_here", "main"]) == "bcc741e6f540c431a5810cd611db8af3")
        #expect(Fingerprint.of(Made.abort(from: "check_invariant")).value == "bbb77534e2cc585e284447fbe8cac582")
        #expect(SampleReport.report.fingerprint?.value == "40f5621a2dd0a85730acbdd1a01bdc0a")
        #expect(SampleReport.report.fingerprint?.frames == ["store_byte", "crash_here", "main"])
    }
}
