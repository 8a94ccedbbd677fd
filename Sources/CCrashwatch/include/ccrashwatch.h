/*
 * ccrashwatch.h — the C shim under crashwatch.
 *
 * Everything Swift cannot call directly lives here: glibc's variadic ptrace(), prctl() and the
 * fork+exec sequence that must run async-signal-safe code only. Every symbol is prefixed `cw_`.
 * Functions return -1 and leave errno set on failure, like the system calls they wrap.
 */
#ifndef CCRASHWATCH_H
#define CCRASHWATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ptrace requests and options used by crashwatch (values from <linux/ptrace.h>). */
#define CW_PTRACE_CONT 7
#define CW_PTRACE_DETACH 17
#define CW_PTRACE_SETOPTIONS 0x4200
#define CW_PTRACE_GETEVENTMSG 0x4201
#define CW_PTRACE_GETSIGINFO 0x4202
#define CW_PTRACE_GETREGSET 0x4204
#define CW_PTRACE_SEIZE 0x4206
#define CW_PTRACE_INTERRUPT 0x4207
#define CW_PTRACE_LISTEN 0x4208

#define CW_PTRACE_O_TRACEFORK 2
#define CW_PTRACE_O_TRACEVFORK 4
#define CW_PTRACE_O_TRACECLONE 8
#define CW_PTRACE_O_TRACEEXEC 0x10
#define CW_PTRACE_O_TRACEEXIT 0x40

#define CW_PTRACE_EVENT_FORK 1
#define CW_PTRACE_EVENT_VFORK 2
#define CW_PTRACE_EVENT_CLONE 3
#define CW_PTRACE_EVENT_EXEC 4
#define CW_PTRACE_EVENT_VFORK_DONE 5
#define CW_PTRACE_EVENT_EXIT 6
#define CW_PTRACE_EVENT_STOP 128

/* waitpid flags (the __W* ones are not exported to Swift by glibc's headers). */
#define CW_WNOHANG 1
#define CW_WUNTRACED 2
#define CW_WALL 0x40000000

/* ELF note types for PTRACE_GETREGSET. */
#define CW_NT_PRSTATUS 1
#define CW_NT_ARM_PAC_MASK 0x406

/** Calls ptrace(2) with a fixed signature. Returns the kernel's result; -1 with errno on failure. */
long cw_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data);

/** A siginfo_t flattened into plain fields; which ones mean something depends on signo and code. */
typedef struct {
    int32_t signo;
    int32_t code;
    int32_t error;
    int32_t pid;      /* si_pid: sender (SI_USER, SI_TKILL, SI_QUEUE) or child (SIGCHLD) */
    uint32_t uid;     /* si_uid */
    int32_t status;   /* si_status (SIGCHLD) */
    uint64_t addr;    /* si_addr: fault address (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP); call address (SIGSYS) */
    int32_t syscall;  /* si_syscall (SIGSYS with SYS_SECCOMP) */
    uint32_t arch;    /* si_arch (SIGSYS with SYS_SECCOMP) */
} cw_siginfo;

/** PTRACE_GETSIGINFO for a tracee in a signal-delivery-stop, flattened. */
int cw_ptrace_getsiginfo(pid_t tid, cw_siginfo *out);

/** PTRACE_GETREGSET with an iovec; on success `*len` is the number of bytes the kernel filled. */
int cw_ptrace_getregset(pid_t tid, int note_type, void *buf, size_t *len);

/**
 * Forks a child that restores `child_mask`, stops itself with SIGSTOP and then execs the first of
 * `paths` that the kernel accepts, with `argv` and `envp` (NULL: the inherited environment), where
 * LISTEN_PID and WATCHDOG_PID naming the parent are rewritten to name the child (ENOEXEC files run through
 * /bin/sh, like execvp). The parent waits for the stop, seizes the child with `ptrace_options`
 * and continues it; the exec itself then happens under trace.
 *
 * On success returns 0 and sets `*pid_out` and `*error_fd_out`: the read end of a close-on-exec pipe
 * that yields EOF once the exec succeeded, or an `int` errno when every path failed (the child then
 * exits with status 127).
 */
int cw_spawn_traced(char *const *paths, size_t path_count, char *const *argv, char *const *envp,
                    const sigset_t *child_mask, unsigned long ptrace_options,
                    pid_t *pid_out, int *error_fd_out);

