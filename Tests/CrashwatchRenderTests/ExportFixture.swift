// ExportFixture.swift — a fixed, hand-built report for the rendering tests, so every rendered page and line is
// known exactly. It holds: a SIGABRT raised by a handler after a SIGSEGV (an original fault with its own frames
// and registers), a crashed thread whose top frame is a two-deep inline chain, a worker thread found partly by
// frame pointer and stack scan, one in-app image and one system image with package metadata, an app record, a
// soft error, an allowed environment variable and a command line argument that needs quoting.
import CrashwatchModel

/// The fixed report and variations of it the tests render.
enum ExportFixture {
    /// Where the main executable is mapped.
    static let exeBase: UInt64 = 0x5581_2a40_0000
    /// Where libc is mapped.
    static let libcBase: UInt64 = 0x7f3a_9c21_4000
    /// The pc of the crashed thread: one address shared by the inline chain and its outer function.
    static let crashPC: UInt64 = exeBase + 0x1189

    /// The crashed thread's stack: `parse_digit` inlined into `parse_amount` inlined into `handle_request`, then
    /// `main`, libc's start code (one frame unsymbolized), and `_start`.
    static let crashedFrames: [FrameRecord] = [
        FrameRecord(index: 0, address: Address(crashPC), imageIndex: 0, imageOffset: 0x1189, function: "parse_digit",
                    file: "/src/shop/parse.c", line: 12, column: 9, inlined: true, how: .inline),
        FrameRecord(index: 1, address: Address(crashPC), imageIndex: 0, imageOffset: 0x1189, function: "parse_amount",
                    file: "/src/shop/parse.c", line: 40, column: 5, inlined: true, how: .inline),
        FrameRecord(index: 2, address: Address(crashPC), imageIndex: 0, imageOffset: 0x1189, symbol: "handle_request",
                    function: "handle_request", symbolOffset: 0x19, file: "/src/shop/server.c", line: 88, how: .context),
        FrameRecord(index: 3, address: Address(exeBase + 0x1203), imageIndex: 0, imageOffset: 0x1203, symbol: "main",
                    function: "main", symbolOffset: 0x4a, file: "/src/shop/main.c", line: 17, how: .cfi),
        FrameRecord(index: 4, address: Address(libcBase + 0x2724a), imageIndex: 1, imageOffset: 0x2724a,
                    symbol: "__libc_start_call_main", function: "__libc_start_call_main", symbolOffset: 0x7a, how: .cfi),
        FrameRecord(index: 5, address: Address(libcBase + 0x27305), imageIndex: 1, imageOffset: 0x27305, how: .cfi),
        FrameRecord(index: 6, address: Address(exeBase + 0x10a1), imageIndex: 0, imageOffset: 0x10a1, symbol: "_start",
                    function: "_start", symbolOffset: 0x21, how: .cfi),
    ]

    /// A worker thread waiting in libc, under a C++ frame found by frame pointer and a frame found by scanning.
    static let workerFrames: [FrameRecord] = [
        FrameRecord(index: 0, address: Address(libcBase + 0x8ae96), imageIndex: 1, imageOffset: 0x8ae96,
                    function: "__futex_abstimed_wait_common", how: .context),
        FrameRecord(index: 1, address: Address(exeBase + 0x1310), imageIndex: 0, imageOffset: 0x1310,
                    symbol: "_ZN4shop5Queue3popEv", function: "shop::Queue::pop()", file: "/src/shop/queue.cc",
                    line: 77, how: .framePointer),
        FrameRecord(index: 2, address: Address(libcBase + 0x89134), imageIndex: 1, imageOffset: 0x89134,
                    function: "start_thread", how: .scan),
    ]

    /// Seven registers: enough for two full lines of three and a last line of one.
    static func registers(rip: UInt64, rsp: UInt64) -> [RegisterValue] {
        [RegisterValue("rax", 0), RegisterValue("rbx", 0x7ffd_5e3c_a1f8), RegisterValue("rcx", 0x10),
         RegisterValue("rsp", Address(rsp)), RegisterValue("rip", Address(rip)), RegisterValue("eflags", 0x10246),
         RegisterValue("orig_rax", 0xffff_ffff_ffff_ffff)]
    }

