// SyscallNames.swift — the names of the system calls a stopped thread is most often found in, per architecture
// (x86-64 has its own numbering; aarch64 uses the kernel's generic table, asm-generic/unistd.h): the calls that
// block (reads, waits, sleeps, polls, locks, sockets, IPC) and a few that are often caught in flight. A number
// not here is reported as a number alone. Pure tables: both architectures on any host.

/// Names of common system calls by number, for the thread states of snapshot and hang reports.
public enum SyscallNames {
    /// The name of system call `number` on `architecture`, when the table has it.
    public static func name(of number: Int, architecture: Architecture) -> String? {
        switch architecture {
        case .x86_64: x86_64[number]
        case .aarch64: aarch64[number]
        }
    }

    /// x86-64 (arch/x86/entry/syscalls/syscall_64.tbl).
    static let x86_64: [Int: String] = [
        0: "read", 1: "write", 2: "open", 3: "close", 7: "poll", 9: "mmap", 15: "rt_sigreturn", 16: "ioctl",
        17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev", 23: "select", 24: "sched_yield", 26: "msync",
        28: "madvise", 34: "pause", 35: "nanosleep", 40: "sendfile", 42: "connect", 43: "accept", 44: "sendto",
        45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 56: "clone", 57: "fork", 58: "vfork", 59: "execve",
        60: "exit", 61: "wait4", 62: "kill", 65: "semop", 69: "msgsnd", 70: "msgrcv", 72: "fcntl", 73: "flock",
        74: "fsync", 75: "fdatasync", 128: "rt_sigtimedwait", 130: "rt_sigsuspend", 202: "futex",
        208: "io_getevents", 219: "restart_syscall", 220: "semtimedop", 230: "clock_nanosleep", 231: "exit_group",
        232: "epoll_wait", 242: "mq_timedsend", 243: "mq_timedreceive", 247: "waitid", 257: "openat",
        270: "pselect6", 271: "ppoll", 275: "splice", 276: "tee", 277: "sync_file_range", 281: "epoll_pwait",
        288: "accept4", 299: "recvmmsg", 307: "sendmmsg", 318: "getrandom", 426: "io_uring_enter",
        441: "epoll_pwait2", 449: "futex_waitv",
    ]

    /// aarch64 (include/uapi/asm-generic/unistd.h).
    static let aarch64: [Int: String] = [
        4: "io_getevents", 22: "epoll_pwait", 25: "fcntl", 29: "ioctl", 32: "flock", 56: "openat", 57: "close",
        63: "read", 64: "write", 65: "readv", 66: "writev", 67: "pread64", 68: "pwrite64", 71: "sendfile",
        72: "pselect6", 73: "ppoll", 76: "splice", 77: "tee", 82: "fsync", 83: "fdatasync", 84: "sync_file_range",
        93: "exit", 94: "exit_group", 95: "waitid", 98: "futex", 101: "nanosleep", 115: "clock_nanosleep",
        124: "sched_yield", 128: "restart_syscall", 129: "kill", 133: "rt_sigsuspend", 137: "rt_sigtimedwait",
        139: "rt_sigreturn", 182: "mq_timedsend", 183: "mq_timedreceive", 188: "msgrcv", 189: "msgsnd",
        192: "semtimedop", 193: "semop", 202: "accept", 203: "connect", 206: "sendto", 207: "recvfrom",
        211: "sendmsg", 212: "recvmsg", 220: "clone", 221: "execve", 222: "mmap", 227: "msync", 233: "madvise",
        242: "accept4", 243: "recvmmsg", 260: "wait4", 269: "sendmmsg", 278: "getrandom", 426: "io_uring_enter",
        441: "epoll_pwait2", 449: "futex_waitv",
    ]
}
