/* cw_termlog LOGFILE READYFILE: installs a SIGTERM handler, then writes its pid to READYFILE. After the
 * first SIGTERM it waits 100 ms more (a second, duplicated SIGTERM would arrive meanwhile), appends one
 * line "term <pid>" to LOGFILE per SIGTERM received, and exits 0. */
#include "common.h"

static volatile sig_atomic_t terms;

static void on_term(int signo)
{
    (void)signo;
    terms++;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cw_termlog LOGFILE READYFILE\n");
        return 64;
    }
    sigset_t blocked, empty;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigemptyset(&empty);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    struct sigaction action = {.sa_handler = on_term};
    sigaction(SIGTERM, &action, NULL);
    write_state(argv[2], "%d\n", (int)getpid());
    while (terms == 0) sigsuspend(&empty);
    sigprocmask(SIG_UNBLOCK, &blocked, NULL);
    double until = now_seconds() + 0.10;
    while (now_seconds() < until) sleep_ms(5);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror("cw_termlog: open");
        return 1;
    }
    for (int i = 0; i < terms; i++) dprintf(fd, "term %d\n", (int)getpid());
    close(fd);
    return 0;
}
