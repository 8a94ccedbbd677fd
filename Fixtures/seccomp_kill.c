/*
 * seccomp_kill — sigsys.c built with the filter answering SECCOMP_RET_KILL_PROCESS for getppid, as systemd's
 * SystemCallFilter= does by default. The kernel then forces SIGSYS past the signal-delivery stop (the
 * signal is SA_IMMUTABLE): a tracer never sees it being delivered, only each thread's PTRACE_EVENT_EXIT
 * stop with the death status, so crashwatch captures the process there. No siginfo is known then: the
 * report says SI_KERNEL and carries a soft error saying why. The registers are still those of the
 * syscall instruction in crash_here.
 * If the filter cannot be installed (e.g. under qemu-user), it prints the error to stderr and exits
 * with code 2.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSYS
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSYS
 * CRASH-CODE: SI_KERNEL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define FIXTURE_ACTION SECCOMP_RET_KILL_PROCESS
#define FIXTURE_NAME "seccomp_kill"
#include "sigsys.c"
