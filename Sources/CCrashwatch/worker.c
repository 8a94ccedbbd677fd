/*
 * worker.c — the processing worker's process: forked and exec'ed with limits, a clean descriptor table
 * and no privileges to gain; its identity, taken as its first act; its scheduling in the background, so that
 * it never takes a CPU from the tracer thread or a traced program, and its promotion when starved.
 */
#define _GNU_SOURCE
#include "ccrashwatch/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>

/* The worker's side of cw_spawn_worker: async-signal-safe calls only. Never returns. */
static void worker_child(const char *path, char *const *argv, char *const *envp, const int *fds, size_t fd_count,
                         int stderr_fd, const cw_worker_limits *limits) {
    /* In the background before anything else: forked from the tracer thread, the child would otherwise
     * take a CPU from it (and from the traced programs) for its set-up and exec at the tracer's priority. */
    if (limits->background) cw_become_background();
    /* Out of the supervisor's process group (a terminal's Ctrl-C is for the app, not for processing), but in
     * its session: a session of its own would be a scheduler autogroup of its own (sched_autogroup_enabled),
     * which competes as a whole with the traced programs' and takes the worker out of the background (the
     * starved-worker test saw it finish at once beside a busy loop). The kernel lets a process of the same
     * session send it SIGCONT, which to a running worker does nothing; no other signal. */
    setpgid(0, 0);
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
