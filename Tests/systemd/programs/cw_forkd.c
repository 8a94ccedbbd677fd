/* cw_forkd [DAEMONPIDFILE]: a classic forking daemon. Forks; the child (the daemon) starts a new
 * session, writes its pid to DAEMONPIDFILE (default /run/forkd.daemon.pid) and sleeps until SIGUSR1,
 * then dereferences NULL in daemon_crash() (SIGSEGV). The parent exits 0 once the daemon is ready. */
#include "common.h"

static volatile sig_atomic_t crash_requested;

static void on_usr1(int signo)
{
    (void)signo;
    crash_requested = 1;
}

__attribute__((noinline)) void daemon_crash(void)
{
    volatile int *volatile p = NULL;
    *p = 11;
}

int main(int argc, char **argv)
{
    const char *pid_file = argc > 1 ? argv[1] : "/run/forkd.daemon.pid";
    int ready[2];
    if (pipe(ready) != 0) {
        perror("cw_forkd: pipe");
        return 1;
    }
    sigset_t blocked, empty;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    sigemptyset(&empty);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    struct sigaction action = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &action, NULL);
    pid_t child = fork();
    if (child < 0) {
        perror("cw_forkd: fork");
        return 1;
    }
    if (child == 0) {
        close(ready[0]);
        setsid();
        write_state(pid_file, "%d\n", (int)getpid());
        printf("cw_forkd: daemon %d ready\n", (int)getpid());
        fflush(stdout);
        if (write(ready[1], "r", 1) != 1) return 1;
        close(ready[1]);
        while (!crash_requested) sigsuspend(&empty);
        printf("cw_forkd: daemon %d got SIGUSR1, crashing\n", (int)getpid());
        fflush(stdout);
        daemon_crash();
        return 0;
    }
    close(ready[1]);
    char byte;
    if (read(ready[0], &byte, 1) != 1) {
        fprintf(stderr, "cw_forkd: the daemon died before it was ready\n");
        return 1;
    }
    return 0;
}
