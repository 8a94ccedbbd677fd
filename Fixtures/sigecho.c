/*
 * sigecho — helper for transparency tests (signal forwarding, stdio pass-through, inherited
 * process attributes). Never crashes.
 *
 * It installs SA_SIGINFO handlers for SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
 * SIGWINCH, SIGALRM and SIGCONT; SIGTSTP, SIGTTIN and SIGTTOU keep their default action so
 * job control works. A handler only writes (signal number, si_code) into a non-blocking
 * self-pipe. The main loop poll()s stdin and the pipe:
 *   - every complete stdin line is written to stdout unchanged (a last line without a
 *     newline is written as-is at EOF);
 *   - every signal prints "signal SIGNAME code N" (N = si_code as a decimal number, e.g.
 *     0 for SI_USER from kill(2), -6 for SI_TKILL);
 *   - on SIGTERM it prints that line, then exits with code 0;
 *   - on stdin EOF it exits with code 0.
 * Each line is flushed as soon as it is written. The first line is "ready pid=<pid>".
 *
 * With the argument --getattr it first prints one line, before "ready":
 *   pgid=<getpgrp()> sid=<getsid(0)> cwd=<getcwd()> nofile=<RLIMIT_NOFILE soft limit, or
 *   "unlimited"> sigmask=<blocked mask at startup> sigign=<SigIgn from /proc/self/status>
 * Both masks are 16 lower-case hex digits, bit (sig - 1) for signal sig, the same format as
 * the SigBlk/SigIgn lines of /proc/PID/status. All values are taken at startup, before the
 * handlers above are installed (installing one replaces an inherited SIG_IGN).
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: code 0
 * CRASHES: 0
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int signal_pipe[2] = {-1, -1};

struct signal_record {
    int signo;
    int code;
};

static const struct {
    int signo;
    const char *name;
} handled[] = {
    {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},     {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"}, {SIGUSR1, "SIGUSR1"},   {SIGUSR2, "SIGUSR2"},
    {SIGWINCH, "SIGWINCH"}, {SIGALRM, "SIGALRM"}, {SIGCONT, "SIGCONT"},
};
#define HANDLED_COUNT (sizeof handled / sizeof handled[0])

static void on_signal(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    struct signal_record record = {signo, info->si_code};
    (void)context;
    (void)!write(signal_pipe[1], &record, sizeof record); /* <= PIPE_BUF: atomic */
    errno = saved_errno;
}

static const char *signal_name(int signo)
{
    for (size_t i = 0; i < HANDLED_COUNT; i++)
        if (handled[i].signo == signo)
            return handled[i].name;
    return "SIG?";
}

static void print_line(const char *text, size_t length)
{
    fwrite(text, 1, length, stdout);
    fflush(stdout);
}

/* Formats the --getattr line; called first thing in main, before any handler is installed
 * (installing one would clear an inherited SIG_IGN). */
static void describe_attributes(char *out, size_t out_size)
{
    sigset_t blocked_at_start;
    char cwd[PATH_MAX];
    char nofile[32];
    char sigign[32] = "?";
    unsigned long long blocked = 0;
    struct rlimit limit;
    char line[256];
    FILE *status;

    if (getcwd(cwd, sizeof cwd) == NULL)
        strcpy(cwd, "?");
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        strcpy(nofile, "?");
    else if (limit.rlim_cur == RLIM_INFINITY)
        strcpy(nofile, "unlimited");
    else
        snprintf(nofile, sizeof nofile, "%llu", (unsigned long long)limit.rlim_cur);
    sigemptyset(&blocked_at_start);
    sigprocmask(SIG_BLOCK, NULL, &blocked_at_start);
    for (int sig = 1; sig <= 64; sig++)
        if (sigismember(&blocked_at_start, sig) == 1)
            blocked |= 1ULL << (sig - 1);
    status = fopen("/proc/self/status", "r");
    if (status != NULL) {
        while (fgets(line, sizeof line, status) != NULL) {
            if (strncmp(line, "SigIgn:", 7) == 0) {
                char *value = line + 7;
                value += strspn(value, " \t");
                value[strcspn(value, "\n")] = '\0';
                snprintf(sigign, sizeof sigign, "%s", value);
                break;
            }
        }
        fclose(status);
    }
    snprintf(out, out_size, "pgid=%ld sid=%ld cwd=%s nofile=%s sigmask=%016llx sigign=%s\n",
             (long)getpgrp(), (long)getsid(0), cwd, nofile, blocked, sigign);
}

int main(int argc, char **argv)
{
    static char attributes[PATH_MAX + 256];
    char buffer[65536];
    size_t used = 0;
    int getattr = argc > 1 && strcmp(argv[1], "--getattr") == 0;

    if (getattr)
        describe_attributes(attributes, sizeof attributes);

    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        perror("pipe2");
        return 1;
    }
    for (size_t i = 0; i < HANDLED_COUNT; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(handled[i].signo, &sa, NULL) != 0) {
            perror("sigaction");
            return 1;
        }
    }

    if (getattr) {
        fputs(attributes, stdout);
        fflush(stdout);
    }
    printf("ready pid=%ld\n", (long)getpid());
    fflush(stdout);

    for (;;) {
        struct pollfd fds[2] = {
            {.fd = signal_pipe[0], .events = POLLIN},
            {.fd = STDIN_FILENO, .events = POLLIN},
        };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("poll");
            return 1;
        }
        if (fds[0].revents & POLLIN) {
            struct signal_record record;
            while (read(signal_pipe[0], &record, sizeof record) == (ssize_t)sizeof record) {
                printf("signal %s code %d\n", signal_name(record.signo), record.code);
                fflush(stdout);
                if (record.signo == SIGTERM)
                    return 0;
            }
        }
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(STDIN_FILENO, buffer + used, sizeof buffer - used);
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN)
                    continue;
                perror("read stdin");
                return 1;
            }
            if (n == 0) {
                if (used > 0)
                    print_line(buffer, used);
                return 0;
            }
            used += (size_t)n;
            /* Write out every complete line; keep a partial one for later. */
            size_t start = 0;
            for (size_t i = 0; i < used; i++) {
                if (buffer[i] == '\n') {
                    print_line(buffer + start, i + 1 - start);
                    start = i + 1;
                }
            }
            if (start == 0 && used == sizeof buffer) { /* a line longer than the buffer */
                print_line(buffer, used);
                start = used;
            }
            memmove(buffer, buffer + start, used - start);
            used -= start;
        }
    }
}
