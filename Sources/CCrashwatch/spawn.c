/*
 * spawn.c — fork and exec in C: Swift must not run between them (only async-signal-safe calls may, and
 * the Swift runtime has threads). Starts the traced program stopped and seized before its exec, execs a
 * command unsupervised, splits the supervisor from the process a Type=forking service's manager started.
 */
#define _GNU_SOURCE
#include "ccrashwatch/spawn.h"
#include "ccrashwatch/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

/* Writes "NAME=<pid>" into buf (async-signal-safe). */
static void format_pid_variable(char *buf, size_t size, const char *name, pid_t pid) {
    size_t n = 0;
    while (name[n] != '\0' && n + 1 < size) { buf[n] = name[n]; n++; }
    char digits[16];
    size_t d = 0;
    unsigned long value = (unsigned long)pid;
    do { digits[d++] = (char)('0' + value % 10); value /= 10; } while (value != 0 && d < sizeof digits);
    while (d > 0 && n + 1 < size) buf[n++] = digits[--d];
    buf[n] = '\0';
}

/* Whether entry is "NAME=<decimal pid>" for this name and pid. */
static int names_pid(const char *entry, const char *name, pid_t pid) {
    size_t n = strlen(name);
    if (strncmp(entry, name, n) != 0) return 0;
    const char *value = entry + n;
    if (*value == '\0') return 0;
    unsigned long parsed = 0;
    for (; *value != '\0'; value++) {
        if (*value < '0' || *value > '9' || parsed > 1000000000UL) return 0;
        parsed = parsed * 10 + (unsigned long)(*value - '0');
    }
    return parsed == (unsigned long)pid;
}

/* Execs the first of `paths` the kernel accepts, like execvp: a file without a recognised format runs
 * through /bin/sh; EACCES is remembered while later paths are tried. Returns (only on failure) the errno
 * of the decisive attempt. Async-signal-safe. */
static int exec_candidates(char *const *paths, size_t path_count, char *const *argv, char *const *env) {
    size_t argc = 0;
    while (argv[argc] != NULL) argc++;
    int error = ENOENT;
    for (size_t i = 0; i < path_count; i++) {
        execve(paths[i], argv, env);
        int e = errno;
        if (e == ENOEXEC) {
            /* Like execvp: a file without a recognised format is a shell script. */
            const char *script_argv[argc + 2];
            script_argv[0] = "/bin/sh";
            script_argv[1] = paths[i];
            for (size_t a = 1; a <= argc; a++) script_argv[a + 1] = argv[a];
            execve("/bin/sh", (char *const *)script_argv, env);
            error = ENOEXEC;
            break;
        }
        if (e == EACCES) {
            error = EACCES; /* remember, but a later PATH entry may still work */
            continue;
        }
        if (e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG || e == ELOOP) {
            continue;
        }
        error = e;
        break;
    }
    return error;
}

/* The child's side of cw_spawn_traced: async-signal-safe calls only. Never returns. */
static void spawn_child(char *const *paths, size_t path_count, char *const *argv, char *const *envp,
                        const sigset_t *child_mask, int error_fd) {
    sigprocmask(SIG_SETMASK, child_mask, NULL);
    raise(SIGSTOP); /* the parent seizes us while we are stopped here */

    /* systemd names the service's main process (crashwatch) in LISTEN_PID and WATCHDOG_PID, so that
     * sd_listen_fds() and sd_watchdog_enabled() in a child answer "not for you". The socket and the
     * watchdog are the program's: where they name crashwatch, they now name the program. */
    char *const *source = envp != NULL ? envp : environ;
    size_t envc = 0;
    while (source[envc] != NULL) envc++;
    const char *environment[envc + 1];
    char listen_pid[32], watchdog_pid[32];
    pid_t parent = getppid(), self = getpid();
    format_pid_variable(listen_pid, sizeof listen_pid, "LISTEN_PID=", self);
    format_pid_variable(watchdog_pid, sizeof watchdog_pid, "WATCHDOG_PID=", self);
    for (size_t i = 0; i < envc; i++) {
        if (names_pid(source[i], "LISTEN_PID=", parent)) environment[i] = listen_pid;
        else if (names_pid(source[i], "WATCHDOG_PID=", parent)) environment[i] = watchdog_pid;
        else environment[i] = source[i];
    }
    environment[envc] = NULL;
    char *const *env = (char *const *)environment;

    int error = exec_candidates(paths, path_count, argv, env);
    ssize_t ignored = write(error_fd, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

/* A close-on-exec pipe in `fds`, then fork(): the pid (0 in the child), both ends open on each side for the
 * caller to close the one it does not use; -1 with errno (and no pipe left open) when either call fails. */
static pid_t fork_with_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) == -1) return -1;
    pid_t pid = fork();
    if (pid == -1) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        errno = e;
    }
    return pid;
}

int cw_spawn_traced(char *const *paths, size_t path_count, char *const *argv, char *const *envp,
                    const sigset_t *child_mask, unsigned long ptrace_options,
                    pid_t *pid_out, int *error_fd_out) {
    int pipe_fds[2];
    pid_t pid = fork_with_pipe(pipe_fds);
    if (pid == -1) return -1;
    if (pid == 0) {
        close(pipe_fds[0]);
        spawn_child(paths, path_count, argv, envp, child_mask, pipe_fds[1]);
    }
    close(pipe_fds[1]);

    int status = 0;
    pid_t waited;
    do {
        waited = waitpid(pid, &status, WUNTRACED | __WALL);
    } while (waited == -1 && errno == EINTR);
    if (waited == -1 || !WIFSTOPPED(status)) {
        int e = waited == -1 ? errno : ECHILD;
        if (waited != -1 && !WIFEXITED(status) && !WIFSIGNALED(status)) kill(pid, SIGKILL);
        close(pipe_fds[0]);
        errno = e;
        return -1;
    }
    if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(uintptr_t)ptrace_options) == -1) {
        int e = errno;
        kill(pid, SIGKILL);
        waitpid(pid, &status, __WALL);
        close(pipe_fds[0]);
        errno = e;
        return -1;
    }
    kill(pid, SIGCONT);
    *pid_out = pid;
    *error_fd_out = pipe_fds[0];
    return 0;
}

int cw_exec_command(char *const *paths, size_t path_count, char *const *argv, const sigset_t *mask) {
    sigprocmask(SIG_SETMASK, mask, NULL);
    return exec_candidates(paths, path_count, argv, environ);
}

int cw_split_supervisor(void) {
    int fds[2];
    pid_t pid = fork_with_pipe(fds);
    if (pid == -1) return -1;
    if (pid == 0) {
        close(fds[0]);
        return fds[1];
    }
    /* The foreground process: waits for the supervisor's word on how the main child ended, and ends so. */
    close(fds[1]);
    int status = 0;
    ssize_t n;
    do {
        n = read(fds[0], &status, sizeof status);
    } while (n == -1 && errno == EINTR);
    if (n != (ssize_t)sizeof status) _exit(71);
    if (WIFSIGNALED(status)) {
        cw_die_by_signal(WTERMSIG(status));
        _exit(128 + WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 70);
}

int cw_report_status(int fd, int status) {
    ssize_t n;
    do {
        n = write(fd, &status, sizeof status);
    } while (n == -1 && errno == EINTR);
    close(fd);
    return n == (ssize_t)sizeof status ? 0 : -1;
}

int cw_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int cw_pidfd_open(pid_t pid) {
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
