/* cw_sigcount COUNTFILE: counts the SIGUSR1s it receives; writes "pid=<pid> count=<n>" to COUNTFILE
 * at start and after every change (so a reader sees each signal counted). Exits 0 on SIGTERM. */
#include "common.h"

static volatile sig_atomic_t usr1_count;
static volatile sig_atomic_t terminate;

static void on_usr1(int signo)
{
    (void)signo;
    usr1_count++;
}

static void on_term(int signo)
{
    (void)signo;
    terminate = 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cw_sigcount COUNTFILE\n");
        return 64;
    }
    sigset_t blocked, empty;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    sigaddset(&blocked, SIGTERM);
    sigemptyset(&empty);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    struct sigaction action = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &action, NULL);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    int written = -1;
    for (;;) {
        int count = usr1_count;
        if (count != written) {
            write_state(argv[1], "pid=%d count=%d\n", (int)getpid(), count);
            written = count;
        }
        if (terminate) return 0;
        sigsuspend(&empty); /* returns after a handler ran; signals stay blocked outside it */
    }
}
