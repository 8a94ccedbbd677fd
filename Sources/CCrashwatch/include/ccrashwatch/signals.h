/*
 * signals.h — signal plumbing (signals.c): signals read through a signalfd, threads that take none,
 * stopping or dying by a signal on purpose, and tgkill.
 */
#ifndef CCRASHWATCH_SIGNALS_H
#define CCRASHWATCH_SIGNALS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <pthread.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/** tgkill(2): sends `signo` to thread `tid` of process `pid`. */
int cw_tgkill(pid_t pid, pid_t tid, int signo);

/** Starts a detached thread running `body(context)` with every signal blocked (it never takes one meant for
    the process); 0 or an errno. */
int cw_start_thread(void *(*body)(void *), void *context);

/** cw_start_thread, the new thread's handle stored in `*thread` when it started. */
int cw_start_thread_handle(void *(*body)(void *), void *context, pthread_t *thread);

/** Blocks `signals` in the calling thread (returning the previous mask) and opens a signalfd for them. */
int cw_block_and_open_signalfd(const int *signals, size_t count, sigset_t *previous_mask);

/** One signal read from a signalfd. */
typedef struct {
    int32_t signo;
    int32_t code;
    int32_t pid;
    uint32_t uid;
} cw_signal_event;

/** Reads one signal from a non-blocking signalfd. Returns 1 when one was read, 0 when none is pending, -1 on error. */
int cw_signalfd_read(int fd, cw_signal_event *out);

/**
 * Stops the calling process with `signo` (SIGTSTP, SIGTTIN or SIGTTOU) even though the supervisor keeps those
 * signals blocked, unless a SIGCONT is already pending (blocked, not read yet): that SIGCONT ended the stop
 * being mirrored, and stopping now would wait for another that may never come. Returns 1 once the process
 * has been stopped and continued (or the stop's default action did nothing: ignored, orphaned group),
 * 0 when it did not stop because of the pending SIGCONT.
 */
int cw_stop_self(int signo);

/**
 * Terminates the calling process by `signo` with its default action and without a core dump of its own.
 * Returns only when the signal could not kill the process (PID 1 of a PID namespace ignores it).
 */
void cw_die_by_signal(int signo);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SIGNALS_H */
