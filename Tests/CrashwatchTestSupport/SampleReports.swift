// SampleReports.swift — hand-built reports the tests share: `SampleReport`, whose encoding is the golden file
// Fixtures/example-report.json (model, journal and shipping tests), and `ExportFixture`, the report every
// rendered page and line is known for (rendering tests). It holds, for the rendering tests: a SIGABRT raised
// by a handler after a SIGSEGV (an original fault with its own frames and registers), a crashed thread whose
// top frame is a two-deep inline chain, a worker thread found partly by frame pointer and stack scan, one
// in-app image and one system image with package metadata, an app record, a soft error, an allowed
// environment variable and a command line argument that needs quoting.
import CrashwatchModel
import Foundation

/// A complete, hand-built report: x86-64, a re-raised SIGSEGV with its original fault, two threads (one with
/// an inline frame), two images. Deterministic, so its encoding is the golden file Fixtures/example-report.json.
public enum SampleReport {
    /// Where the example report lives: the encoder's output for `report`.
    public static let examplePath = Paths.exampleReport

    /// The bytes of Fixtures/example-report.json as committed (empty when it cannot be read).
    public static let exampleBytes: [UInt8] = FileManager.default.contents(atPath: examplePath).map { Array($0) } ?? []

    /// x86-64 general-purpose registers in `user_regs_struct` order.
    public static func registers(rip: UInt64, rsp: UInt64, rbp: UInt64) -> [RegisterValue] {
        let names = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
                     "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs", "fs_base", "gs_base"]
        return names.enumerated().map { offset, name in
            let value: UInt64 = switch name {
            case "rip": rip
            case "rsp": rsp
            case "rbp": rbp
            case "eflags": 0x10246
            case "cs": 0x33
            case "ss": 0x2b
            case "fs_base": 0x7f3a_9c1f_e740
            case "ds", "es", "fs", "gs", "gs_base": 0
            default: UInt64(offset) * 0x1111
            }
            return RegisterValue(name, Address(value))
        }
    }

    public static let exeBase: UInt64 = 0x5581_2a40_0000
    public static let libcBase: UInt64 = 0x7f3a_9c21_4000
    public static let crashPC: UInt64 = exeBase + 0x1189

    /// The crashed thread's stack: an inline frame and its caller at the same pc, then callers into libc.
    public static let mainFrames: [FrameRecord] = [
        FrameRecord(index: 0, address: Address(crashPC), imageIndex: 0, imageOffset: 0x1189, symbol: "store_byte",
                    function: "store_byte", symbolOffset: 0x0, file: "/src/demo/segv_reraise.c", line: 31, column: 12,
                    inlined: true, how: .inline),
        FrameRecord(index: 1, address: Address(crashPC), imageIndex: 0, imageOffset: 0x1189, symbol: "crash_here",
                    function: "crash_here", symbolOffset: 0x19, file: "/src/demo/segv_reraise.c", line: 38, column: 5,
                    how: .context),
        FrameRecord(index: 2, address: Address(exeBase + 0x1203), imageIndex: 0, imageOffset: 0x1203, symbol: "main",
                    function: "main", symbolOffset: 0x4a, file: "/src/demo/segv_reraise.c", line: 52, column: 3, how: .cfi),
        FrameRecord(index: 3, address: Address(libcBase + 0x2724a), imageIndex: 1, imageOffset: 0x2724a,
                    symbol: "__libc_start_call_main", function: "__libc_start_call_main", symbolOffset: 0x7a, how: .cfi),
        FrameRecord(index: 4, address: Address(libcBase + 0x27305), imageIndex: 1, imageOffset: 0x27305,
                    symbol: "__libc_start_main_impl", function: "__libc_start_main_impl", symbolOffset: 0x85, how: .cfi),
        FrameRecord(index: 5, address: Address(exeBase + 0x10a1), imageIndex: 0, imageOffset: 0x10a1, symbol: "_start",
                    function: "_start", symbolOffset: 0x21, how: .cfi),
    ]

    /// A worker thread blocked in libc, with a C++ frame (raw and demangled names differ) and a scanned frame.
    public static let workerFrames: [FrameRecord] = [
        FrameRecord(index: 0, address: Address(libcBase + 0x8ae96), imageIndex: 1, imageOffset: 0x8ae96,
                    symbol: "__futex_abstimed_wait_common", function: "__futex_abstimed_wait_common",
                    symbolOffset: 0x106, how: .context),
        FrameRecord(index: 1, address: Address(libcBase + 0x8d1a0), imageIndex: 1, imageOffset: 0x8d1a0,
                    symbol: "pthread_cond_wait@@GLIBC_2.3.2", function: "pthread_cond_wait", symbolOffset: 0x230,
                    how: .cfi),
        FrameRecord(index: 2, address: Address(exeBase + 0x1310), imageIndex: 0, imageOffset: 0x1310,
                    symbol: "_ZN4demo7Session5flushEv", function: "demo::Session::flush()", symbolOffset: 0x40,
                    file: "/src/demo/session.cc", line: 77, how: .framePointer),
        FrameRecord(index: 3, address: Address(libcBase + 0x89134), imageIndex: 1, imageOffset: 0x89134,
                    symbol: "start_thread", function: "start_thread", symbolOffset: 0x2f4, how: .scan),
    ]

    /// The whole sample report.
    public static let report: CrashReport = {
        let original = OriginalFault(
            SignalInfo(signo: 11, code: 1, address: 0), tid: 4242, time: "2026-11-30T09:01:57.120Z",
            registers: registers(rip: crashPC, rsp: 0x7ffd_5e3c_a0f0, rbp: 0x7ffd_5e3c_a110),
            frames: Array(mainFrames[0...2]))
        let final = SignalInfo(signo: 11, code: -6, pid: 4242, uid: 1000)
        var report = CrashReport(
            id: "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13",
            kind: .crash,
            captureTime: RFC3339.format(nanosecondsSinceEpoch: 1_796_029_317_123_456_789),
            captureDurationMs: 18.75,
            crashwatchVersion: "0.1.0",
            signal: SignalRecord(final, originalFault: original),
            process: ProcessRecord(
                pid: 4242, ppid: 4200, executable: "/opt/demo/bin/segv_reraise",
                commandLine: ["/opt/demo/bin/segv_reraise", "--mode", "write \"quoted\""], cwd: "/srv/demo",
                uid: 1000, gid: 1000, startTime: "2026-11-30T09:01:55.004Z", comm: "segv_reraise",
                cgroup: "/system.slice/demo.service", systemdUnit: "demo.service",
                systemdInvocationID: "0b6f1c6e2d8a4f0e9e3f5a7c1d2b4e6f",
                app: AppRecord(name: "demo", version: "2.4.1", release: "2.4.1+g1a2b3c"),
                environment: ["LANG": "C.UTF-8", "DEMO_MODE": "production"]),
            host: HostRecord(hostname: "build-01", kernelRelease: "6.1.0-28-amd64",
                             kernelVersion: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
                             osName: "Debian GNU/Linux", osVersion: "12", architecture: "x86_64",
                             bootID: "8c1d0f0e-3a51-4b8e-9f2e-6e1c2d3b4a59"),
            threads: [
                ThreadRecord(tid: 4242, name: "segv_reraise", crashed: true,
                             registers: registers(rip: crashPC, rsp: 0x7ffd_5e3c_a0a0, rbp: 0x7ffd_5e3c_a110),
                             frames: mainFrames, unwindStopReason: "end of stack"),
                ThreadRecord(tid: 4243, name: "worker", crashed: false,
                             registers: registers(rip: libcBase + 0x8ae96, rsp: 0x7f3a_9b9f_ed80, rbp: 0),
                             frames: workerFrames, unwindStopReason: "no unwind info"),
            ],
            images: [SampleImages.executable("/opt/demo/bin/segv_reraise", base: exeBase),
                     SampleImages.libc(base: libcBase)],
            diagnostics: Diagnostics(ptraceScope: 1, seccompMode: 0, captureErrors: 1),
            softErrors: [SoftError(stage: "unwind", tid: 4243, message: "libunwind: no unwind info for 0x7f3a9c29d134")])
        report.annotations = ["region": "eu-west-1", "request_id": "7f3a-19", "session_token": "<redacted>"]
        report.breadcrumbs = [
            BreadcrumbRecord(time: "2026-11-30T09:01:56.214Z", level: "info", message: "GET /orders/42"),
            BreadcrumbRecord(time: "2026-11-30T09:01:57.019Z", level: "warning", message: "cache miss for user 42"),
        ]
        // One table of the header's default sizes: 72 + 64 × 328 + 64 × 152 bytes.
        report.diagnostics.annotationBytes = 30792
        return report.fingerprinted()
    }()
}