/** tgkill(2): sends `signo` to thread `tid` of process `pid`. */
int cw_tgkill(pid_t pid, pid_t tid, int signo);

/** pidfd_open(2): a close-on-exec descriptor that becomes readable when process `pid` ends; -1 with errno. */
int cw_pidfd_open(pid_t pid);

/**
 * Drops the read-only pages (code, constants) of every loaded object from the process's resident set, as
 * MADV_DONTNEED does: unchanged from their files, they come back from the page cache on their next use.
 * The pages only loading and start-up touched (relocation tables, initialisers, option parsing) stay out.
 */
void cw_drop_loaded_pages(void);

/**
 * Makes freed heap memory go back to the system as it is freed: blocks of 128 KiB and more get mappings of
 * their own (unmapped when freed), and a heap whose free top grows past 128 KiB is cut back. Without it glibc
 * raises both thresholds after the first large block is freed (up to 32 MiB), and a thread's arena then
 * keeps what one big crash report needed for the rest of the process's life. Process-wide; any thread.
 */
void cw_malloc_return_promptly(void);

/** Gives the free pages inside every arena back to the system (glibc's malloc_trim(0)); 1 when any went. */
int cw_malloc_trim(void);

/** Marks the calling process as a child subreaper (prctl PR_SET_CHILD_SUBREAPER). */
int cw_set_child_subreaper(void);

/** Nice values: of work in the background (cw_become_background: a processing worker as it starts, the
    thread that writes final reports), and of a worker promoted (cw_worker_promote) when found starved or
    halfway to its deadline. */
#define CW_BACKGROUND_NICE 19
#define CW_WORKER_NICE 0

/** Moves a processing worker (started in the background by cw_spawn_worker) to SCHED_OTHER at nice
    CW_WORKER_NICE, so that a machine kept busy cannot starve it; 0 or an errno (EPERM without CAP_SYS_NICE or
    RLIMIT_NICE). */
int cw_worker_promote(pid_t pid);

/** Puts the calling thread in the background: SCHED_BATCH at nice CW_BACKGROUND_NICE, for work that must not
    take a CPU from the tracer thread or a traced program. 0 or an errno. One way: leaving it needs
    CAP_SYS_NICE. */
int cw_become_background(void);

/** Makes the calling process give up its CPU (sched_yield) every `microseconds` (ITIMER_REAL, a SIGALRM
    handler with SA_RESTART): for a processing worker, so that a task the scheduler queued behind it on its
    CPU waits at most about that long. Only for a process started in the background (SCHED_BATCH), and it
    stops once the process is no longer SCHED_BATCH (promoted). 0 or an errno. */
int cw_yield_every(unsigned microseconds);

/** pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start; 0 or -1 with errno. */
int cw_pipe_cloexec(int fds[2]);

/** Starts a detached thread running `body(context)` with every signal blocked (it never takes one meant for
    the process); 0 or an errno. */
int cw_start_thread(void *(*body)(void *), void *context);

/** Blocks `signals` in the calling thread (returning the previous mask) and opens a signalfd for them. */
int cw_block_and_open_signalfd(const int *signals, size_t count, sigset_t *previous_mask);

/** One signal read from a signalfd. */
typedef struct {
    int32_t signo;
    int32_t code;
    int32_t pid;
    uint32_t uid;
} cw_signal_event;

/** Reads one signal from a non-blocking signalfd. Returns 1 when one was read, 0 when none is pending, -1 on error. */
int cw_signalfd_read(int fd, cw_signal_event *out);

/**
 * Stops the calling process with `signo` (SIGTSTP, SIGTTIN or SIGTTOU) even though the supervisor keeps those
 * signals blocked, unless a SIGCONT is already pending (blocked, not read yet): that SIGCONT ended the stop
 * being mirrored, and stopping now would wait for another that may never come. Returns 1 once the process
 * has been stopped and continued (or the stop's default action did nothing: ignored, orphaned group),
 * 0 when it did not stop because of the pending SIGCONT.
 */
int cw_stop_self(int signo);

/**
 * Terminates the calling process by `signo` with its default action and without a core dump of its own.
 * Returns only when the signal could not kill the process (PID 1 of a PID namespace ignores it).
 */
void cw_die_by_signal(int signo);


