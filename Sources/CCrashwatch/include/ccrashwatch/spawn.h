/*
 * spawn.h — starting the traced program and ending like it (spawn.c): fork and exec in C, because
 * only async-signal-safe calls may run between them and the Swift runtime has threads; the unsupervised
 * exec, the split for Type=forking services, and the process calls around a child's life.
 */
#ifndef CCRASHWATCH_SPAWN_H
#define CCRASHWATCH_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Forks a child that restores `child_mask`, stops itself with SIGSTOP and then execs the first of
 * `paths` that the kernel accepts, with `argv` and `envp` (NULL: the inherited environment), where
 * LISTEN_PID and WATCHDOG_PID naming the parent are rewritten to name the child (ENOEXEC files run through
 * /bin/sh, like execvp). The parent waits for the stop, seizes the child with `ptrace_options`
 * and continues it; the exec itself then happens under trace.
 *
 * On success returns 0 and sets `*pid_out` and `*error_fd_out`: the read end of a close-on-exec pipe
 * that yields EOF once the exec succeeded, or an `int` errno when every path failed (the child then
 * exits with status 127).
 */
int cw_spawn_traced(char *const *paths, size_t path_count, char *const *argv, char *const *envp,
                    const sigset_t *child_mask, unsigned long ptrace_options,
                    pid_t *pid_out, int *error_fd_out);

/**
 * Replaces this process with the command, unsupervised: restores `mask`, then execs the first of `paths`
 * the kernel accepts with `argv` and this process's environment, exactly as `cw_spawn_traced`'s child does
 * (ENOEXEC files through /bin/sh). Returns only when every path failed: the decisive errno.
 */
int cw_exec_command(char *const *paths, size_t path_count, char *const *argv, const sigset_t *mask);

/**
 * For `run --pid-file` (a Type=forking service): forks. The parent — the process systemd started — waits
 * for the child's `cw_report_status` and then exits as that wait status says (never returns; 71 if the
 * child died first). In the child, returns the pipe to report on (-1 with errno if the fork failed).
 */
int cw_split_supervisor(void);

/** Sends a raw wait status to the waiting parent of `cw_split_supervisor` and closes `fd`. */
int cw_report_status(int fd, int status);

/** Marks the calling process as a child subreaper (prctl PR_SET_CHILD_SUBREAPER). */
int cw_set_child_subreaper(void);

/** pidfd_open(2): a close-on-exec descriptor that becomes readable when process `pid` ends; -1 with errno. */
int cw_pidfd_open(pid_t pid);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_SPAWN_H */
