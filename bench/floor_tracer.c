/*
 * floor_tracer — benchmark helper (bench/bench.py compiles it to .build/bench/floor_tracer, -O2).
 *
 *   floor_tracer COMMAND [ARG...]
 *
 * The thinnest ptrace supervisor that does what `crashwatch run` must do to follow a program: the
 * floor crashwatch's supervision cost is compared with. It spawns and seizes COMMAND the way
 * crashwatch does (Sources/CCrashwatch/spawn.c, cw_spawn_traced): fork; the child raises SIGSTOP and
 * then execvp's COMMAND; the parent waits for that stop (WUNTRACED | __WALL), seizes the child with
 * crashwatch's default options (Ptrace.seizeOptions(followForks: true)):
 *
 *     PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT
 *
 * and sends it SIGCONT. Then one loop over every traced task: waitpid(-1, __WALL | WNOHANG), up to
 * 200 empty polls in a row (crashwatch's busyPolls) before one blocking waitpid(-1, __WALL). Per
 * report it does the minimum, one ptrace call at most:
 *
 *   signal-delivery-stop (stopped, no event)          PTRACE_CONT with that signal
 *   group-stop (PTRACE_EVENT_STOP, SIGSTOP/TSTP/TTIN/TTOU)  PTRACE_LISTEN
 *   any other stop (PTRACE_EVENT_STOP of a new task or after a SIGCONT, CLONE, FORK, VFORK, EXEC,
 *   EXIT, VFORK_DONE)                                  PTRACE_CONT 0
 *   exited or killed, not the main child              nothing (reaped by that waitpid)
 *   exited or killed, the main child                  floor_tracer ends as it did: the same exit
 *                                                     code, or the same signal raised on itself (core
 *                                                     dumps off); other traced tasks are detached by
 *                                                     the kernel as the tracer exits
 *
 * ESRCH from a ptrace call (the task was killed meanwhile) is ignored: its exit is the next report.
 * It counts the reports by kind (an array increment each); when FLOOR_TRACER_STATS names a file, it
 * writes the counts there as it ends, one "name count" per line (bench.py shows what each workload
 * costs in stops): signal-N, group-stop, event-stop, clone, fork, vfork, vfork-done, exec, exit, ended.
 * With FLOOR_TRACER_POLICY=1 it also makes, before resuming, the requests crashwatch's crash policy
 * needs at each stop (Sources/CrashwatchSupervisor/EventLoop.swift, StopRouting.swift) and nothing else — the floor of any
 * supervisor that must know what crashwatch knows:
 *
 *   crash signal (SEGV BUS ILL FPE ABRT TRAP SYS QUIT XCPU XFSZ)   pread of /proc/TID/task/TID/stat, kept open per
 *                                                     thread (is it handled?), PTRACE_GETSIGINFO; when
 *                                                     handled, PTRACE_GETREGSET (the original fault of a
 *                                                     handler that re-raises)
 *   EXIT stop                                         PTRACE_GETEVENTMSG (the exit status: a SIGKILL or a
 *                                                     forced crash signal is captured there)
 *   EXEC and VFORK stops                              PTRACE_GETEVENTMSG (the former tid; the child)
 *
 * With FLOOR_TRACER_TIMES naming a file, it times (CLOCK_MONOTONIC) at each exit stop the requests above and
 * the PTRACE_CONT after them, and writes their 10th, 50th, 90th and 99th percentiles there as it ends
 * ("requests" and "resume", nanoseconds, over the first 262,144 exit stops): what a request costs on a
 * just-stopped tracee, and what it does to the resume after it.
 *
 * It is not a subreaper and keeps no per-task state beyond those files. SIGTERM, SIGINT, SIGQUIT and SIGHUP sent to it
 * are passed to the main child (kill, from a handler: no cost per stop), so bench.py stops servers the
 * same way under bare, floor_tracer and crashwatch: by signalling the process it started.
 * Exit status: COMMAND's; 127 when it cannot be run; 1 when floor_tracer itself fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUSY_POLLS 200
#define SEIZE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)

static volatile pid_t main_child;

/* Reports seen, by kind: [0, NSIG) signal-delivery-stops by signal, then the ones named below. */
enum { GROUP_STOP = 65, EVENT_STOP, CLONE, FORK, VFORK, VFORK_DONE, EXEC, EXIT, OTHER_EVENT, ENDED, KINDS };
static unsigned long counts[KINDS];