    /// The whole report.
    static let report: CrashReport = {
        let original = OriginalFault(SignalInfo(signo: 11, code: 1, address: 0x10), tid: 4242,
                                     time: "2026-11-30T09:01:57.120Z",
                                     registers: [RegisterValue("rip", Address(crashPC)), RegisterValue("rsp", 0x7ffd_5e3c_a0f0)],
                                     frames: Array(crashedFrames[0...2]))
        return CrashReport(
            id: "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13",
            kind: .crash,
            captureTime: "2026-11-30T09:01:57.123Z",
            captureDurationMs: 18.75,
            crashwatchVersion: "0.1.0",
            signal: SignalRecord(SignalInfo(signo: 6, code: -6, pid: 4242, uid: 1000), originalFault: original),
            process: ProcessRecord(
                pid: 4242, ppid: 4200, executable: "/opt/shop/bin/checkout",
                commandLine: ["/opt/shop/bin/checkout", "--config", "/etc/shop/checkout.toml", "--banner", "it's open"],
                cwd: "/srv/shop", uid: 1000, gid: 1000, startTime: "2026-11-30T09:01:55.004Z", comm: "checkout",
                cgroup: "/system.slice/checkout.service", systemdUnit: "checkout.service",
                app: AppRecord(name: "checkout", version: "3.1.0", release: "3.1.0+g1a2b3c"),
                environment: ["LANG": "C.UTF-8"]),
            host: HostRecord(hostname: "build-01", kernelRelease: "6.1.0-28-amd64",
                             kernelVersion: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
                             osName: "Debian GNU/Linux", osVersion: "12", architecture: "x86_64", bootID: nil),
            threads: [
                ThreadRecord(tid: 4242, name: "checkout", crashed: true,
                             registers: registers(rip: crashPC, rsp: 0x7ffd_5e3c_a0a0), frames: crashedFrames,
                             unwindStopReason: "end of stack"),
                ThreadRecord(tid: 4243, name: "worker", crashed: false,
                             registers: registers(rip: libcBase + 0x8ae96, rsp: 0x7f3a_9b9f_ed80), frames: workerFrames,
                             unwindStopReason: "no unwind info"),
            ],
            images: [
                ImageRecord(path: "/opt/shop/bin/checkout", buildID: "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3",
                            loadAddress: Address(exeBase), size: 0x5010, inApp: true, architecture: "x86_64",
                            isMainExecutable: true),
                ImageRecord(path: "/usr/lib/x86_64-linux-gnu/libc.so.6",
                            buildID: "c047672cae7964324658491e7dee26748ae5d2f8", loadAddress: Address(libcBase),
                            size: 0x1bd000, inApp: false, architecture: "x86_64",
                            package: PackageRecord(type: "deb", name: "libc6", version: "2.36-9+deb12u9", architecture: "amd64")),
            ],
            diagnostics: Diagnostics(ptraceScope: 1, seccompMode: 0, captureErrors: 1),
            softErrors: [SoftError(stage: "unwind", tid: 4243, message: "libunwind: no unwind info for 0x7f3a9c29d134")])
    }()

    /// An earlier crash of another program: a SIGSEGV at 0x0, pid 987, a longer path, and no in-app image.
    static let olderReport: CrashReport = {
        var report = ExportFixture.report
        report.id = "00aa11bb-5c6d-4e7f-8a9b-0c1d2e3f4a5b"
        report.captureTime = "2026-11-29T23:59:59.999Z"
        report.process.pid = 987
        report.process.executable = "/usr/local/libexec/shop/reindex"
        report.process.app = nil
        report.signal = SignalRecord(SignalInfo(signo: 11, code: 1, address: 0))
        report.images = report.images.map { var image = $0; image.inApp = false; return image }
        return report
    }()
}
