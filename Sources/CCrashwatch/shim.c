/*
 * shim.c — ptrace, fork+exec and signal plumbing for crashwatch, in C because Swift cannot call
 * variadic functions and must not run between fork and exec.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <grp.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

_Static_assert(CW_PTRACE_SEIZE == PTRACE_SEIZE, "PTRACE_SEIZE");
_Static_assert(CW_PTRACE_LISTEN == PTRACE_LISTEN, "PTRACE_LISTEN");
_Static_assert(CW_PTRACE_SETOPTIONS == PTRACE_SETOPTIONS, "PTRACE_SETOPTIONS");
_Static_assert(CW_PTRACE_INTERRUPT == PTRACE_INTERRUPT, "PTRACE_INTERRUPT");
_Static_assert(CW_PTRACE_GETREGSET == PTRACE_GETREGSET, "PTRACE_GETREGSET");
_Static_assert(CW_PTRACE_O_TRACEEXIT == PTRACE_O_TRACEEXIT, "PTRACE_O_TRACEEXIT");
_Static_assert(CW_PTRACE_EVENT_STOP == PTRACE_EVENT_STOP, "PTRACE_EVENT_STOP");
_Static_assert(CW_WALL == __WALL, "__WALL");
_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd_siginfo");

long cw_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data) {
    return ptrace((enum __ptrace_request)request, pid, (void *)addr, (void *)data);
}

int cw_ptrace_getsiginfo(pid_t tid, cw_siginfo *out) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == -1) return -1;
    memset(out, 0, sizeof *out);
    out->signo = si.si_signo;
    out->code = si.si_code;
    out->error = si.si_errno;
    out->pid = si.si_pid;
    out->uid = si.si_uid;
    out->status = si.si_status;
    out->addr = (uint64_t)(uintptr_t)si.si_addr;
#ifdef si_syscall
    out->syscall = si.si_syscall;
    out->arch = si.si_arch;
    if (si.si_signo == SIGSYS) out->addr = (uint64_t)(uintptr_t)si.si_call_addr;
#endif
    return 0;
}

int cw_ptrace_getregset(pid_t tid, int note_type, void *buf, size_t *len) {
    struct iovec iov = {.iov_base = buf, .iov_len = *len};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)note_type, &iov) == -1) return -1;
    *len = iov.iov_len;
    return 0;
}

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

int cw_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int cw_worker_promote(pid_t pid) {
    struct sched_param no_priority = {0};
    if (sched_setscheduler(pid, SCHED_OTHER, &no_priority) != 0) return errno;
    return setpriority(PRIO_PROCESS, (id_t)pid, CW_WORKER_NICE) == 0 ? 0 : errno;
}

/* Work that can wait — processing a crash, writing its final report — yields the CPU to the supervisor's
 * tracer thread and the programs it traces: SCHED_BATCH (a batch task never preempts another when it wakes)
 * at nice 19 (the least weight a normal task can have: 1.4 % of a CPU against a busy nice-0 task, so the
 * supervisor promotes a worker it finds starved). Not nice 10: another traced process's stop then waited up
 * to a tick behind a starting worker (second-process runs: 4 of 10 waits of 2.7-4.1 ms, against none at 19).
 * Not SCHED_IDLE: the scheduler counts a CPU that runs
 * only SCHED_IDLE tasks as idle when it places a waking task, and a kernel without preemption
 * (PREEMPT_NONE) lets that task wait for the next tick while the other CPU idles — under perf, a traced
 * process's signal stop woken onto the SCHED_IDLE worker's CPU ran 3.5 ms later, at the timer interrupt. */
int cw_become_background(void) {
    struct sched_param no_priority = {0};
    if (setpriority(PRIO_PROCESS, 0, CW_BACKGROUND_NICE) != 0) return errno;
    return sched_setscheduler(0, SCHED_BATCH, &no_priority) == 0 ? 0 : errno;
}

static void yield_now(int signo) {
    (void)signo;
    int saved = errno;
    if (sched_getscheduler(0) == SCHED_BATCH) {
        sched_yield();
    } else {
        /* Promoted (the supervisor found it starved by busy programs): it competes as any task now, and
         * yields no more. alarm(0) disarms the ITIMER_REAL timer. */
        alarm(0);
    }
    errno = saved;
}

int cw_yield_every(unsigned microseconds) {
    /* A worker with nothing to yield to (analyze-core's, core-handler's) was not started in the background. */
    if (sched_getscheduler(0) != SCHED_BATCH) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = yield_now;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGALRM, &action, NULL) != 0) return errno;
    struct itimerval every = {{0, (suseconds_t)microseconds}, {0, (suseconds_t)microseconds}};
    return setitimer(ITIMER_REAL, &every, NULL) == 0 ? 0 : errno;
}

