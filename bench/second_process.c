/*
 * second_process — benchmark helper (bench/bench.py compiles it to .build/bench/second_process).
 *
 *   second_process OUTFILE [DURATION_MS [CRASH_DELAY_MS [INTERVAL_US [THREADS]]]]
 *
 * Run under `crashwatch run` (fork following on, the default). The parent forks two children:
 *
 *   B (the second process) measures, for DURATION_MS (default 800), the latency of its own signal
 *     deliveries: it reads CLOCK_MONOTONIC, sends itself SIGUSR1 (tgkill), and the handler reads
 *     CLOCK_MONOTONIC again; latency = handler time - send time. A traced process's every signal
 *     is a signal-delivery-stop, so each sample is one round trip through crashwatch's ptrace loop:
 *     the kernel stopping B, crashwatch's waitpid seeing it, its PTRACE_CONT, B running again. B
 *     sleeps INTERVAL_US (default 100) between samples, so it is idle most of the time and does
 *     not starve the worker on a small machine.
 *   A (the crashing process) sleeps CRASH_DELAY_MS (default 150), starts THREADS (default 64)
 *     threads parked at recursion depths 16..31 (about 1,600 frames for the worker to unwind and
 *     symbolize), and once all are parked dereferences NULL on its main thread.
 *
 * A records on a shared page the CLOCK_MONOTONIC times at which it started its threads and at
 * which it faulted. B writes OUTFILE: a header line "a_start_ns a_fault_ns", then one line per
 * sample "send_ns latency_ns" (CLOCK_MONOTONIC, the same clock as Python's time.monotonic_ns()).
 * B also prints a summary to stderr: the baseline (samples sent before A started) and the samples
 * sent after A's fault (max and p99). bench.py splits the samples precisely with A's report
 * (holdDurationMs) and the time crashwatch printed "report written to".
 *
 * The parent exits 0 when B succeeded and A died of SIGSEGV, else 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
    volatile int64_t a_start_ns;
    volatile int64_t a_fault_ns;
};

static struct shared *shared;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- A: the crashing process ---- */

static pthread_barrier_t parked;

__attribute__((noinline)) static void park_bottom(void)
{
    pthread_barrier_wait(&parked);
    for (;;)
        pause();
}

__attribute__((noinline)) static void park_level(int level)
{
    if (level > 1)
        park_level(level - 1);
    else
        park_bottom();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void *parked_thread(void *arg)
{
    park_level(16 + (int)(intptr_t)arg % 16);
    return NULL;
}

__attribute__((noinline)) static void crash_now(void)
{
    volatile int *volatile p = NULL;
    shared->a_fault_ns = now_ns();
    *p = 42;
}

static void run_a(int delay_ms, int threads)
{
    struct timespec delay = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000};
    nanosleep(&delay, NULL);
    shared->a_start_ns = now_ns();
    pthread_barrier_init(&parked, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, parked_thread, (void *)(intptr_t)i) != 0) {
            perror("second_process: pthread_create");
            _exit(1);
        }
    }
    pthread_barrier_wait(&parked);
    crash_now();
    _exit(2); /* not reached */
}

/* ---- B: the second process ---- */

static volatile int64_t handled_ns;

static void on_usr1(int signo)
{
    (void)signo;
    handled_ns = now_ns();
}

static int compare(const void *lhs, const void *rhs)
{
    int64_t a = *(const int64_t *)lhs, b = *(const int64_t *)rhs;
    return (a > b) - (a < b);
}

/* max and p99 (microseconds) of latency[i] for sends in [from, to). */
static void summary(const char *what, const int64_t *sent, const int64_t *latency, size_t count, int64_t from, int64_t to)
{
    int64_t *selected = malloc((count + 1) * sizeof *selected);
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (sent[i] >= from && sent[i] < to)
            selected[n++] = latency[i];
    if (n == 0) {
        fprintf(stderr, "second_process: B: %s: no samples\n", what);
    } else {
        qsort(selected, n, sizeof *selected, compare);
        fprintf(stderr, "second_process: B: %s: %zu samples, max %.1f us, p99 %.1f us, median %.1f us\n", what, n,
                selected[n - 1] / 1e3, selected[(n - 1) * 99 / 100] / 1e3, selected[(n - 1) / 2] / 1e3);
    }
    free(selected);
}

