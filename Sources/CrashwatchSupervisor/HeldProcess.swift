// HeldProcess.swift — a crashed process held stopped for its capture, as a scoped resource: a consuming
// `release()` on the normal path, a deinit that lets every thread go on any other (crashpad's
// ScopedPtraceAttach, in Swift). A supervisor bug must never leave the app stopped forever.
import CrashwatchModel
import CrashwatchSystem

/// A crashed process held stopped for its capture. Letting it go is the only way to end this value:
/// `release()` on the normal path, and — should anything between the stop and the release throw — the
/// deinit, so no path leaves a thread stopped.
struct HeldProcess: ~Copyable {
    let stopped: StoppedProcess
    /// The signal the crashed thread dies of; nil for a hang snapshot, whose threads all go on as they were.
    let fatalSignal: Signal?
    /// The ptrace options the threads were seized with.
    let options: UInt
    /// Whether letting go ends the tracing too (PTRACE_DETACH): a process seized only for a snapshot. Else the
    /// threads stay traced (the supervisor's own processes).
    let detaches: Bool
    private var released = false

    init(_ stopped: StoppedProcess, fatalSignal: Signal?, options: UInt, detaches: Bool = false) {
        self.stopped = stopped
        self.fatalSignal = fatalSignal
        self.options = options
        self.detaches = detaches
    }

    /// With a fatal signal: delivers it to the crashed thread and leaves every other thread in its stop,
    /// returned, for the kernel to take: the group exit (or the core dump) sends each a SIGKILL, which ends
    /// a ptrace stop, so none runs another instruction of its own after the capture — resumed, they could
    /// (a handler, a few microseconds of code) before the kill landed. The caller lets them go should the
    /// crashed thread stop again instead of dying (`letOthersGo`). The others lose their exit stop first
    /// (`PTRACE_SETOPTIONS`, about 0.5 µs each on a thread stopped this long): each would be one more round
    /// trip through the tracer thread, and 64 of them right after a capture are what another traced
    /// process's next stop waits behind; their ends are reported all the same. After the fatal signal would
    /// be too late: the crashed thread, let go, kills them before most are reached. Without a fatal signal
    /// (a hang snapshot, a death seen at the exit stops), every thread goes on as it was and nothing is
    /// returned.
    consuming func release() throws(SystemError) -> StoppedProcess? {
        released = true
        guard let fatalSignal else {
            try Self.letGo(stopped, except: nil, detaching: detaches)
            return nil
        }
        let dying = Ptrace.withoutExitStop(options)
        for tid in stopped.stops.keys where tid != stopped.crashedTID {
            try? Ptrace.setOptions(tid, dying)  // gone meanwhile: its end comes all the same
        }
        do {
            try Ptrace.cont(stopped.crashedTID, signal: fatalSignal.number)
        } catch where error.isNoSuchProcess {
            // Killed meanwhile: so are the others.
        } catch {
            try Self.letGo(stopped, except: nil)
            throw error
        }
        return stopped
    }

    deinit {
        if !released { try? Self.letGo(stopped, except: nil, detaching: detaches) }
    }

    /// Lets every thread but `crashedTID` go on from the stop it was held in: pending signals delivered,
    /// group-stops kept. Threads gone or taken by a kill meanwhile are passed over.
    static func letOthersGo(_ stopped: StoppedProcess) throws(SystemError) {
        try letGo(stopped, except: stopped.crashedTID)
    }

    /// `detaching`: each thread is detached from the stop it was held in instead, its pending signal delivered
    /// (a thread in a group-stop stays stopped, untraced, as it was before).
    private static func letGo(_ stopped: StoppedProcess, except skipped: Int32?, detaching: Bool = false) throws(SystemError) {
        var failure: SystemError?
        func attempt(_ body: () throws(SystemError) -> Void) {
            do { try body() } catch where error.isNoSuchProcess {
                // Killed meanwhile: its exit is reported next.
            } catch {
                if failure == nil { failure = error }
            }
        }
        for (tid, stop) in stopped.stops where tid != skipped {
            if detaching {
                let signal: Int32 = if case .signalDelivery(let number) = stop { number } else { 0 }
                attempt { () throws(SystemError) in try Ptrace.detach(tid, signal: signal) }
                continue
            }
            switch stop {
            case .signalDelivery(let signal): attempt { () throws(SystemError) in try Ptrace.cont(tid, signal: signal) }
            case .event: attempt { () throws(SystemError) in try Ptrace.cont(tid) }
            case .groupStop: attempt { () throws(SystemError) in try Ptrace.listen(tid) }
            }
        }
        if let failure { throw failure }
    }
}
