/*
 * peak_rss — benchmark helper (bench/bench.py compiles it to .build/bench/peak_rss).
 *
 *   peak_rss COMMAND [ARG...]
 *
 * Runs COMMAND and prints, on stdout, one line "vmhwm_kib rusage_kib":
 *   vmhwm_kib   the peak RSS of COMMAND's own process, and of it alone: its VmHWM from
 *               /proc/PID/status read at its PTRACE_EVENT_EXIT stop, which the kernel reports
 *               before it releases the process's memory (the last moment VmHWM is readable);
 *   rusage_kib  ru_maxrss from wait4 for it, which also covers every descendant it waited for
 *               (for `crashwatch run`: the program it ran and its processing workers).
 * peak_rss seizes COMMAND (PTRACE_SEIZE, PTRACE_O_TRACEEXIT on its main thread only) and passes
 * every signal on. A tracer may itself be traced, so this works for `crashwatch run`.
 * COMMAND's stdout and stderr go to /dev/null. Exit status: COMMAND's, or 1 when peak_rss failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static long vmhwm_kib(pid_t pid)
{
    char path[64], buffer[8192];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buffer[n] = 0;
    char *line = strstr(buffer, "\nVmHWM:");
    return line ? strtol(line + 7, NULL, 10) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: peak_rss COMMAND [ARG...]\n");
        return 1;
    }
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) {
        perror("peak_rss: pipe");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("peak_rss: fork");
        return 1;
    }
    if (child == 0) {
        char go;
        close(ready[1]);
        if (read(ready[0], &go, 1) != 1) /* wait until the parent has seized us */
            _exit(1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    close(ready[0]);
    if (ptrace(PTRACE_SEIZE, child, NULL, (void *)(long)PTRACE_O_TRACEEXIT) != 0) {
        perror("peak_rss: PTRACE_SEIZE");
        kill(child, SIGKILL);
        return 1;
    }
    if (write(ready[1], "g", 1) != 1) {
        perror("peak_rss: write");
        return 1;
    }
    close(ready[1]);

    long peak = -1;
    for (;;) {
        int status;
        struct rusage usage;
        pid_t pid = wait4(child, &status, __WALL, &usage);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            perror("peak_rss: wait4");
            return 1;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            printf("%ld %ld\n", peak, usage.ru_maxrss);
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (!WIFSTOPPED(status))
            continue;
        int event = status >> 16, signal = WSTOPSIG(status);
        if (event == PTRACE_EVENT_EXIT) {
            peak = vmhwm_kib(child);
            ptrace(PTRACE_CONT, child, NULL, NULL);
        } else if (event == PTRACE_EVENT_STOP) {
            /* group-stop (stop signal) or interrupt: let it be */
            if (signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU)
                ptrace(PTRACE_LISTEN, child, NULL, NULL);
            else
                ptrace(PTRACE_CONT, child, NULL, NULL);
        } else if (event != 0) {
            ptrace(PTRACE_CONT, child, NULL, NULL);
        } else {
            ptrace(PTRACE_CONT, child, NULL, (void *)(long)signal); /* signal-delivery-stop: pass it on */
        }
    }
}
