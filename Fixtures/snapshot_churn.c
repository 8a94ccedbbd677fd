/*
 * snapshot_churn — a process that keeps changing while snapshots are taken of it, and counts exactly what it
 * saw, so that a run with snapshots can be compared with one without. `snapshot_churn SIGNALS THREADS FORKS`:
 * a "signals" thread takes SIGNALS real-time signals (SIGRTMIN, queued, each carrying its sequence number
 * 0, 1, 2 …, sent by `snapshot_churn send PID SIGNALS`) and checks they come in order; a "threads" thread
 * creates and joins THREADS short-lived threads one after another; a "forks" thread forks FORKS children,
 * child i exiting with status i % 7, and adds up their statuses. Every other thread blocks SIGRTMIN. Main
 * prints "ready" once the signals thread waits, then, once all three are done (at most 300 s), prints
 * "signals N in order" (or "signals N, M out of order"), "threads T", "forks F statuses S" and exits 0; when
 * the signals do not all come within the time, it prints "signals N of SIGNALS" and exits 1.
 * With THREADS and FORKS both "-", the two churn until standard input ends (the number done then depends on
 * the run), and main prints "threads joined" and "forks statuses right" (every exit status as expected) in
 * their place (each churn pausing 1 ms a round): output that a run with snapshots must print exactly as one without.
 * With SIGNALS "-" too, the number is the sender's: it ends with SIGRTMIN+1 carrying how many it sent (real-time
 * signals are delivered lowest first, so every SIGRTMIN queued before it comes first), and main prints
 * "signals: every one, in order" (or "signals: N of M, K out of order").
 * `snapshot_churn send PID N` queues SIGRTMIN with values 0 … N-1 to PID (retrying while the queue is full)
 * and exits 0; `snapshot_churn send PID -` sends them, 50 µs apart, until its standard input ends, then the
 * SIGRTMIN+1 that says how many, prints "sent N" and exits 0.
 *
 * BUILD: -O2 -g
 * ARGS: 0 200 50
 * EXIT: code 0
 * CRASHES: 0
 * STDOUT: ready\nsignals 0 in order\nthreads 200\nforks 50 statuses 147
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_long received;
static atomic_long disorder;
static atomic_long next_value;
static atomic_int waiting;
static long expected_signals, thread_count, fork_count;
static long threads_done, statuses;
static atomic_int forks_done;
static atomic_int until_eof;
static atomic_int stop_churn;
static long forks_started;
static atomic_long announced = -1;

static void on_end(int signo, siginfo_t *info, void *context)
{
    (void)signo;
    (void)context;
    atomic_store(&announced, info->si_value.sival_int);
}

static void on_signal(int signo, siginfo_t *info, void *context)
{
    (void)signo;
    (void)context;
    long value = info->si_value.sival_int;
    if (value != atomic_load(&next_value))
        atomic_fetch_add(&disorder, 1);
    atomic_store(&next_value, value + 1);
    atomic_fetch_add(&received, 1);
}

static void *signals_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "signals");
    sigset_t none;
    sigemptyset(&none);
    atomic_store(&waiting, 1);
    while (expected_signals < 0 ? atomic_load(&announced) < 0 : atomic_load(&received) < expected_signals)
        sigsuspend(&none);
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

/* Churning until stdin ends, a pause per round: the machine is shared, the point is change, not load. */
static void pace(void)
{
    if (atomic_load(&until_eof)) {
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void *threads_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "threads");
    for (long i = 0; atomic_load(&until_eof) ? !atomic_load(&stop_churn) : i < thread_count; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, nothing, NULL) != 0)
            break;
        pthread_join(thread, NULL);
        threads_done++;
        pace();
    }
    return NULL;
}

static void *forks_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "forks");
    for (long i = 0; atomic_load(&until_eof) ? !atomic_load(&stop_churn) : i < fork_count; i++) {
        forks_started++;
        pid_t child = fork();
        if (child == 0)
            _exit((int)(i % 7));
        if (child < 0)
            break;
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status))
            statuses += WEXITSTATUS(status);
        pace();
    }
    atomic_store(&forks_done, 1);
    return NULL;
}

