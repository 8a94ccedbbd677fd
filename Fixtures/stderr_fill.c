/*
 * stderr_fill — with an argument N, a thread writes N bytes to standard error, which crashwatch shares,
 * and the main thread crashes 200 ms later. Given a stream nobody reads yet (a pipe whose reader waits),
 * the thread blocks once the pipe is full, and so would any other writer: crashwatch must neither hold
 * the crashed process nor stop answering other processes while its own crash line waits for the stream.
 * Without an argument nothing is written and it just crashes.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t fill_bytes;

static void *filler(void *arg)
{
    (void)arg;
    char *bytes = malloc(fill_bytes);
    if (!bytes)
        return NULL;
    memset(bytes, 'x', fill_bytes);
    size_t done = 0;
    while (done < fill_bytes) {
        ssize_t written = write(2, bytes + done, fill_bytes - done);
        if (written <= 0)
            break;
        done += (size_t)written;
    }
    return NULL;
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(int argc, char **argv)
{
    fill_bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    pthread_t thread;
    if (fill_bytes > 0)
        pthread_create(&thread, NULL, filler, NULL);
    usleep(200000);
    crash_here();
    return 0;
}
