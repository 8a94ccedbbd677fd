/*
 * sigfpe — integer division by zero (volatile operands) in crash_here() on the main thread.
 * On x86-64 the idiv instruction traps: SIGFPE with FPE_INTDIV, si_addr = the idiv.
 * aarch64 integer division never traps (x / 0 == 0), so there crash_here() follows the
 * division with an inline rt_tgsigqueueinfo system call that queues the same
 * SIGFPE/FPE_INTDIV to its own thread (allowed for one's own process), pc still in crash_here.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGFPE
 * CRASHES: 1
 * CRASH-SIGNAL: SIGFPE
 * CRASH-CODE: FPE_INTDIV
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile int numerator = 7;
volatile int denominator = 0;
volatile int quotient;

__attribute__((noinline)) void crash_here(void)
{
    quotient = numerator / denominator;
#if defined(__aarch64__)
    {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_signo = SIGFPE;
        info.si_code = FPE_INTDIV;
        info.si_addr = (void *)crash_here;
        register long x0 __asm__("x0") = getpid();
        register long x1 __asm__("x1") = syscall(SYS_gettid);
        register long x2 __asm__("x2") = SIGFPE;
        register long x3 __asm__("x3") = (long)&info;
        register long x8 __asm__("x8") = SYS_rt_tgsigqueueinfo;
        __asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3), "r"(x8) : "memory");
    }
#endif
}

__attribute__((noinline)) void caller(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    caller();
    return 0;
}