/** Limits and identity of a processing worker (cw_spawn_worker). Zero limits are left as inherited. */
typedef struct {
    uint64_t address_space_bytes; /* RLIMIT_AS */
    uint64_t cpu_seconds;         /* RLIMIT_CPU (soft; the hard limit is one second more) */
    uint64_t file_size_bytes;     /* RLIMIT_FSIZE (soft): caps what it can write */
    uint64_t file_size_hard_bytes; /* RLIMIT_FSIZE (hard): what its debug-cache writer may raise it to */
    int32_t background;           /* SCHED_BATCH at nice CW_BACKGROUND_NICE (cw_become_background), first thing */
} cw_worker_limits;

/**
 * Forks and execs a worker: its own session, killed when its parent dies (PR_SET_PDEATHSIG),
 * empty signal mask and default dispositions, `fds` as descriptors 3, 4, … and nothing else open
 * above 2, `limits` applied, no new privileges, not dumpable, crashwatch's own credentials (the
 * worker changes them itself: cw_assume_worker_identity). With
 * `stderr_fd` >= 0 its standard error is that file and its standard input and output /dev/null; with -1
 * it keeps the caller's three. Exit status 126 from the child means the set-up failed, 127 that exec failed.
 */
int cw_spawn_worker(const char *path, char *const *argv, char *const *envp, const int *fds, size_t fd_count,
                    int stderr_fd, const cw_worker_limits *limits, pid_t *pid_out);

/** memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING). */
int cw_memfd(const char *name);

/** Seals a memfd for good: no write, shrink or grow by anyone holding it, no seal removed. 0 or an errno
    (EBUSY while a writable shared mapping of it exists). */
int cw_memfd_seal(int fd);

/**
 * For a processing worker, its first act: becomes owner_uid/owner_gid (real and saved ids: whom the
 * kernel's signal and ptrace checks see) with the file access of uid/gid/groups (effective, hence
 * filesystem, ids), irreversibly, with no capability left, not dumpable, killed when its parent dies.
 * 0 or an errno (ESRCH: the parent died meanwhile).
 */
int cw_assume_worker_identity(uint32_t owner_uid, uint32_t owner_gid, uint32_t uid, uint32_t gid,
                              const uint32_t *groups, size_t group_count);

/** prctl(PR_GET_DUMPABLE): 0 not dumpable, 1 dumpable by its user, 2 by root only. */
int cw_is_dumpable(void);

/* ---- unwinding over a captured address space (unwind.c) ---- */

/**
 * A process's address space as captured: byte ranges (stack and image bytes copied while it was held),
 * file-backed ranges (image files the caller opened and checked) and the loaded images. Unwinding
 * reads nothing else.
 */
typedef struct cw_space cw_space;

/** An empty space; NULL with errno on failure. */
cw_space *cw_space_create(void);

/** Frees the space (not the bytes or descriptors it was given). */
void cw_space_destroy(cw_space *space);

/** Adds `length` bytes at `address`, read from `bytes` (which must outlive the space). 0, or -1 when full. */
int cw_space_add_bytes(cw_space *space, uint64_t address, const void *bytes, uint64_t length);

/** Adds `length` bytes at `address` read from file `fd` at `offset` onwards (the fd must outlive the space). */
int cw_space_add_file(cw_space *space, uint64_t address, uint64_t length, int fd, uint64_t offset);

/** Adds `length` bytes at `address` that read as zeros (an image's data whose contents were not captured). */
int cw_space_add_zeros(cw_space *space, uint64_t address, uint64_t length);

/** Adds a loaded image [start, end) whose ELF header is at `base`: its unwind table is found from there. */
int cw_space_add_image(cw_space *space, uint64_t start, uint64_t end, uint64_t base);

/* Which unwind table covers an address (cw_space_table_kind). */
#define CW_TABLE_NONE 0
#define CW_TABLE_EH_FRAME_HDR 1     /* the image's .eh_frame_hdr */
#define CW_TABLE_EH_FRAME_INDEXED 2 /* its .eh_frame, indexed because .eh_frame_hdr was unusable */
#define CW_TABLE_DEBUG_FRAME 3      /* its file's .debug_frame */

/** Which unwind table serves the image containing `address` (CW_TABLE_*). */
int cw_space_table_kind(cw_space *space, uint64_t address);

/** Gives the image starting at `start` its file (which must outlive the space), where .debug_frame is read
 * when the image has no .eh_frame_hdr. 0, or -1 when no image starts there. */
int cw_space_set_image_file(cw_space *space, uint64_t start, int fd);

