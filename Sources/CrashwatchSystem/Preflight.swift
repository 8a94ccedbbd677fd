// Preflight.swift — whether this process may supervise at all: a seccomp filter (systemd's
// SystemCallFilter=), Yama's ptrace_scope or missing capabilities can refuse ptrace. Found out before the
// program starts, so a service runs unsupervised with one line saying why rather than dying of SIGSYS.
import CCrashwatch
import Glibc

/// Checks for what would make supervision impossible, and explains a refusal.
public enum PtracePreflight {
    /// What a seccomp filter refuses of the calls crashwatch makes: `blocker` names a call the supervisor
    /// cannot do without (ptrace) and the fix; `warning` one only processing needs
    /// (mincore, which libunwind uses). Costs nothing without a seccomp filter; with one, a probe child per call.
    public static func check() -> (blocker: String?, warning: String?) {
        guard let status = try? ProcFS.threadStatus(getpid()), status.seccompMode == 2 else { return (nil, nil) }
        let refused = [("ptrace", CW_PROBE_PTRACE), ("mincore", CW_PROBE_MINCORE)]
            .filter { cw_probe_syscall(Int32($0.1)) > 0 }.map(\.0)
        guard !refused.isEmpty else { return (nil, nil) }
        let line = "a seccomp filter refuses \(refused.joined(separator: ", ")) (systemd: add `SystemCallFilter=ptrace mincore` to the unit)"
        if refused.contains("ptrace") { return (line, nil) }
        return (nil, line + "; crash reports will not be unwound or symbolized (processing needs it)")
    }

    /// Why PTRACE_SEIZE of crashwatch's own child was refused (EPERM), with the fix.
    public static func refusalReason() -> String {
        let scope = ProcFS.setting("/proc/sys/kernel/yama/ptrace_scope").flatMap { Int($0) }
        switch scope {
        case 3?: return "kernel.yama.ptrace_scope is 3, which forbids ptrace until reboot (boot with it at 1 or less)"
        case 2?: return "kernel.yama.ptrace_scope is 2: ptrace needs CAP_SYS_PTRACE (systemd: `AmbientCapabilities=CAP_SYS_PTRACE` and `CapabilityBoundingSet=CAP_SYS_PTRACE`, or `sysctl kernel.yama.ptrace_scope=1`)"
        default: return "ptrace was refused (EPERM): a security module or a missing CAP_SYS_PTRACE (systemd: `CapabilityBoundingSet=CAP_SYS_PTRACE`) forbids it"
        }
    }
}