static void write_stats(void)
{
    const char *path = getenv("FLOOR_TRACER_STATS");
    if (path == NULL || *path == 0)
        return;
    FILE *file = fopen(path, "w");
    if (file == NULL)
        return;
    static const char *names[KINDS] = {[GROUP_STOP] = "group-stop", [EVENT_STOP] = "event-stop", [CLONE] = "clone",
                                       [FORK] = "fork", [VFORK] = "vfork", [VFORK_DONE] = "vfork-done", [EXEC] = "exec",
                                       [EXIT] = "exit", [OTHER_EVENT] = "other-event", [ENDED] = "ended"};
    for (int kind = 0; kind < KINDS; kind++) {
        if (counts[kind] == 0)
            continue;
        if (kind < GROUP_STOP)
            fprintf(file, "signal-%d %lu\n", kind, counts[kind]);
        else
            fprintf(file, "%s %lu\n", names[kind], counts[kind]);
    }
    fclose(file);
}

/* FLOOR_TRACER_TIMES: nanoseconds of the requests and of the resume at each exit stop. */
#define TIMED_STOPS 262144
static long long request_times[TIMED_STOPS], resume_times[TIMED_STOPS];
static int timed_stops;

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void write_times(void)
{
    const char *path = getenv("FLOOR_TRACER_TIMES");
    if (path == NULL || *path == 0 || timed_stops == 0)
        return;
    FILE *file = fopen(path, "w");
    if (file == NULL)
        return;
    const char *names[2] = {"requests", "resume"};
    long long *series[2] = {request_times, resume_times};
    for (int which = 0; which < 2; which++) {
        qsort(series[which], (size_t)timed_stops, sizeof(long long), by_value);
        fprintf(file, "%s", names[which]);
        const int percent[4] = {10, 50, 90, 99};
        for (int i = 0; i < 4; i++)
            fprintf(file, " p%d %lld", percent[i], series[which][(long long)timed_stops * percent[i] / 100]);
        fprintf(file, " (ns, %d exit stops)\n", timed_stops);
    }
    fclose(file);
}

static void pass_on(int signo)
{
    int saved = errno;
    if (main_child > 0)
        kill(main_child, signo);
    errno = saved;
}

static void end_as(int status)
{
    write_stats();
    write_times();
    if (WIFEXITED(status))
        exit(WEXITSTATUS(status));
    int signo = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(signo, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(signo);
    exit(128 + signo);
}

/* FLOOR_TRACER_POLICY: the files /proc/TID/task/TID/stat kept open, by tid modulo the table's size. */
#define STAT_FILES 4096
static struct { pid_t tid; int fd; } stat_files[STAT_FILES];

static int is_crash_signal(int signo)
{
    switch (signo) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGABRT:
    case SIGTRAP: case SIGSYS: case SIGQUIT: case SIGXCPU: case SIGXFSZ:
        return 1;
    }
    return 0;
}

/* Whether thread `tid` has a handler for `signo`: field 34 (sigcatch) of its kept-open stat file. */
static int is_handled(pid_t tid, int signo)
{
    unsigned slot = (unsigned)tid % STAT_FILES;
    if (stat_files[slot].tid != tid || stat_files[slot].fd <= 0) {
        if (stat_files[slot].fd > 0)
            close(stat_files[slot].fd);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)tid, (int)tid);
        stat_files[slot].tid = tid;
        stat_files[slot].fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    char line[1024];
    ssize_t count = stat_files[slot].fd > 0 ? pread(stat_files[slot].fd, line, sizeof line - 1, 0) : -1;
    if (count <= 0)
        return 0;
    line[count] = 0;
    char *field = strrchr(line, ')'); /* field 3 follows the command name's closing parenthesis */
    for (int number = 2; field != NULL && number < 34; number++)
        field = strchr(field + 1, ' ');
    return field != NULL && (strtoull(field + 1, NULL, 10) >> (signo - 1) & 1);
}

static void forget_stat_file(pid_t tid)
{
    unsigned slot = (unsigned)tid % STAT_FILES;
    if (stat_files[slot].tid == tid && stat_files[slot].fd > 0) {
        close(stat_files[slot].fd);
        stat_files[slot].fd = 0;
    }
}