/** Reads from the space; returns the bytes read (short where the captured ranges end) or -1. */
ssize_t cw_space_read(cw_space *space, uint64_t address, void *buffer, size_t length);

/** Why the image containing `address` has no usable unwind table (static text), or NULL when it has one or no image contains it. */
const char *cw_space_image_problem(cw_space *space, uint64_t address);

/** One unwound frame. */
typedef struct {
    uint64_t pc;
    uint64_t sp;
    int32_t signal_frame;    /* a signal interrupted this frame: restored from the signal frame's context, its pc is exact */
    int32_t has_unwind_info; /* CFI exists for pc, so the next frame was found through it */
} cw_frame;

/* Why an unwind stopped, besides a negative UNW_E* code from unw_step. */
#define CW_UNWIND_STOP_END 0         /* the outermost frame was reached */
#define CW_UNWIND_STOP_LIMIT 1       /* max_frames were collected */
#define CW_UNWIND_STOP_NO_PROGRESS 2 /* the stack pointer went backwards or repeated: a loop or a corrupt stack */
#define CW_UNWIND_STOP_ERROR 3       /* libdw's unwinder failed: cw_dwfl_unwinder_error says why */

/**
 * Unwinds one thread from `registers` (the host's NT_PRSTATUS layout as 64-bit words) through `space`.
 * Returns the number of frames; `*stop` says why it ended (CW_UNWIND_STOP_* or a negative UNW_E* code).
 */
int cw_unwind(cw_space *space, const uint64_t *registers, size_t register_count,
              cw_frame *frames, int max_frames, int *stop);

/** libunwind's text for a negative UNW_E* code. */
const char *cw_unwind_error_name(int code);

/* ---- unwinding with libdw (dwunwind.c): other architectures than the host's, and ARM64 ---- */

/** libdw's unwinder over a captured address space, for one architecture. */
typedef struct cw_dwfl_unwinder cw_dwfl_unwinder;

/**
 * Starts an unwinder for `elf_machine` (EM_AARCH64 or EM_X86_64) reading memory from `memory` (kept alive
 * by the caller), with `code_mask` (ARM64 pointer-authentication bits, else 0) cleared from every word
 * read and from the pc and link register. NULL with errno on failure.
 */
cw_dwfl_unwinder *cw_dwfl_unwinder_create(cw_space *memory, uint16_t elf_machine, uint64_t code_mask);

/** Reports the ELF file open at `fd` (a duplicate is kept) as image `name` loaded at `load_address`; before the first unwind. */
int cw_dwfl_unwinder_report(cw_dwfl_unwinder *unwinder, const char *name, int fd, uint64_t load_address);

/**
 * Unwinds one thread from `registers` (NT_PRSTATUS words of the unwinder's architecture), at most
 * `max_frames` frames; `*stop` is a CW_UNWIND_STOP_* value. Frames after the first have sp 0 (unknown).
 */
int cw_dwfl_unwind(cw_dwfl_unwinder *unwinder, const uint64_t *registers, size_t register_count,
                   cw_frame *frames, int max_frames, int *stop);

/** libdw's text for the unwinder's last failure. */
const char *cw_dwfl_unwinder_error(cw_dwfl_unwinder *unwinder);

void cw_dwfl_unwinder_destroy(cw_dwfl_unwinder *unwinder);


/* ---- symbols (symbols.c) ---- */


/** A libdw session over reported images. */
typedef struct cw_symbolizer cw_symbolizer;

/**
 * Starts a session: report images, then end reporting. Separate debug info is searched by build-id in
 * `debug_directories` (colon-separated, may be NULL) and /usr/lib/debug, and by .gnu_debuglink next to
 * the image, in its .debug/ and under those directories; debuginfod (DEBUGINFOD_URLS) only when
 * `use_debuginfod`. NULL with errno on failure.
 */
cw_symbolizer *cw_symbolizer_create(const char *debug_directories, int use_debuginfod);

/** Reports the ELF file open at `fd` (the session keeps its own duplicate) as module `name` loaded at `load_address`. */
int cw_symbolizer_report_fd(cw_symbolizer *symbolizer, const char *name, int fd, uint64_t load_address);

/**
 * Reports a module known only by its address range and build-id: libdw then looks for its file in the
 * debug directories' `.build-id` trees and, when enabled, on debuginfod servers.
 */
int cw_symbolizer_report_build_id(cw_symbolizer *symbolizer, const char *name, uint64_t start, uint64_t end,
                                  const uint8_t *build_id, size_t build_id_length);

