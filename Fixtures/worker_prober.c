/*
 * worker_prober — the attacker of the worker-boundary tests (Tests/IntegrationTests/WorkerBoundaryTests.swift),
 * run as an unprivileged user beside a root crashwatch. Not run by the fixture table (no EXPECT keys).
 *
 *   worker_prober SECONDS SECRET MARKER
 *
 * For SECONDS it looks every millisecond for crashwatch's processing workers (processes whose command line
 * is `crashwatch __process …`) whose parent's command line holds MARKER (the test's own crashwatch, say by
 * its spool's path: not the workers of other crashwatch processes on the machine) and tries, against each, what a user may do to their own processes: read
 * every descriptor through /proc/PID/fd (looking for SECRET in what it reads), open /proc/PID/mem, signal
 * it (kill with signal 0: the permission check alone), trace it (PTRACE_SEIZE) and open its report file
 * (fd 4) for writing. It prints one line of counts:
 *   workers=N fd=N secret=N mem=N signal=N ptrace=N write=N
 * where each count after `workers` is how many workers let that attempt through. Exits 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>

#define MAX_WORKERS 256

struct worker { int pid; int fd, secret, mem, signal, ptrace, write; };
static struct worker workers[MAX_WORKERS];
static int worker_count;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The first `size` bytes of /proc/PID/NAME; the count read, or -1. */
static ssize_t read_proc(int pid, const char *name, char *buffer, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buffer, size);
    close(fd);
    return n;
}

static int is_worker(int pid, const char *parent_marker)
{
    char line[4096];
    static const char marker[] = "crashwatch\0__process";
    ssize_t n = read_proc(pid, "cmdline", line, sizeof line);
    if (n < (ssize_t)sizeof marker || memcmp(line, marker, sizeof marker) != 0) return 0;
    n = read_proc(pid, "stat", line, sizeof line - 1);
    if (n <= 0) return 0;
    line[n] = 0;
    char *close_paren = strrchr(line, ')');
    int parent = 0;
    if (!close_paren || sscanf(close_paren + 2, "%*c %d", &parent) != 1 || parent <= 0) return 0;
    n = read_proc(parent, "cmdline", line, sizeof line);
    return n > 0 && memmem(line, (size_t)n, parent_marker, strlen(parent_marker)) != NULL;
}

/* Whether the file holds `secret` (read up to 256 MiB). */
static int holds(int fd, const char *secret)
{
    size_t length = strlen(secret), size = 1 << 20, kept = 0, total = 0;
    char *buffer = malloc(size + length);
    if (!buffer) return 0;
    int found = 0;
    ssize_t n;
    while (!found && total < (256u << 20) && (n = read(fd, buffer + kept, size)) > 0) {
        total += (size_t)n;
        size_t have = kept + (size_t)n;
        if (memmem(buffer, have, secret, length)) found = 1;
        kept = have < length ? have : length - 1;
        memmove(buffer, buffer + have - kept, kept);
    }
    free(buffer);
    return found;
}

static void probe(struct worker *w, const char *secret)
{
    char path[96];
    for (int n = 0; n < 16; n++) {
        snprintf(path, sizeof path, "/proc/%d/fd/%d", w->pid, n);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat info;
        if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
            w->fd = 1;
            if (holds(fd, secret)) w->secret = 1;
        }
        close(fd);
    }
    snprintf(path, sizeof path, "/proc/%d/mem", w->pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    if (mem >= 0) { w->mem = 1; close(mem); }
    if (kill(w->pid, 0) == 0) w->signal = 1;
    snprintf(path, sizeof path, "/proc/%d/fd/4", w->pid);
    int out = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (out >= 0) { w->write = 1; close(out); }
    if (!w->ptrace && ptrace(PTRACE_SEIZE, w->pid, 0, 0) == 0) {
        w->ptrace = 1;
        ptrace(PTRACE_DETACH, w->pid, 0, 0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: worker_prober SECONDS SECRET MARKER\n");
        return 2;
    }
    double end = now() + atof(argv[1]);
    const char *secret = argv[2];
    int self = getpid();
    while (now() < end) {
        DIR *proc = opendir("/proc");
        if (!proc) return 1;
        struct dirent *entry;
        while ((entry = readdir(proc)) != NULL) {
            int pid = atoi(entry->d_name);
            if (pid <= 0 || pid == self || !is_worker(pid, argv[3])) continue;
            struct worker *w = NULL;
            for (int i = 0; i < worker_count; i++) if (workers[i].pid == pid) w = &workers[i];
            if (!w && worker_count < MAX_WORKERS) {
                w = &workers[worker_count++];
                memset(w, 0, sizeof *w);
                w->pid = pid;
            }
            if (w) probe(w, secret);
        }
        closedir(proc);
        usleep(1000);
    }
    int totals[6] = {0};
    for (int i = 0; i < worker_count; i++) {
        totals[0] += workers[i].fd; totals[1] += workers[i].secret; totals[2] += workers[i].mem;
        totals[3] += workers[i].signal; totals[4] += workers[i].ptrace; totals[5] += workers[i].write;
    }
    printf("workers=%d fd=%d secret=%d mem=%d signal=%d ptrace=%d write=%d\n", worker_count,
           totals[0], totals[1], totals[2], totals[3], totals[4], totals[5]);
    return 0;
}
