/*
 * seccomp_kill — like sigsys, but the filter answers SECCOMP_RET_KILL_PROCESS for getppid, as systemd's
 * SystemCallFilter= does by default. The kernel then forces SIGSYS past the signal-delivery stop (the
 * signal is SA_IMMUTABLE): a tracer never sees it being delivered, only each thread's PTRACE_EVENT_EXIT
 * stop with the death status, so crashwatch captures the process there. No siginfo is known then: the
 * report says SI_KERNEL and carries a soft error saying why. The registers are still those of the
 * syscall instruction in crash_here.
 * If the filter cannot be installed (e.g. under qemu-user), it prints the error to stderr and exits
 * with code 2.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSYS
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSYS
 * CRASH-CODE: SI_KERNEL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FIXTURE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FIXTURE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "unsupported architecture"
#endif

static int install_filter(void)
{
    struct sock_filter code[] = {
        /* A foreign architecture (e.g. int 0x80 on x86-64): kill, as a careful filter does. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FIXTURE_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        /* getppid kills the process, everything else runs. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {
        .len = (unsigned short)(sizeof code / sizeof code[0]),
        .filter = code,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "seccomp_kill: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
        return -1;
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        fprintf(stderr, "seccomp_kill: seccomp(SECCOMP_SET_MODE_FILTER): %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

__attribute__((noinline)) long crash_here(void)
{
    long ret;
#if defined(__x86_64__)
    __asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x0 __asm__("x0");
    register long x8 __asm__("x8") = SYS_getppid;
    __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
    ret = x0;
#endif
    return ret;
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    if (install_filter() != 0)
        return 2;
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