/**
 * Uses the directory open at `dirfd` (owned by the caller, writable) as the inflated debug-file cache:
 * debug files are looked up there by build-id first, and compressed ones found elsewhere are noted for
 * cw_symbolizer_fill_cache. -1 turns it off.
 */
void cw_symbolizer_set_cache(int dirfd);

/**
 * Forks a process that inflates the noted debug files into the cache (`eu-elfcompress -t none`, one at a
 * time, atomically renamed into place) and returns at once: the number of files it will inflate, or -1.
 */
int cw_symbolizer_fill_cache(void);

/** Ends an offline session's reporting; lookups work afterwards. */
void cw_symbolizer_end_reporting(cw_symbolizer *symbolizer);

/** libdw's text for its last error on this thread. */
const char *cw_symbolizer_last_error(void);

/** Ends the libdw session. */
void cw_symbolizer_destroy(cw_symbolizer *symbolizer);

/* Where a symbol came from. */
#define CW_SYMBOL_SOURCE_NONE 0
#define CW_SYMBOL_SOURCE_SYMTAB 1    /* the file's own .symtab */
#define CW_SYMBOL_SOURCE_DYNSYM 2    /* only the dynamic symbol table */
#define CW_SYMBOL_SOURCE_DEBUGINFO 3 /* a separate debug file */

/** What libdw knows about one address. Strings belong to the symbolizer. */
typedef struct {
    const char *module_name; /* the module's name (its path as mapped) */
    uint64_t module_start;
    const char *name;        /* the raw (mangled) symbol name, or NULL */
    uint64_t offset;         /* address - symbol value */
    uint64_t size;           /* the symbol's size */
    int32_t source;          /* CW_SYMBOL_SOURCE_* */
} cw_symbol;

/** Looks up `address`: 0 with a symbol, 1 when only the module is known, -1 when no module contains it. */
int cw_symbolize(cw_symbolizer *symbolizer, uint64_t address, cw_symbol *out);

/**
 * One level of the (possibly inlined) calls an address is in, from DWARF. Strings belong to the
 * symbolizer and live until its next cw_source_levels call.
 */
typedef struct {
    const char *name;  /* linkage (mangled) name, else the DWARF name qualified by the namespaces and
                          classes of its declaration (`ns::Type<int>::method`; at most 4097 bytes, so
                          that a longer one shows as cut); NULL when unknown */
    const char *file;  /* source file, NULL when unknown */
    int32_t line;      /* 0 when unknown */
    int32_t column;    /* 0 when unknown */
    int32_t inlined;   /* this level was inlined into the next one */
} cw_source_level;

/**
 * The inline chain at `address`, innermost first, ending with the concrete function; each level's
 * location is where the inner call happened (the line table's row for the innermost). Functions nested
 * in namespaces (rustc, clang) are found too. Returns the number of levels written (0 without DWARF).
 */
int cw_source_levels(cw_symbolizer *symbolizer, uint64_t address, cw_source_level *levels, int max_levels);

/**
 * Demangles a Rust (v0 `_R…`; legacy `_ZN…17h<hash>E`, hash left out), C++ (`_Z…`) or Swift (`$s…`)
 * symbol; a malloc'ed string to free, or NULL when not mangled. Rust names are cut after 4097 bytes
 * (the work with them: a v0 symbol can expand to gigabytes); C++ and Swift ones are whole.
 */
char *cw_demangle(const char *name);

/**
 * Renames `old_name` (relative to `old_dirfd`) to `new_name` (relative to `new_dirfd`) only when no entry
 * exists under the new name (renameat2 with RENAME_NOREPLACE). Never follows a symbolic link
 * in either last component. Fails with EEXIST when the new name is taken, and with EINVAL or ENOSYS where
 * the file system or kernel lacks the flag.
 */
int cw_renameat_noreplace(int old_dirfd, const char *old_name, int new_dirfd, const char *new_name);

/** Reads at most `length` bytes of the file `name` relative to `dirfd` (one openat, one read, one close;
 * no final link followed): small /proc files such as a thread's comm. The bytes read, or -1 with errno. */
ssize_t cw_read_small_at(int dirfd, const char *name, void *buffer, size_t length);

/**
 * Replaces this process with the command, unsupervised: restores `mask`, then execs the first of `paths`
 * the kernel accepts with `argv` and this process's environment, exactly as `cw_spawn_traced`'s child does
 * (ENOEXEC files through /bin/sh). Returns only when every path failed: the decisive errno.
 */