int cw_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int cw_start_thread(void *(*body)(void *), void *context) {
    /* The new thread inherits the mask in force at pthread_create: block everything around it, so there
       is no moment at which a signal for the process could land on the thread. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int failure = pthread_create(&thread, &attributes, body, context);
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return failure;
}

int cw_block_and_open_signalfd(const int *signals, size_t count, sigset_t *previous_mask) {
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < count; i++) sigaddset(&set, signals[i]);
    if (sigprocmask(SIG_BLOCK, &set, previous_mask) == -1) return -1;
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int cw_signalfd_read(int fd, cw_signal_event *out) {
    struct signalfd_siginfo info;
    ssize_t n;
    do {
        n = read(fd, &info, sizeof info);
    } while (n == -1 && errno == EINTR);
    if (n == -1) return (errno == EAGAIN) ? 0 : -1;
    if (n != (ssize_t)sizeof info) {
        errno = EIO;
        return -1;
    }
    out->signo = (int32_t)info.ssi_signo;
    out->code = info.ssi_code;
    out->pid = (int32_t)info.ssi_pid;
    out->uid = info.ssi_uid;
    return 1;
}

int cw_stop_self(int signo) {
    /* A SIGCONT that came after the stop request but before this point is still pending: the stop is over.
     * The signal raised below would flush it (a stop signal discards pending SIGCONTs), so look first. A
     * SIGCONT after the kill() flushes the pending stop signal instead, and unblocking then does nothing:
     * only a SIGCONT between the two calls can be lost, a window of one system call. */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGCONT)) return 0;
    /* The signal is blocked and read through a signalfd by this very thread, so nobody else can take
     * it: make it pending, then open the mask just long enough for the default action to stop us. */
    sigset_t one, previous;
    sigemptyset(&one);
    sigaddset(&one, signo);
    kill(getpid(), signo);
    sigprocmask(SIG_UNBLOCK, &one, &previous);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return 1;
}

void cw_die_by_signal(int signo) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);

    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    kill(getpid(), signo);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    /* Still here: the signal did not kill us (PID 1 of a PID namespace, or a stop-class signal). */
}

/* The worker's side of cw_spawn_worker: async-signal-safe calls only. Never returns. */
static void worker_child(const char *path, char *const *argv, char *const *envp, const int *fds, size_t fd_count,
                         int stderr_fd, const cw_worker_limits *limits) {
    /* In the background before anything else: forked from the tracer thread, the child would otherwise
     * take a CPU from it (and from the traced programs) for its set-up and exec at the tracer's priority. */
    if (limits->background) cw_become_background();
    /* Out of the supervisor's session and process group: a terminal's Ctrl-C is for the app, not for
     * processing, and the kernel's same-session exception for SIGCONT reaches no worker. */
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    for (int signo = 1; signo < NSIG; signo++) {
        if (signo != SIGKILL && signo != SIGSTOP) signal(signo, SIG_DFL);
    }
    /* The passed descriptors become 3, 4, …: first out of the way, then into place. */
    int moved[fd_count ? fd_count : 1];
    for (size_t i = 0; i < fd_count; i++) {
        moved[i] = fcntl(fds[i], F_DUPFD, (int)(3 + fd_count));
        if (moved[i] < 0) _exit(126);
    }
    int error_output = stderr_fd >= 0 ? fcntl(stderr_fd, F_DUPFD, (int)(3 + fd_count)) : -1;
    if (stderr_fd >= 0 && error_output < 0) _exit(126);
    for (size_t i = 0; i < fd_count; i++) {
        if (dup2(moved[i], (int)(3 + i)) < 0) _exit(126);
    }
    /* Standard input and output from /dev/null, standard error to the caller's file: not the streams the
     * supervisor shares with the program, which may be stuck. */
    if (error_output >= 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(error_output, 2) < 0) _exit(126);
    }
    close_range((unsigned)(3 + fd_count), ~0U, 0);

    struct rlimit limit;
    if (limits->address_space_bytes) {
        limit.rlim_cur = limit.rlim_max = limits->address_space_bytes;
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(126);
    }
    if (limits->cpu_seconds) {
        limit.rlim_cur = limits->cpu_seconds;
        limit.rlim_max = limits->cpu_seconds + 1;
        if (setrlimit(RLIMIT_CPU, &limit) != 0) _exit(126);
    }
    if (limits->file_size_bytes) {
        limit.rlim_cur = limits->file_size_bytes;
        limit.rlim_max = limits->file_size_hard_bytes > limits->file_size_bytes ? limits->file_size_hard_bytes : limits->file_size_bytes;
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
    }
    limit.rlim_cur = limit.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &limit);
    /* Processing yields the CPU to the supervisor's tracer thread and to the services it traces (set at
     * the top): a report can wait a few milliseconds, another process's signal stop should not. Should a
     * saturated machine starve it, the supervisor moves it to SCHED_OTHER at nice CW_WORKER_NICE halfway
     * to its deadline (cw_worker_promote). */
    /* Its identity is not changed here: execve would make it dumpable again and set its saved uid to its
     * effective one, so that the crashed user could signal it. It execs with crashwatch's own credentials
     * and takes its identity as its first act (cw_assume_worker_identity). */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    execve(path, argv, envp);
    _exit(127);
}