/// The fixed report and variations of it the tests render.
public enum ExportFixture {
    /// Where the main executable is mapped.
    public static let exeBase: UInt64 = 0x5581_2a40_0000
    /// Where libc is mapped.
    public static let libcBase: UInt64 = 0x7f3a_9c21_4000
    /// The pc of the crashed thread: one address shared by the inline chain and its outer function.
    public static let crashPC: UInt64 = exeBase + 0x1189

    /// The crashed thread's stack: `parse_digit` inlined into `parse_amount` inlined into `handle_request`, then
    /// `main`, libc's start code (one frame unsymbolized), and `_start`.
    public static let crashedFrames: [FrameRecord] = [
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
    public static let workerFrames: [FrameRecord] = [
        FrameRecord(index: 0, address: Address(libcBase + 0x8ae96), imageIndex: 1, imageOffset: 0x8ae96,
                    function: "__futex_abstimed_wait_common", how: .context),
        FrameRecord(index: 1, address: Address(exeBase + 0x1310), imageIndex: 0, imageOffset: 0x1310,
                    symbol: "_ZN4shop5Queue3popEv", function: "shop::Queue::pop()", file: "/src/shop/queue.cc",
                    line: 77, how: .framePointer),
        FrameRecord(index: 2, address: Address(libcBase + 0x89134), imageIndex: 1, imageOffset: 0x89134,
                    function: "start_thread", how: .scan),
    ]

    /// Seven registers: enough for two full lines of three and a last line of one.
    public static func registers(rip: UInt64, rsp: UInt64) -> [RegisterValue] {
        [RegisterValue("rax", 0), RegisterValue("rbx", 0x7ffd_5e3c_a1f8), RegisterValue("rcx", 0x10),
         RegisterValue("rsp", Address(rsp)), RegisterValue("rip", Address(rip)), RegisterValue("eflags", 0x10246),
         RegisterValue("orig_rax", 0xffff_ffff_ffff_ffff)]
    }

    /// The whole report.
    public static let report: CrashReport = {
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
            images: [SampleImages.executable("/opt/shop/bin/checkout", base: exeBase),
                     SampleImages.libc(base: libcBase, package: PackageRecord(type: "deb", name: "libc6",
                                                                              version: "2.36-9+deb12u9", architecture: "amd64"))],
            diagnostics: Diagnostics(ptraceScope: 1, seccompMode: 0, captureErrors: 1),
            softErrors: [SoftError(stage: "unwind", tid: 4243, message: "libunwind: no unwind info for 0x7f3a9c29d134")])
    }()

    /// An earlier crash of another program: a SIGSEGV at 0x0, pid 987, a longer path, and no in-app image.
    public static let olderReport: CrashReport = {
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

/// The two images both sample reports hold: an in-app main executable and the system's libc.
private enum SampleImages {
    /// The main executable at `path`, mapped at `base`.
    static func executable(_ path: String, base: UInt64) -> ImageRecord {
        ImageRecord(path: path, buildID: "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3", loadAddress: Address(base), size: 0x5010,
                    inApp: true, architecture: "x86_64", isMainExecutable: true)
    }

    /// libc, mapped at `base`, with the package it came from if given.
    static func libc(base: UInt64, package: PackageRecord? = nil) -> ImageRecord {
        ImageRecord(path: "/usr/lib/x86_64-linux-gnu/libc.so.6", buildID: "c047672cae7964324658491e7dee26748ae5d2f8",
                    loadAddress: Address(base), size: 0x1bd000, inApp: false, architecture: "x86_64", package: package)
    }
}
