/*
 * worker.h — the processing worker's process (worker.c): its spawn with limits and a clean set of
 * descriptors, the identity it takes as its first act, and its scheduling (background, yielding, promotion).
 */
#ifndef CCRASHWATCH_WORKER_H
#define CCRASHWATCH_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Limits and identity of a processing worker (cw_spawn_worker). Zero limits are left as inherited. */
typedef struct {
    uint64_t address_space_bytes; /* RLIMIT_AS */
    uint64_t cpu_seconds;         /* RLIMIT_CPU (soft; the hard limit is one second more) */
    uint64_t file_size_bytes;     /* RLIMIT_FSIZE (soft): caps what it can write */
    uint64_t file_size_hard_bytes; /* RLIMIT_FSIZE (hard): what its debug-cache writer may raise it to */
    int32_t background;           /* SCHED_BATCH at nice CW_BACKGROUND_NICE (cw_become_background), first thing */
} cw_worker_limits;

/**
 * Forks and execs a worker: its own process group, killed when its parent dies (PR_SET_PDEATHSIG),
 * empty signal mask and default dispositions, `fds` as descriptors 3, 4, … and nothing else open
 * above 2, `limits` applied, no new privileges, not dumpable, crashwatch's own credentials (the
 * worker changes them itself: cw_assume_worker_identity). With
 * `stderr_fd` >= 0 its standard error is that file and its standard input and output /dev/null; with -1
 * it keeps the caller's three. Exit status 126 from the child means the set-up failed, 127 that exec failed.
 */
int cw_spawn_worker(const char *path, char *const *argv, char *const *envp, const int *fds, size_t fd_count,
                    int stderr_fd, const cw_worker_limits *limits, pid_t *pid_out);

/**
 * For a processing worker, its first act: becomes owner_uid/owner_gid (real and saved ids: whom the
 * kernel's signal and ptrace checks see) with the file access of uid/gid/groups (effective, hence
 * filesystem, ids), irreversibly, with no capability left, not dumpable, killed when its parent dies.
 * 0 or an errno (ESRCH: the parent died meanwhile).
 */
int cw_assume_worker_identity(uint32_t owner_uid, uint32_t owner_gid, uint32_t uid, uint32_t gid,
                              const uint32_t *groups, size_t group_count);

/** Nice values: of work in the background (cw_become_background: a processing worker as it starts, the
    thread that writes final reports), and of a worker promoted (cw_worker_promote) when found starved or
    halfway to its deadline. */
#define CW_BACKGROUND_NICE 19
#define CW_WORKER_NICE 0

/** Moves a processing worker (started in the background by cw_spawn_worker) to SCHED_OTHER at nice
    CW_WORKER_NICE, so that a machine kept busy cannot starve it; 0 or an errno (EPERM without CAP_SYS_NICE or
    RLIMIT_NICE). */
int cw_worker_promote(pid_t pid);

/** Puts the calling thread in the background: SCHED_BATCH at nice CW_BACKGROUND_NICE, for work that must not
    take a CPU from the tracer thread or a traced program. 0 or an errno. One way: leaving it needs
    CAP_SYS_NICE. */
int cw_become_background(void);

/** Makes the calling process give up its CPU (sched_yield) every `microseconds` (ITIMER_REAL, a SIGALRM
    handler with SA_RESTART): for a processing worker, so that a task the scheduler queued behind it on its
    CPU waits at most about that long. Only for a process started in the background (SCHED_BATCH), and it
    stops once the process is no longer SCHED_BATCH (promoted). 0 or an errno. */
int cw_yield_every(unsigned microseconds);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_WORKER_H */
