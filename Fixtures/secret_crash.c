/*
 * secret_crash — a program that holds a secret on its stack and crashes, for the worker-boundary attacks
 * (Tests/IntegrationTests/WorkerBoundaryTests.swift). Not run by the fixture table (no EXPECT keys).
 *
 *   secret_crash nondumpable SECRET   makes itself non-dumpable (PR_SET_DUMPABLE 0, as ssh-agent and
 *                                     gpg-agent do: its own user may not read its memory), copies SECRET
 *                                     into a stack buffer, and crashes.
 *   secret_crash read FILE            reads FILE into a stack buffer and crashes: installed setuid root and
 *                                     run by an unprivileged user, FILE is one only root may read.
 *
 * Either way it prints "ready" and stores through NULL in crash_here (SIGSEGV, SEGV_MAPERR at 0x0), the
 * secret in main's frame below it. Stripped (-s, with a build-id): processing started with --debuginfod asks
 * that server for its debug file, so a server that never answers keeps the worker alive while the attacker
 * probes it.
 *
 * BUILD: -O0 -s -Wl,--build-id
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int *volatile null_target = NULL;

__attribute__((noipa)) static int crash_here(const char *secret)
{
    *null_target = secret[0];
    return secret[1];
}

int main(int argc, char **argv)
{
    char secret[4096];
    memset(secret, 0, sizeof secret);
    if (argc != 3) {
        fprintf(stderr, "usage: secret_crash nondumpable SECRET | read FILE\n");
        return 2;
    }
    if (strcmp(argv[1], "nondumpable") == 0) {
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) { perror("prctl"); return 1; }
        snprintf(secret, sizeof secret, "%s", argv[2]);
        memset(argv[2], 'x', strlen(argv[2])); /* only the stack holds it now */
    } else if (strcmp(argv[1], "read") == 0) {
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) { perror(argv[2]); return 1; }
        ssize_t n = read(fd, secret, sizeof secret - 1);
        close(fd);
        if (n <= 0) { perror("read"); return 1; }
    } else {
        fprintf(stderr, "secret_crash: unknown mode %s\n", argv[1]);
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    return crash_here(secret);
}