static int run_b(const char *path, int duration_ms, int interval_us)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGUSR1, &action, NULL) != 0) {
        perror("second_process: sigaction");
        return 1;
    }
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);

    size_t capacity = (size_t)duration_ms * 1000 / (interval_us > 0 ? interval_us : 1) + 1024;
    int64_t *sent = calloc(capacity, sizeof *sent);
    int64_t *latency = calloc(capacity, sizeof *latency);
    if (!sent || !latency) {
        perror("second_process: calloc");
        return 1;
    }
    /* Touch the arrays now: no page fault inside a measurement. */
    memset(sent, 0, capacity * sizeof *sent);
    memset(latency, 0, capacity * sizeof *latency);

    pid_t pid = getpid();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct timespec pause_between = {0, (long)interval_us * 1000};
    int64_t start = now_ns(), end = start + (int64_t)duration_ms * 1000000;
    size_t count = 0;
    while (count < capacity) {
        handled_ns = 0;
        int64_t before = now_ns();
        if (before >= end)
            break;
        syscall(SYS_tgkill, pid, tid, SIGUSR1);
        int64_t after = handled_ns;
        if (after == 0) {
            fprintf(stderr, "second_process: B: the handler did not run before tgkill returned\n");
            return 1;
        }
        sent[count] = before;
        latency[count] = after - before;
        count++;
        if (interval_us > 0)
            nanosleep(&pause_between, NULL);
    }

    int64_t a_start = shared->a_start_ns, a_fault = shared->a_fault_ns;
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return 1;
    }
    fprintf(out, "%lld %lld\n", (long long)a_start, (long long)a_fault);
    for (size_t i = 0; i < count; i++)
        fprintf(out, "%lld %lld\n", (long long)sent[i], (long long)latency[i]);
    if (fclose(out) != 0) {
        perror(path);
        return 1;
    }
    if (a_start == 0 || a_fault == 0) {
        fprintf(stderr, "second_process: B: A did not crash within B's window (%d ms)\n", duration_ms);
        return 1;
    }
    summary("baseline (before A started)", sent, latency, count, start, a_start);
    summary("after A's fault", sent, latency, count, a_fault, end);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: second_process OUTFILE [DURATION_MS [CRASH_DELAY_MS [INTERVAL_US [THREADS]]]]\n");
        return 2;
    }
    const char *path = argv[1];
    int duration_ms = argc > 2 ? atoi(argv[2]) : 800;
    int delay_ms = argc > 3 ? atoi(argv[3]) : 150;
    int interval_us = argc > 4 ? atoi(argv[4]) : 100;
    int threads = argc > 5 ? atoi(argv[5]) : 64;

    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("second_process: mmap");
        return 1;
    }
    memset((void *)shared, 0, sizeof *shared);

    pid_t b = fork();
    if (b < 0) {
        perror("second_process: fork");
        return 1;
    }
    if (b == 0)
        _exit(run_b(path, duration_ms, interval_us));
    pid_t a = fork();
    if (a < 0) {
        perror("second_process: fork");
        return 1;
    }
    if (a == 0)
        run_a(delay_ms, threads);

    int ok = 1, status;
    for (int left = 2; left > 0;) {
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            perror("second_process: waitpid");
            return 1;
        }
        if (pid == a) {
            left--;
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
                fprintf(stderr, "second_process: A did not die of SIGSEGV (status 0x%x)\n", status);
                ok = 0;
            }
        } else if (pid == b) {
            left--;
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                ok = 0;
        }
    }
    return ok ? 0 : 1;
}
