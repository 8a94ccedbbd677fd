/*
 * sigkill_self — prints "ready", then raise(SIGKILL). SIGKILL cannot be caught or reported as
 * a crash: the supervisor records an abnormal exit instead of a crash report.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGKILL
 * CRASHES: 0
 * ABNORMAL-EXIT: SIGKILL
 * STDOUT: ready
 */
#include <signal.h>
#include <stdio.h>

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    raise(SIGKILL);
    return 1;
}
