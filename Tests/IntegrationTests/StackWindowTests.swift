// StackWindowTests.swift — frames larger than the stack window a capture copies from the stack pointer
// (--max-stack-bytes, 1 MiB by default): the top of the stack is captured too, so a frame larger than the window is
// stepped over with its CFA from CFI; where the caller's return address is in neither part, the unwind stops saying
// "stack capture limit" and a soft error names --max-stack-bytes. (frame_2m and frame_16m at their ARGS, every frame
// against gdb on the core, are in RealToolchainTests.)
import CrashwatchTestSupport
import Foundation
import Testing

@Suite(.serialized) struct StackWindowTests {
    /// The crashed thread's functions, its stop reason and the report's soft-error messages of a frame_2m run.
    private func crash(_ arguments: [String], options: [String] = []) throws -> (functions: [String], stop: String?, errors: [String]) {
        let executable = Paths.fixture("frame_2m")
        try #require(FileManager.default.isExecutableFile(atPath: executable), "\(executable) is not built: run make fixtures")
        let (result, reports, _) = try runCapturing(executable, arguments, options: options)
        let report = try #require(reports.first, "no report; stderr: \(result.stderr.suffix(2000))")
        let crashed = try #require(report.crashedThreads.first, "no crashed thread")
        let errors = (report.json["softErrors"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        return (report.functions(of: crashed), crashed["unwindStopReason"] as? String, errors)
    }

    @Test("two 2 MiB frames at the default window: the unwind stops at the outer one's return address, saying stack capture limit and naming --max-stack-bytes")
    func beyondTheWindowAndTheTop() throws {
        let (functions, stop, errors) = try crash(["again"])
        #expect(functions == ["crash_here", "big_frame"], "\(functions)")
        #expect(stop == "stack capture limit (1048576 bytes) reached", "\(stop ?? "no stop reason")")
        #expect(errors.contains { $0.contains("--max-stack-bytes") && $0.contains("1048576 bytes") }, "\(errors)")
    }

    @Test("two 2 MiB frames with --max-stack-bytes 8M: every frame, and no soft error about the stack")
    func aLargerWindow() throws {
        let (functions, stop, errors) = try crash(["again"], options: ["--max-stack-bytes", "8M"])
        #expect(Array(functions.prefix(6)) == ["crash_here", "big_frame", "big_frame", "level_one", "main", "__libc_start_call_main"], "\(functions)")
        #expect(stop == "end of stack", "\(stop ?? "no stop reason")")
        #expect(!errors.contains { $0.contains("--max-stack-bytes") }, "\(errors)")
    }

    @Test("one 2 MiB frame at the default window: every frame, found through the stack's captured top, and no soft error about the stack")
    func throughTheTop() throws {
        let (functions, stop, errors) = try crash([])
        #expect(Array(functions.prefix(5)) == ["crash_here", "big_frame", "level_one", "main", "__libc_start_call_main"], "\(functions)")
        #expect(stop == "end of stack", "\(stop ?? "no stop reason")")
        #expect(!errors.contains { $0.contains("--max-stack-bytes") }, "\(errors)")
    }
}