int cw_exec_command(char *const *paths, size_t path_count, char *const *argv, const sigset_t *mask);

/** What `cw_probe_syscall` tries. */
#define CW_PROBE_PTRACE 1
#define CW_PROBE_MINCORE 2

/**
 * Tries a system call crashwatch needs in a throwaway child (a seccomp filter may kill the caller):
 * 0 allowed, 1 refused with an errno, 2 the child was killed by SIGSYS, -1 the probe itself failed.
 */
int cw_probe_syscall(int which);

/**
 * For `run --pid-file` (a Type=forking service): forks. The parent — the process systemd started — waits
 * for the child's `cw_report_status` and then exits as that wait status says (never returns; 71 if the
 * child died first). In the child, returns the pipe to report on (-1 with errno if the fork failed).
 */
int cw_split_supervisor(void);

/** Sends a raw wait status to the waiting parent of `cw_split_supervisor` and closes `fd`. */
int cw_report_status(int fd, int status);

/* --- AF_UNIX datagrams: the sd_notify relay and journald (sockets.c) --- */

/** The most descriptors one notify message may pass (the kernel's SCM_MAX_FD). */
#define CW_NOTIFY_MAX_FDS 253

/**
 * Opens the relay's socket: an AF_UNIX datagram socket (non-blocking, close-on-exec, SO_PASSCRED) bound
 * to a random abstract name, written as "@name" (sd_notify's form) into `name_out`. The fd, or -1.
 */
int cw_notify_open(char *name_out, size_t size);

/**
 * Receives one datagram without blocking: its bytes into `buf`, the sender's pid (SCM_CREDENTIALS) into
 * `*sender_pid`, passed descriptors (close-on-exec) into `fds` (capacity in `*fd_count`, count out).
 * Returns the length, 0 when nothing is waiting, -2 for an empty message or one cut short (dropped, its
 * descriptors closed), -1 with errno on failure.
 */
ssize_t cw_notify_receive(int fd, void *buf, size_t len, int32_t *sender_pid, int *fds, size_t *fd_count);


/**
 * Opens a file a crashed process, a core or a report named, type first: `cw_open_regular_at(AT_FDCWD, …)`.
 * A FIFO, device, socket or directory is never opened (EINVAL), so no driver's open runs and nothing
 * blocks; a final symbolic link fails with ELOOP unless `follow_links`. Returns the fd, or -1 with errno.
 */
int cw_open_untrusted(const char *path, int follow_links);

/**
 * Opens `path` (relative to `dirfd`) read-only only when it is a regular file, checked before anything is
 * opened: an O_PATH descriptor (which runs no driver's open and never blocks) is fstat'ed, and only a
 * regular file is then opened, through that descriptor's /proc/self/fd link (the same inode, whatever the
 * path names by then), O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC. Without /proc the path is opened again and
 * kept only when it is the inode checked. No final link is followed unless `follow_links` (ELOOP); a
 * FIFO, device, socket or directory fails with EINVAL. Returns the fd, or -1 with errno.
 */
int cw_open_regular_at(int dirfd, const char *path, int follow_links);

/** An O_PATH|O_CLOEXEC descriptor of `path` relative to `dirfd` (O_NOFOLLOW unless `follow_links`): no
 * driver's open runs, nothing blocks, and only search permission on the way is needed. -1 with errno. */
int cw_open_path(int dirfd, const char *path, int follow_links);

/** The second half of cw_open_regular_at: opens the file `path_fd` (from cw_open_path on the same
 * `dirfd`, `path`, `follow_links`) for reading when fstat says it is a regular file. -1 with errno. */
int cw_reopen_regular(int path_fd, int dirfd, const char *path, int follow_links);

/** Opens directory `name` relative to `dirfd` as a path-only descriptor (O_PATH|O_DIRECTORY|O_NOFOLLOW|
 * O_CLOEXEC): it needs search permission on the way only, never read permission, and a symbolic link as
 * `name` fails with ELOOP or ENOTDIR instead of being followed. The descriptor, or -1 with errno. */
int cw_open_path_directory(int dirfd, const char *name);

/** A non-blocking, close-on-exec AF_UNIX datagram socket, unbound. The descriptor, or -1 with errno. */
int cw_unix_datagram_socket(void);

