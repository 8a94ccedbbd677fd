/*
 * sigill — executes an undefined instruction in crash_here() on the main thread:
 * ud2 on x86-64 (what __builtin_trap emits there), the permanently undefined "udf #0"
 * (.inst 0x00000000) on aarch64 (__builtin_trap there is brk, which would be SIGTRAP).
 * si_addr is the address of the instruction (not deterministic under ASLR).
 * The si_code below is x86-64's (ud2 gives ILL_ILLOPN); the arm64 kernel reports every
 * undefined instruction as ILL_ILLOPC (arch/arm64/kernel/traps.c, do_undefinstr).
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGILL
 * CRASHES: 1
 * CRASH-SIGNAL: SIGILL
 * CRASH-CODE: ILL_ILLOPN
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#include <stdio.h>

__attribute__((noinline)) void crash_here(void)
{
#if defined(__x86_64__)
    __asm__ volatile("ud2");
#elif defined(__aarch64__)
    __asm__ volatile(".inst 0x00000000");
#else
#error "unsupported architecture"
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
