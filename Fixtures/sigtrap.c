/*
 * sigtrap — executes a breakpoint instruction in crash_here() on the main thread:
 * int3 on x86-64, brk #0 on aarch64.
 * On x86-64 the kernel reports int3 with si_code SI_KERNEL (0x80), not TRAP_BRKPT, and
 * si_addr 0; the pc is just past the int3 (the trap is reported after the instruction).
 * On aarch64 brk gives TRAP_BRKPT with si_addr = the brk instruction.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGTRAP
 * CRASHES: 1
 * CRASH-SIGNAL: SIGTRAP
 * CRASH-CODE: SI_KERNEL
 * (no CRASH-ADDR: with SI_KERNEL the kernel gives no fault address)
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#include <stdio.h>

__attribute__((noinline)) void crash_here(void)
{
#if defined(__x86_64__)
    __asm__ volatile("int3");
#elif defined(__aarch64__)
    __asm__ volatile("brk #0");
#else
#error "unsupported architecture"
#endif
    /* Something after the breakpoint, so the x86-64 pc (just past int3) is still in crash_here. */
    __asm__ volatile("nop");
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
