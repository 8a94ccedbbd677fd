/*
 * deny_ptrace — runs a command under a seccomp filter that kills the process on ptrace(2), as systemd's
 * SystemCallFilter=@system-service does: `deny_ptrace COMMAND [ARG...]`. Not run by the fixture table
 * (no EXPECT keys); Tests/IntegrationTests/ServiceTests.swift drives it to check crashwatch's preflight.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: deny_ptrace COMMAND [ARG...]\n");
        return 64;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("deny_ptrace: seccomp");
        return 71;
    }
    execvp(argv[1], argv + 1);
    perror("deny_ptrace: exec");
    return 127;
}
