/*
 * forkd — a classic forking daemon, for `crashwatch run --pid-file` (systemd Type=forking). Not run by
 * the fixture table (no EXPECT keys); Tests/IntegrationTests/ServiceTests.swift and the real-systemd
 * tests drive it.
 *
 * The first process forks the daemon, prints "daemon <pid>", and exits 0 once the daemon has
 * started (like a daemon's parent after the child's readiness). The daemon starts its own session, then
 * waits; SIGUSR1 makes it dereference NULL in crash_in_daemon (SIGSEGV), SIGTERM ends it with code 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t crash_requested;
static volatile sig_atomic_t stop_requested;

static void on_usr1(int signo) { (void)signo; crash_requested = 1; }
static void on_term(int signo) { (void)signo; stop_requested = 1; }

__attribute__((noinline)) static void crash_in_daemon(void) {
    volatile int *nothing = NULL;
    *nothing = 1;
}

int main(void) {
    int ready[2];
    if (pipe(ready) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid > 0) {
        char byte;
        close(ready[1]);
        if (read(ready[0], &byte, 1) != 1) return 1;
        printf("daemon %d\n", (int)pid);
        fflush(stdout);
        return 0;
    }
    setsid();
    signal(SIGUSR1, on_usr1);
    signal(SIGTERM, on_term);
    close(ready[0]);
    if (write(ready[1], "r", 1) != 1) return 1;
    close(ready[1]);
    while (!stop_requested) {
        if (crash_requested) crash_in_daemon();
        pause();
    }
    return 0;
}
