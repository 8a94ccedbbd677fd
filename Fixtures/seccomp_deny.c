/*
 * seccomp_deny — runs a command under a seccomp filter that kills the process on one system call, as
 * systemd's SystemCallFilter= does for the calls it leaves out: `seccomp_deny ptrace|mincore COMMAND
 * [ARG...]`. Not run by the fixture table (no EXPECT keys); transparency.py (ptrace_refused,
 * mincore_refused) drives it to check crashwatch's start-up check and what its reports then say.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long denied = argc < 3 ? -1 : strcmp(argv[1], "ptrace") == 0 ? SYS_ptrace : strcmp(argv[1], "mincore") == 0 ? SYS_mincore : -1;
    if (denied < 0) {
        fprintf(stderr, "usage: seccomp_deny ptrace|mincore COMMAND [ARG...]\n");
        return 64;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("seccomp_deny: seccomp");
        return 71;
    }
    execvp(argv[2], argv + 2);
    perror("seccomp_deny: exec");
    return 127;
}
