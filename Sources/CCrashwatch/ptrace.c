/*
 * ptrace.c — ptrace(2) with a fixed signature (glibc declares it variadic, which Swift cannot call),
 * siginfo flattened into plain fields, register sets, and a probe of the calls the tracer needs.
 */
#define _GNU_SOURCE
#include "ccrashwatch/ptrace.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

_Static_assert(CW_PTRACE_SEIZE == PTRACE_SEIZE, "PTRACE_SEIZE");
_Static_assert(CW_PTRACE_LISTEN == PTRACE_LISTEN, "PTRACE_LISTEN");
_Static_assert(CW_PTRACE_SETOPTIONS == PTRACE_SETOPTIONS, "PTRACE_SETOPTIONS");
_Static_assert(CW_PTRACE_INTERRUPT == PTRACE_INTERRUPT, "PTRACE_INTERRUPT");
_Static_assert(CW_PTRACE_GETREGSET == PTRACE_GETREGSET, "PTRACE_GETREGSET");
_Static_assert(CW_PTRACE_O_TRACEEXIT == PTRACE_O_TRACEEXIT, "PTRACE_O_TRACEEXIT");
_Static_assert(CW_PTRACE_EVENT_STOP == PTRACE_EVENT_STOP, "PTRACE_EVENT_STOP");
_Static_assert(CW_WALL == __WALL, "__WALL");

long cw_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data) {
    return ptrace((enum __ptrace_request)request, pid, (void *)addr, (void *)data);
}

int cw_ptrace_getsiginfo(pid_t tid, cw_siginfo *out) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == -1) return -1;
    memset(out, 0, sizeof *out);
    out->signo = si.si_signo;
    out->code = si.si_code;
    out->error = si.si_errno;
    out->pid = si.si_pid;
    out->uid = si.si_uid;
    out->status = si.si_status;
    out->addr = (uint64_t)(uintptr_t)si.si_addr;
#ifdef si_syscall
    out->syscall = si.si_syscall;
    out->arch = si.si_arch;
    if (si.si_signo == SIGSYS) out->addr = (uint64_t)(uintptr_t)si.si_call_addr;
#endif
    return 0;
}

int cw_ptrace_getregset(pid_t tid, int note_type, void *buf, size_t *len) {
    struct iovec iov = {.iov_base = buf, .iov_len = *len};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)note_type, &iov) == -1) return -1;
    *len = iov.iov_len;
    return 0;
}

int cw_probe_syscall(int which) {
    pid_t pid = fork();
    if (pid == -1) return -1;
    if (pid == 0) {
        /* Calls that cannot do anything (no such process; a page of our own stack), so the only ways
         * to fail are a seccomp filter's errno or its kill. */
        long result;
        if (which == CW_PROBE_PTRACE) {
            result = syscall(SYS_ptrace, PTRACE_PEEKDATA, 0, 0, 0);
            _exit(result == -1 && errno != ESRCH && errno != EIO ? 1 : 0);
        }
        unsigned char vector[1];
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t here = (uintptr_t)&vector & ~(uintptr_t)(page - 1);
        result = mincore((void *)here, (size_t)page, vector);
        _exit(result == -1 ? 1 : 0);
    }
    int status = 0;
    pid_t waited;
    do {
        waited = waitpid(pid, &status, __WALL);
    } while (waited == -1 && errno == EINTR);
    if (waited == -1) return -1;
    if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGSYS ? 2 : -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
