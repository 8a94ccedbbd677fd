// Ptrace.swift — typed wrappers over the ptrace requests crashwatch makes, through the C shim.
// Every call here must come from the one tracer thread that seized the tracee.
import CCrashwatch
import CrashwatchModel
import Glibc

/// The ptrace requests crashwatch uses, each failing with a `SystemError` naming the request and the tid.
public enum Ptrace {
    /// Options for PTRACE_SEIZE: trace threads, exec and exit always; forks and vforks when following them.
    public static func seizeOptions(followForks: Bool) -> UInt {
        var options = CW_PTRACE_O_TRACECLONE | CW_PTRACE_O_TRACEEXEC | CW_PTRACE_O_TRACEEXIT
        if followForks { options |= CW_PTRACE_O_TRACEFORK | CW_PTRACE_O_TRACEVFORK }
        return UInt(options)
    }

    /// The options of a thread that is about to die: no exit stop (its end is reported all the same).
    public static func withoutExitStop(_ options: UInt) -> UInt {
        options & ~UInt(CW_PTRACE_O_TRACEEXIT)
    }

    private static func request(_ name: String, _ request: Int32, _ tid: Int32, _ addr: UInt = 0, _ data: UInt = 0)
        throws(SystemError) -> Int
    {
        Glibc.errno = 0
        let result = cw_ptrace(request, tid, addr, data)
        if result == -1 {
            let saved = lastErrno()
            if saved != 0 { throw SystemError("ptrace(\(name))", pid: tid, errno: saved) }
        }
        return result
    }

    /// Resumes a stopped tracee, delivering `signal` when it is in a signal-delivery-stop (0 for none).
    public static func cont(_ tid: Int32, signal: Int32 = 0) throws(SystemError) {
        _ = try request("PTRACE_CONT", Int32(CW_PTRACE_CONT), tid, 0, UInt(signal))
    }

    /// Stops tracing a stopped tracee, which goes on untraced, delivering `signal` when it is in a
    /// signal-delivery-stop (0 for none); a tracee in group-stop stays stopped.
    public static func detach(_ tid: Int32, signal: Int32 = 0) throws(SystemError) {
        _ = try request("PTRACE_DETACH", Int32(CW_PTRACE_DETACH), tid, 0, UInt(signal))
    }

    /// Lets a tracee in group-stop stay stopped while still reporting new events (PTRACE_LISTEN).
    public static func listen(_ tid: Int32) throws(SystemError) {
        _ = try request("PTRACE_LISTEN", Int32(CW_PTRACE_LISTEN), tid)
    }

    /// Replaces a stopped tracee's ptrace options (PTRACE_SETOPTIONS).
    public static func setOptions(_ tid: Int32, _ options: UInt) throws(SystemError) {
        _ = try request("PTRACE_SETOPTIONS", Int32(CW_PTRACE_SETOPTIONS), tid, 0, options)
    }

    /// Starts tracing a running thread of another process without stopping it (PTRACE_SEIZE) with `options`
    /// (0: none — the process's behaviour is left as it is). Needs the kernel's ptrace access to it.
    public static func seize(_ tid: Int32, options: UInt = 0) throws(SystemError) {
        _ = try request("PTRACE_SEIZE", Int32(CW_PTRACE_SEIZE), tid, 0, options)
    }

    /// Asks a running tracee to stop with a PTRACE_EVENT_STOP.
    public static func interrupt(_ tid: Int32) throws(SystemError) {
        _ = try request("PTRACE_INTERRUPT", Int32(CW_PTRACE_INTERRUPT), tid)
    }

    /// The event message of the last ptrace event: a new tid, the former tid at exec, or an exit status.
    public static func eventMessage(_ tid: Int32) throws(SystemError) -> UInt {
        var message: UInt = 0
        _ = try withUnsafeMutablePointer(to: &message) { (pointer) throws(SystemError) -> Int in
            try request("PTRACE_GETEVENTMSG", Int32(CW_PTRACE_GETEVENTMSG), tid, 0, UInt(bitPattern: pointer))
        }
        return message
    }

    /// The siginfo of a tracee in a signal-delivery-stop, decoded.
    public static func signalInfo(_ tid: Int32) throws(SystemError) -> SignalInfo {
        var raw = cw_siginfo()
        guard cw_ptrace_getsiginfo(tid, &raw) == 0 else {
            throw SystemError("ptrace(PTRACE_GETSIGINFO)", pid: tid, errno: lastErrno())
        }
        return SignalInfo(signo: raw.signo, code: raw.code, errorNumber: raw.error, pid: raw.pid, uid: raw.uid,
                          address: raw.addr, syscall: raw.syscall)
    }

    /// The raw bytes of a register set (`NT_PRSTATUS` by default) of a stopped tracee.
    public static func registerSet(_ tid: Int32, noteType: Int32 = Int32(CW_NT_PRSTATUS), capacity: Int = 1024)
        throws(SystemError) -> [UInt8]
    {
        var bytes = [UInt8](repeating: 0, count: capacity)
        var length = capacity
        let result = bytes.withUnsafeMutableBytes { cw_ptrace_getregset(tid, noteType, $0.baseAddress, &length) }
        guard result == 0 else { throw SystemError("ptrace(PTRACE_GETREGSET)", pid: tid, errno: lastErrno()) }
        bytes.removeSubrange(length...)
        return bytes
    }
}