/**
 * Sends one datagram on `socket_fd` to the AF_UNIX socket at `address` ("/path", or "@name" for an abstract
 * one, as NOTIFY_SOCKET gives them) without ever blocking (MSG_DONTWAIT, MSG_NOSIGNAL): the `length` bytes
 * of `data`, with `fds` attached (SCM_RIGHTS; at most CW_NOTIFY_MAX_FDS). A path too long for sockaddr_un
 * fails with ENAMETOOLONG, an empty address with ENOENT, another form with EINVAL. The bytes sent, or -1
 * with errno.
 */
ssize_t cw_unix_datagram_send(int socket_fd, const char *address, const void *data, size_t length,
                              const int *fds, size_t fd_count);

/** A memfd (`name`, close-on-exec) holding exactly the `length` bytes of `data`, fully sealed (no shrinking,
 * growing, writing or further sealing): what journald accepts for an entry too large for a datagram.
 * The descriptor, or -1 with errno. */
int cw_sealed_memfd(const char *name, const void *data, size_t length);

/* ---- HTTP (http.c): libcurl, loaded on first use; gzip through zlib ---- */

/** A reusable HTTP client (one libcurl easy handle: its connection is kept for the next request). */
typedef struct cw_http_client cw_http_client;

/** A POST request. Pointers are borrowed for the call only. */
typedef struct {
    const char *url;                  /* http:// or https:// only; redirects are not followed */
    char *const *headers;             /* "Name: value" lines */
    size_t header_count;
    const void *body;
    size_t body_length;
    long timeout_ms;                  /* the whole request, connection included */
    const char *user_agent;
    const char *ca_file;              /* PEM CA bundle; NULL: the system's */
    const char *client_certificate;   /* PEM client certificate for mutual TLS; NULL: none */
    const char *client_key;           /* its PEM key; NULL: in the certificate file */
    size_t max_response_bytes;        /* the response body kept; a longer one ends the transfer there */
    int cancel_fd;                    /* readable: abandon the request (CURLE_ABORTED_BY_CALLBACK); -1: none */
} cw_http_request;

/** What came back: a status, or a libcurl error code and message. */
typedef struct {
    long status;                      /* the HTTP status; 0 when no response arrived */
    int curl_code;                    /* CURLcode: 0 when the exchange completed */
    char error[256];                  /* libcurl's message when curl_code != 0 */
    int64_t retry_after_seconds;      /* Retry-After (seconds or HTTP date, as libcurl parses it); -1: none */
    unsigned char *body;              /* malloc'd; free with cw_http_response_free */
    size_t body_length;
    int body_truncated;               /* 1: the body was longer than max_response_bytes and was cut there */
} cw_http_response;

/** Loads libcurl (first call) and makes a client; NULL with a message in `error` when it cannot. */
cw_http_client *cw_http_client_new(char *error, size_t error_size);

/** Frees a client and closes its connection. */
void cw_http_client_free(cw_http_client *client);

/** POSTs `request`; 0 when a response arrived (any status), -1 when the exchange failed (`curl_code`, `error`). */
int cw_http_post(cw_http_client *client, const cw_http_request *request, cw_http_response *response);

/** Frees a response's body. */
void cw_http_response_free(cw_http_response *response);

/** Compresses `length` bytes into a malloc'd gzip member (`*out`, `*out_length`); 0, or -1 with errno. */
int cw_gzip(const void *data, size_t length, unsigned char **out, size_t *out_length);

/** A gzip stream written to a file descriptor (not owned) as its input arrives. */
typedef struct cw_gzip_writer cw_gzip_writer;

/** Starts a gzip stream at zlib `level` (1 fastest … 9 smallest) on `fd`; NULL with errno. */
cw_gzip_writer *cw_gzip_writer_create(int fd, int level);

/** Compresses `length` bytes into the stream, writing what comes out; 0, or -1 with errno. */
int cw_gzip_writer_write(cw_gzip_writer *writer, const void *data, size_t length);

/** Ends the stream (the gzip trailer) and writes the rest; 0, or -1 with errno. */
int cw_gzip_writer_finish(cw_gzip_writer *writer);

/** Compressed bytes written to the file so far. */
uint64_t cw_gzip_writer_written(const cw_gzip_writer *writer);

void cw_gzip_writer_destroy(cw_gzip_writer *writer);

#ifdef __cplusplus
}
#endif

#endif /* CCRASHWATCH_H */