int cw_spawn_worker(const char *path, char *const *argv, char *const *envp, const int *fds, size_t fd_count,
                    int stderr_fd, const cw_worker_limits *limits, pid_t *pid_out) {
    pid_t pid = fork();
    if (pid == -1) return -1;
    if (pid == 0) worker_child(path, argv, envp, fds, fd_count, stderr_fd, limits);
    *pid_out = pid;
    return 0;
}

int cw_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int cw_memfd_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0 ? 0 : errno;
}

int cw_assume_worker_identity(uint32_t owner_uid, uint32_t owner_gid, uint32_t uid, uint32_t gid,
                              const uint32_t *groups, size_t group_count) {
    pid_t parent = getppid();
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (setgroups(group_count, (const gid_t *)groups) != 0) return errno;
    /* Real and saved ids: the owner, whom signals and ptrace are checked against. Effective (and so
     * filesystem) ids: whose files it may open. Leaving uid 0 for ids that are all non-zero clears every
     * capability. */
    if (setresgid(owner_gid, gid, owner_gid) != 0) return errno;
    if (setresuid(owner_uid, uid, owner_uid) != 0) return errno;
    if (owner_uid != 0 && uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) return EPERM; /* irreversible */
    /* A credential change sets dumpable to fs.suid_dumpable (1 would make it dumpable) and clears the
     * parent-death signal: set both again, and make sure the parent did not die before. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return errno;
    if (getppid() != parent) return ESRCH;
    if (owner_uid != 0 && uid != 0) {
        struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        memset(data, 0, sizeof data);
        if (syscall(SYS_capget, &header, data) != 0) return errno;
        if (data[0].effective | data[0].permitted | data[1].effective | data[1].permitted) return EPERM;
    }
    return 0;
}

int cw_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int cw_tgkill(pid_t pid, pid_t tid, int signo) {
    return (int)syscall(SYS_tgkill, pid, tid, signo);
}

int cw_probe_syscall(int which) {
    pid_t pid = fork();
    if (pid == -1) return -1;
    if (pid == 0) {
        /* Calls that cannot do anything (no such process; a page of our own stack), so the only ways
         * to fail are a seccomp filter's errno or its kill. */
        long result;
        if (which == CW_PROBE_PTRACE) {
            result = syscall(SYS_ptrace, PTRACE_PEEKDATA, 0, 0, 0);
            _exit(result == -1 && errno != ESRCH && errno != EIO ? 1 : 0);
        }
        unsigned char vector[1];
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t here = (uintptr_t)&vector & ~(uintptr_t)(page - 1);
        result = mincore((void *)here, (size_t)page, vector);
        _exit(result == -1 ? 1 : 0);
    }
    int status = 0;
    pid_t waited;
    do {
        waited = waitpid(pid, &status, __WALL);
    } while (waited == -1 && errno == EINTR);
    if (waited == -1) return -1;
    if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGSYS ? 2 : -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
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

int cw_exec_command(char *const *paths, size_t path_count, char *const *argv, const sigset_t *mask) {
    sigprocmask(SIG_SETMASK, mask, NULL);
    return exec_candidates(paths, path_count, argv, environ);
}

int cw_pidfd_open(pid_t pid) {
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif
    return (int)syscall(SYS_pidfd_open, pid, 0);
}


/* ---- resident code ---- */

/* Whether an object's code was patched when it was loaded (text relocations): its read-only pages then differ
 * from the file and must stay. */
static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL || (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL))) return 1;
        }
    }
    return 0;
}

static int drop_read_only_pages(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size, (void)data;
    /* The vdso is no file to read back from; an object with text relocations has patched pages. */
    if ((info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")) || has_text_relocations(info)) return 0;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        /* Writable segments hold relocated data (RELRO included, read-only only after relocation): never. */
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W)) continue;
        uintptr_t start = (info->dlpi_addr + segment->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t end = info->dlpi_addr + segment->p_vaddr + segment->p_memsz;
        madvise((void *)start, end - start, MADV_DONTNEED);
    }
    return 0;
}

void cw_drop_loaded_pages(void) {
    dl_iterate_phdr(drop_read_only_pages, NULL);
}

void cw_malloc_return_promptly(void) {
    /* Setting either fixes it: glibc stops moving the thresholds after the blocks it frees. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

int cw_malloc_trim(void) {
    return malloc_trim(0);
}
