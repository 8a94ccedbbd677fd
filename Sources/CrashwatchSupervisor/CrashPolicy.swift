// CrashPolicy.swift — when a signal is a crash (DESIGN.md "When is a signal a crash?"), as a pure decision.
import CrashwatchModel
import CrashwatchSystem

/// What the supervisor does with a signal at a tracee's signal-delivery-stop.
public enum SignalVerdict: Equatable, Sendable {
    /// Not a crash signal, or one the process ignores: deliver it unchanged and move on.
    case passThrough
    /// A crash signal the process handles: remember the fault (it may come back as a re-raise), deliver it.
    case rememberAndDeliver
    /// A crash signal with the default action: the process dies when it is delivered. Capture first.
    case fatal
}

/// Decides a signal's fate from the signal and the process's disposition of it.
///
/// The kernel resets the disposition to `SIG_DFL` before the stop when it forces a synchronous fault
/// on a thread that blocks or ignores the signal, so the disposition read at the stop is the one that
/// decides what delivery will do.
public func verdict(for signal: Signal, disposition: SignalDisposition) -> SignalVerdict {
    guard signal.isCrash else { return .passThrough }
    switch disposition {
    case .default: return .fatal
    case .handled: return .rememberAndDeliver
    case .ignored: return .passThrough
    }
}
