// SnapshotReports.swift — the one way a running process crashwatch does not trace becomes a `snapshot` report
// (`crashwatch snapshot PID`): its threads held (LiveSeizure), raw-captured by the crash path's own capture
// (LiveCapture, a capture of kind `snapshot`: no signal, every thread's state), let go, then processed by the
// confined worker as a crash of that process would be (WorkerLaunch: the same identity and confinement) and
// written like a core's report (CoreReports). No minimal report is made durable before the release: the process
// is not dying, and should crashwatch die the process loses nothing — there is simply no report.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSpool
import CrashwatchSupervisor
import CrashwatchSystem

/// Snapshots of live processes.
public enum SnapshotReports {
    /// How long threads may take to stop, from their interrupts: one that has not by then is in a sleep no signal ends (a stuck
    /// FUSE server, a vfork() wait) and is listed as not stopped, while the others are held no longer.
    public static let stopNanoseconds: Int64 = 1_000_000_000
    /// How long the capture and the worker's processing may take, from the first seize.
    public static let processingNanoseconds: Int64 = 30_000_000_000
    /// How long, after the release, threads that had not stopped are waited for, to be let go as they stop.
    public static let lateStopNanoseconds: Int64 = 1_000_000_000

    /// What a snapshot was asked for.
    public struct Request: Sendable {
        /// The process.
        public var pid: Int32
        /// The threads whose registers and stacks are captured; nil for all (all are stopped alike).
        public var threads: Set<Int32>?
        /// How the capture and its processing are done (stack caps, symbolication, app roots…), as for a crash.
        public var options: CaptureOptions
        /// Where the report goes: the spool, a file, or back to the caller for standard output.
        public var destination: CoreReports.Destination
        /// The debug-file cache directory the worker may use (as `run`'s: `--debug-cache`); nil for none.
        public var debugCache: String?

        /// A request for a snapshot of `pid` (see the properties).
        public init(pid: Int32, threads: Set<Int32>?, options: CaptureOptions, destination: CoreReports.Destination, debugCache: String?) {
            self.pid = pid
            self.threads = threads
            self.options = options
            self.destination = destination
            self.debugCache = debugCache
        }
    }

    /// Why no snapshot was taken.
    public enum Failure: Error, Sendable {
        /// The process could not be held (no such process, refused, traced already).
        case seize(SeizeFailure)
        /// It was held, but the capture could not be made (it was let go).
        case capture(SystemError)
        /// The report could not be written.
        case write(String)
    }

    /// Takes the snapshot `request` asks for and writes its report. `pause` is the test hook of
    /// `LiveSeizure.seize`; `released` is called as soon as the process is let go (or was never held). The
    /// report's path (or bytes, for standard output), and why it is not the worker's complete one (nil when it is).
    public static func take(_ request: Request, pause: (LiveSeizure.Stage) -> Void = { _ in },
                            released: () -> Void = {}) throws(Failure) -> WrittenCoreReport {
        let pid = request.pid
        let crash = DetectedCrash.snapshot(of: pid)
        // The process record on the helper thread while the threads are being stopped.
        let readAhead = LiveCapture.readAhead(crash, options: request.options)
        let start = Clock.monotonicNanoseconds()
        let deadline = start + processingNanoseconds
        let seized: SeizedProcess
        do throws(SeizeFailure) {
            seized = try LiveSeizure.seize(pid, stopNanoseconds: stopNanoseconds, captureDeadline: deadline,
                                           only: request.threads, pause: pause)
        } catch {
            released()
            throw .seize(error)
        }
        let heldSince = seized.heldSince
        // Held: the capture, then the release, whatever the capture did (the seizure's deinit on a throw).
        let captured: CapturedCrash
        do throws(SystemError) {
            captured = try LiveCapture.begin(crash, stopped: seized.stopped, options: request.options, deadlineNanoseconds: deadline,
                                             readAhead: readAhead).copyMemory()
        } catch {
            _ = try? seized.release()
            released()
            throw .capture(error)
        }
        let late = (try? seized.release()) ?? []
        let holdNanoseconds = Clock.monotonicNanoseconds() - heldSince
        released()
        _ = LiveSeizure.detachLate(late, deadline: Clock.monotonicNanoseconds() + lateStopNanoseconds)

        var capture = captured.capture
        capture.holdDurationMs = Double(holdNanoseconds / 1_000) / 1_000
        var sighting: GroupSighting?
        let identity = WorkerLaunch.identity(for: capture.credentials)
        let (bytes, failure) = CoreReports.process(
            capture, file: { () throws(SystemError) in
                try captured.complete()
                try MemoryFile.seal(captured.file)
                return captured.file
            }, imageFiles: captured.imageFiles, identity: identity, debuginfodURLs: request.options.debuginfodURLs,
            cache: WorkerLaunch.debugCache(request.debugCache, for: identity), deadlineNanoseconds: deadline,
            crashwatchVersion: request.options.crashwatchVersion, sighting: { sighting = $0 })
        do throws(CoreReportFailure) {
            return try CoreReports.write(bytes, of: capture, to: request.destination, failure: failure, sighting: sighting,
                                         restricted: capture.credentials?.isPrivileged ?? false)
        } catch {
            switch error {
            case .notACore(let message), .cannotWrite(let message): throw .write(message)
            }
        }
    }
}
