/*
 * ptrace.h — ptrace(2) for Swift, which cannot call glibc's variadic declaration (ptrace.c): the
 * requests, options and events crashwatch uses, siginfo flattened, register sets, and a probe of whether a
 * seccomp filter lets the tracer's calls through.
 */
#ifndef CCRASHWATCH_PTRACE_H
#define CCRASHWATCH_PTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ptrace requests and options used by crashwatch (values from <linux/ptrace.h>). */
#define CW_PTRACE_CONT 7
#define CW_PTRACE_DETACH 17
#define CW_PTRACE_SETOPTIONS 0x4200
#define CW_PTRACE_GETEVENTMSG 0x4201
#define CW_PTRACE_GETSIGINFO 0x4202
#define CW_PTRACE_GETREGSET 0x4204
#define CW_PTRACE_SEIZE 0x4206
#define CW_PTRACE_INTERRUPT 0x4207
#define CW_PTRACE_LISTEN 0x4208

#define CW_PTRACE_O_TRACEFORK 2
#define CW_PTRACE_O_TRACEVFORK 4
#define CW_PTRACE_O_TRACECLONE 8
#define CW_PTRACE_O_TRACEEXEC 0x10
#define CW_PTRACE_O_TRACEEXIT 0x40

#define CW_PTRACE_EVENT_FORK 1
#define CW_PTRACE_EVENT_VFORK 2
#define CW_PTRACE_EVENT_CLONE 3
#define CW_PTRACE_EVENT_EXEC 4
#define CW_PTRACE_EVENT_VFORK_DONE 5
#define CW_PTRACE_EVENT_EXIT 6
#define CW_PTRACE_EVENT_STOP 128

/* waitpid flags (the __W* ones are not exported to Swift by glibc's headers). */
#define CW_WNOHANG 1
#define CW_WUNTRACED 2
#define CW_WALL 0x40000000

/* ELF note types for PTRACE_GETREGSET. */
#define CW_NT_PRSTATUS 1
#define CW_NT_ARM_PAC_MASK 0x406

/** Calls ptrace(2) with a fixed signature. Returns the kernel's result; -1 with errno on failure. */
long cw_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data);

/** A siginfo_t flattened into plain fields; which ones mean something depends on signo and code. */
typedef struct {
    int32_t signo;
    int32_t code;
    int32_t error;
    int32_t pid;      /* si_pid: sender (SI_USER, SI_TKILL, SI_QUEUE) or child (SIGCHLD) */
    uint32_t uid;     /* si_uid */
    int32_t status;   /* si_status (SIGCHLD) */
    uint64_t addr;    /* si_addr: fault address (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP); call address (SIGSYS) */
    int32_t syscall;  /* si_syscall (SIGSYS with SYS_SECCOMP) */
    uint32_t arch;    /* si_arch (SIGSYS with SYS_SECCOMP) */
} cw_siginfo;

/** PTRACE_GETSIGINFO for a tracee in a signal-delivery-stop, flattened. */
int cw_ptrace_getsiginfo(pid_t tid, cw_siginfo *out);

/** PTRACE_GETREGSET with an iovec; on success `*len` is the number of bytes the kernel filled. */
int cw_ptrace_getregset(pid_t tid, int note_type, void *buf, size_t *len);

/** What `cw_probe_syscall` tries. */
#define CW_PROBE_PTRACE 1
#define CW_PROBE_MINCORE 2

/**
 * Tries a system call crashwatch needs in a throwaway child (a seccomp filter may kill the caller):
 * 0 allowed, 1 refused with an errno, 2 the child was killed by SIGSYS, -1 the probe itself failed.
 */
int cw_probe_syscall(int which);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_PTRACE_H */
