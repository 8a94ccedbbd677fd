/* Helpers shared by the systemd test programs (compiled on the host with -lsystemd, run under
 * crashwatch inside the test container). */
#ifndef CW_TEST_COMMON_H
#define CW_TEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Writes the formatted text to PATH atomically (PATH.tmp, then rename): a reader sees all or nothing. */
static void write_state(const char *path, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void write_state(const char *path, const char *format, ...)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *file = fopen(tmp, "w");
    if (!file) {
        fprintf(stderr, "cannot write %s: %s\n", tmp, strerror(errno));
        return;
    }
    va_list args;
    va_start(args, format);
    vfprintf(file, format, args);
    va_end(args);
    fclose(file);
    if (rename(tmp, path) != 0) fprintf(stderr, "cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *value = getenv(name);
    return value ? value : fallback;
}

/* "pid=... LISTEN_PID=... ..." lines describing this process and what systemd passed it. */
#define ENV_STATE_FORMAT \
    "pid=%d\nppid=%d\nLISTEN_PID=%s\nLISTEN_FDS=%s\nWATCHDOG_PID=%s\nWATCHDOG_USEC=%s\nNOTIFY_SOCKET=%s\n"
#define ENV_STATE_ARGS                                                                              \
    (int)getpid(), (int)getppid(), env_or("LISTEN_PID", "(unset)"), env_or("LISTEN_FDS", "(unset)"), \
        env_or("WATCHDOG_PID", "(unset)"), env_or("WATCHDOG_USEC", "(unset)"), env_or("NOTIFY_SOCKET", "(unset)")

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
