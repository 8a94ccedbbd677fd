/*
 * signals.c — signal plumbing: a signalfd for the signals the supervisor handles, threads that never take
 * a signal meant for the process, stopping or dying by a signal on purpose (with the supervisor's mask in
 * force), and tgkill, which glibc does not wrap for Swift.
 */
#define _GNU_SOURCE
#include "ccrashwatch/signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd_siginfo");

int cw_tgkill(pid_t pid, pid_t tid, int signo) {
    return (int)syscall(SYS_tgkill, pid, tid, signo);
}

int cw_start_thread(void *(*body)(void *), void *context) {
    pthread_t thread;
    return cw_start_thread_handle(body, context, &thread);
}

int cw_start_thread_handle(void *(*body)(void *), void *context, pthread_t *thread) {
    /* The new thread inherits the mask in force at pthread_create: block everything around it, so there
       is no moment at which a signal for the process could land on the thread. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    int failure = pthread_create(thread, &attributes, body, context);
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
