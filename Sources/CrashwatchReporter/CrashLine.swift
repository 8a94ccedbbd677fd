// CrashLine.swift — the one-line summaries of a crash, a hang, a snapshot or an abnormal exit crashwatch prints to
// stderr (the program's own stream, which the operator sees beside the program's last words).
import CrashwatchModel
import CrashwatchSupervisor
import CrashwatchSystem

/// The one-line summaries crashwatch prints to stderr.
public enum CrashLine {
    /// `crashwatch: ./app[1234] crashed: SIGSEGV (SEGV_MAPERR) at 0x0, thread 1236 "worker"`.
    public static func crashed(_ crash: DetectedCrash) -> String {
        var line = "crashwatch: \(crash.executable)[\(crash.pid)] crashed: \(faultText(crash.signal)), thread \(crash.crashedThreadID)"
        if let name = crash.crashedThreadName { line += " \"\(name)\"" }
        if let original = crash.originalFault {
            line += "; original fault: \(faultText(original.signal)), thread \(original.tid)"
        }
        return line
    }

    /// `crashwatch: ./app[1234] killed by SIGKILL (abnormal exit, not a crash; the OOM killer: memory cgroup …)`.
    public static func abnormalExit(_ exit: AbnormalExit, reason: ExitRecord) -> String {
        let why = reason.reason == "memory" ? "; the OOM killer: \(reason.evidence ?? "memory")" : ""
        return "crashwatch: \(exit.executable)[\(exit.pid)] killed by \(exit.signal.name) (abnormal exit, not a crash\(why))"
    }

    /// `crashwatch: ./app[1234] hung: no watchdog ping for 1.0 s (timeout 2.0 s); capturing its threads, leaving it running`.
    public static func hung(_ crash: DetectedCrash, _ hang: DetectedHang) -> String {
        func seconds(_ nanoseconds: Int64) -> String {
            let tenths = nanoseconds / 100_000_000
            return "\(tenths / 10).\(tenths % 10) s"
        }
        let timeout = hang.watchdogTimeoutNanoseconds.map { " (watchdog timeout \(seconds($0)))" } ?? ""
        return "crashwatch: \(crash.executable)[\(crash.pid)] hung: no watchdog ping for \(seconds(hang.silenceNanoseconds))\(timeout); capturing its threads, leaving it running"
    }

    /// `crashwatch: ./app[1234] snapshot: capturing its threads, leaving it running` (a snapshot a supervisor takes),
    /// with who asked for it when that was through the control socket (`snapshot asked for by uid 1000 (pid 4321)`).
    public static func snapshot(_ crash: DetectedCrash) -> String {
        let asker = crash.snapshotRequester.map { " asked for by uid \($0.uid) (pid \($0.pid))" } ?? ""
        return "crashwatch: \(crash.executable)[\(crash.pid)] snapshot\(asker): capturing its threads, leaving it running"
    }

    private static func faultText(_ info: SignalInfo) -> String {
        var text = info.typeName
        if let address = info.faultAddress { text += " at \(hex(address))" }
        if let sender = info.senderPID { text += " from pid \(sender)" }
        return text
    }
}