static int send_signals(pid_t pid, long count)
{
    int until_eof = count < 0;
    if (until_eof) {
        int flags = fcntl(0, F_GETFL);
        fcntl(0, F_SETFL, flags | O_NONBLOCK);
    }
    long i = 0;
    for (; until_eof || i < count; i++) {
        if (until_eof) {
            char byte;
            if (read(0, &byte, 1) == 0)
                break;
            struct timespec pause = {0, 50 * 1000};
            nanosleep(&pause, NULL);
        }
        union sigval value = {.sival_int = (int)i};
        while (sigqueue(pid, SIGRTMIN, value) != 0) {
            if (errno != EAGAIN)
                return 1;
            struct timespec pause = {0, 100 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    if (until_eof) {
        union sigval total = {.sival_int = (int)i};
        while (sigqueue(pid, SIGRTMIN + 1, total) != 0) {
            if (errno != EAGAIN)
                return 1;
            struct timespec pause = {0, 100 * 1000};
            nanosleep(&pause, NULL);
        }
        printf("sent %ld\n", i);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "send") == 0)
        return send_signals((pid_t)atol(argv[2]), strcmp(argv[3], "-") == 0 ? -1 : atol(argv[3]));
    if (argc != 4)
        return 2;
    expected_signals = strcmp(argv[1], "-") == 0 ? -1 : atol(argv[1]);
    thread_count = atol(argv[2]);
    fork_count = atol(argv[3]);
    atomic_store(&until_eof, strcmp(argv[2], "-") == 0 && strcmp(argv[3], "-") == 0);

    /* The end marker must not be taken inside on_signal: a SIGRTMIN+1 delivered there (it is not blocked by
     * SIGRTMIN's own handler) ends the wait, and when that handler returns the thread's mask blocks SIGRTMIN
     * again, so the SIGRTMIN still pending behind the one being handled would never be counted. Blocked here,
     * the marker comes only once no SIGRTMIN is pending: real-time signals are delivered lowest first. */
    struct sigaction action = {0};
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGRTMIN + 1);
    sigaction(SIGRTMIN, &action, NULL);
    action.sa_sigaction = on_end;
    sigaction(SIGRTMIN + 1, &action, NULL);
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN);
    sigaddset(&rt, SIGRTMIN + 1);
    pthread_sigmask(SIG_BLOCK, &rt, NULL);

    pthread_t signals, threads, forks;
    pthread_create(&signals, NULL, signals_main, NULL);
    pthread_create(&threads, NULL, threads_main, NULL);
    pthread_create(&forks, NULL, forks_main, NULL);
    while (!atomic_load(&waiting)) {
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    printf("ready\n");
    fflush(stdout);

    if (atomic_load(&until_eof)) {
        char line[64];
        while (fgets(line, sizeof line, stdin)) {
        }
        atomic_store(&stop_churn, 1);
    }
    pthread_join(threads, NULL);
    pthread_join(forks, NULL);
    for (int tenths = 0; tenths < 3000; tenths++) {
        if (expected_signals < 0 ? atomic_load(&announced) >= 0 : atomic_load(&received) >= expected_signals)
            break;
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (expected_signals < 0) {
        long total = atomic_load(&announced);
        if (total < 0) {
            printf("signals: %ld, no end announced\n", atomic_load(&received));
            return 1;
        }
        pthread_join(signals, NULL);
        if (atomic_load(&received) == total && atomic_load(&disorder) == 0)
            printf("signals: every one, in order\n");
        else
            printf("signals: %ld of %ld, %ld out of order\n", atomic_load(&received), total, atomic_load(&disorder));
    } else if (atomic_load(&received) < expected_signals) {
        printf("signals %ld of %ld\n", atomic_load(&received), expected_signals);
        return 1;
    }
    if (expected_signals < 0) {
        /* said above */
    } else if (atomic_load(&disorder) == 0)
        printf("signals %ld in order\n", atomic_load(&received));
    else
        printf("signals %ld, %ld out of order\n", atomic_load(&received), atomic_load(&disorder));
    if (atomic_load(&until_eof)) {
        long want = 0;
        for (long i = 0; i < forks_started; i++)
            want += i % 7;
        printf("threads joined\nforks statuses %s\n", statuses == want ? "right" : "wrong");
    } else {
        printf("threads %ld\nforks %ld statuses %ld\n", threads_done, fork_count, statuses);
    }
    return 0;
}