static int is_stop_signal(int signo)
{
    return signo == SIGSTOP || signo == SIGTSTP || signo == SIGTTIN || signo == SIGTTOU;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: floor_tracer COMMAND [ARG...]\n");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("floor_tracer: fork");
        return 1;
    }
    if (pid == 0) {
        raise(SIGSTOP); /* the parent seizes us while we are stopped here */
        execvp(argv[1], argv + 1);
        fprintf(stderr, "floor_tracer: %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    int status;
    pid_t waited;
    do {
        waited = waitpid(pid, &status, WUNTRACED | __WALL);
    } while (waited < 0 && errno == EINTR);
    if (waited < 0 || !WIFSTOPPED(status)) {
        fprintf(stderr, "floor_tracer: the child did not stop before exec\n");
        return 1;
    }
    if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)SEIZE_OPTIONS) < 0) {
        perror("floor_tracer: PTRACE_SEIZE");
        kill(pid, SIGKILL);
        return 1;
    }
    main_child = pid;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = pass_on;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    int passed[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP};
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
        sigaction(passed[i], &action, NULL);
    kill(pid, SIGCONT);

    int policy = getenv("FLOOR_TRACER_POLICY") != NULL && strcmp(getenv("FLOOR_TRACER_POLICY"), "1") == 0;
    int timing = getenv("FLOOR_TRACER_TIMES") != NULL && *getenv("FLOOR_TRACER_TIMES") != 0;
    int idle = 0;
    for (;;) {
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid == 0) {
            if (++idle < BUSY_POLLS)
                continue;
            tid = waitpid(-1, &status, __WALL);
        }
        idle = 0;
        if (tid < 0) {
            if (errno == EINTR)
                continue;
            perror("floor_tracer: waitpid");
            return 1;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            counts[ENDED]++;
            if (policy)
                forget_stat_file(tid);
            if (tid == pid)
                end_as(status);
            continue;
        }
        if (!WIFSTOPPED(status))
            continue;
        int signo = WSTOPSIG(status);
        int event = (unsigned)status >> 16;
        if (event == 0) {
            counts[signo < GROUP_STOP ? signo : 0]++;
            if (policy && is_crash_signal(signo)) {
                int handled = is_handled(tid, signo);
                siginfo_t info;
                ptrace(PTRACE_GETSIGINFO, tid, NULL, &info);
                if (handled) {
                    struct user_regs_struct registers;
                    struct iovec vector = {&registers, sizeof registers};
                    ptrace(PTRACE_GETREGSET, tid, (void *)1 /* NT_PRSTATUS */, &vector);
                }
            }
            ptrace(PTRACE_CONT, tid, NULL, (void *)(long)signo); /* signal-delivery-stop */
        } else if (event == PTRACE_EVENT_STOP && is_stop_signal(signo)) {
            counts[GROUP_STOP]++;
            ptrace(PTRACE_LISTEN, tid, NULL, NULL); /* group-stop */
        } else {
            switch (event) {
            case PTRACE_EVENT_STOP: counts[EVENT_STOP]++; break;
            case PTRACE_EVENT_CLONE: counts[CLONE]++; break;
            case PTRACE_EVENT_FORK: counts[FORK]++; break;
            case PTRACE_EVENT_VFORK: counts[VFORK]++; break;
            case PTRACE_EVENT_VFORK_DONE: counts[VFORK_DONE]++; break;
            case PTRACE_EVENT_EXEC: counts[EXEC]++; break;
            case PTRACE_EVENT_EXIT: counts[EXIT]++; break;
            default: counts[OTHER_EVENT]++; break;
            }
            int timed = timing && event == PTRACE_EVENT_EXIT && timed_stops < TIMED_STOPS;
            long long started = timed ? now_ns() : 0, requested = started;
            if (policy && (event == PTRACE_EVENT_EXIT || event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_VFORK)) {
                unsigned long message;
                ptrace(PTRACE_GETEVENTMSG, tid, NULL, &message);
                requested = timed ? now_ns() : 0;
            }
            ptrace(PTRACE_CONT, tid, NULL, NULL); /* every other event stop */
            if (timed) {
                request_times[timed_stops] = requested - started;
                resume_times[timed_stops++] = now_ns() - requested;
            }
        }
    }
}
