/*
 * sigsys — installs a seccomp filter (PR_SET_NO_NEW_PRIVS, then seccomp(SECCOMP_SET_MODE_FILTER))
 * that answers SECCOMP_RET_TRAP for getppid and allows every other system call of the native
 * architecture (a foreign architecture's system calls kill the process). crash_here() then
 * issues getppid with an inline syscall instruction (syscall / svc #0), so the pc is in the
 * fixture, not in libc's syscall(). The kernel sends SIGSYS with SYS_SECCOMP; si_addr is the
 * address after the syscall instruction, si_syscall is getppid's number, si_arch the audit arch.
 * If the filter cannot be installed (e.g. under qemu-user), it prints the error to stderr and
 * exits with code 2.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSYS
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSYS
 * CRASH-CODE: SYS_SECCOMP
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

/* What the filter answers for getppid; seccomp_kill.c includes this file with SECCOMP_RET_KILL_PROCESS. */
#ifndef FIXTURE_ACTION
#define FIXTURE_ACTION SECCOMP_RET_TRAP
#define FIXTURE_NAME "sigsys"
#endif

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
        /* getppid gets FIXTURE_ACTION (traps), everything else runs. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, FIXTURE_ACTION),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {
        .len = (unsigned short)(sizeof code / sizeof code[0]),
        .filter = code,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fprintf(stderr, FIXTURE_NAME ": PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
        return -1;
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        fprintf(stderr, FIXTURE_NAME ": seccomp(SECCOMP_SET_MODE_FILTER): %s\n", strerror(errno));
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
