/*
 * fuse_stall — a crashing program whose memory is partly a file on a FUSE file system whose server
 * never answers a read: any read of those pages (process_vm_readv, /proc/PID/cmdline) waits for the
 * server in an uninterruptible sleep. As root, in a mount namespace of its own (gone with it), it
 * mounts a FUSE file system it serves itself (a forked child reading /dev/fuse: it answers INIT,
 * LOOKUP, GETATTR and OPEN, never READ, and ends with its parent or after 6 s, so nothing waits for
 * ever), maps its one
 * file "image" as an executable image, and over a page inside its command line's text and one inside
 * its environment's (it first runs itself again with a 16 KiB argument and variable, so those pages
 * hold nothing else), starts a thread named "stuck" that read()s the file — its READ waits until the
 * server ends, and not even a kill ends that sleep, so the thread cannot be stopped (and the process,
 * bare or not, dies only when the server ends) — prints "ready" once that thread sleeps, and
 * dereferences NULL. With FUSE_STALL_MOUNTS=N in its environment it first mounts N tmpfs on a
 * 3,000-character path, so that its FUSE mount comes late in a mount table of several MiB.
 * An unprivileged program can do the same
 * with a FUSE mount of its own (fusermount, or a user namespace). Without FUSE (no /dev/fuse, not
 * root) it says so on stderr and crashes the same way. Only HostileInputTests runs it, under
 * `crashwatch run --capture-timeout 2`: crashwatch must end in time with a report that names what
 * it did not read. (Its core dump would read the image's first page and wait for the server too.)
 *
 * BUILD: -O0 -g
 * RUN: alone
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <pthread.h>

#include "thread_state.h"
#include <sys/uio.h>
#include <unistd.h>

extern char **environ;

#define FILE_SIZE (1 << 20)

static void reply(int fd, uint64_t unique, int error, const void *body, size_t size)
{
    struct fuse_out_header out = { .len = (uint32_t)(sizeof out + (error ? 0 : size)), .error = error, .unique = unique };
    struct iovec iov[2] = { { &out, sizeof out }, { (void *)body, error ? 0 : size } };
    if (writev(fd, iov, error ? 1 : 2) < 0) { /* the kernel dropped the request */ }
}

static void attributes(struct fuse_attr *attr, uint64_t node)
{
    memset(attr, 0, sizeof *attr);
    attr->ino = node;
    attr->blksize = 4096;
    if (node == FUSE_ROOT_ID) {
        attr->mode = S_IFDIR | 0755;
        attr->nlink = 2;
    } else {
        attr->mode = S_IFREG | 0755;
        attr->nlink = 1;
        attr->size = FILE_SIZE;
        attr->blocks = FILE_SIZE / 512;
    }
}

/* Answers everything but READ, which it leaves waiting. */
static void serve(int fd)
{
    static char buffer[FUSE_MIN_READ_BUFFER + (1 << 17)];
    for (;;) {
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return;
        }
        struct fuse_in_header *in = (struct fuse_in_header *)buffer;
        char *argument = buffer + sizeof *in;
        switch (in->opcode) {
        case FUSE_INIT: {
            struct fuse_init_in *init = (struct fuse_init_in *)argument;
            struct fuse_init_out out = { .major = FUSE_KERNEL_VERSION, .max_write = 4096, .max_pages = 1,
                                         .minor = init->minor < FUSE_KERNEL_MINOR_VERSION ? init->minor : FUSE_KERNEL_MINOR_VERSION };
            reply(fd, in->unique, 0, &out, sizeof out);
            break;
        }
        case FUSE_LOOKUP: {
            if (strcmp(argument, "image") != 0) {
                reply(fd, in->unique, -ENOENT, NULL, 0);
                break;
            }
            struct fuse_entry_out out = { .nodeid = 2, .generation = 1 };
            attributes(&out.attr, 2);
            reply(fd, in->unique, 0, &out, sizeof out);
            break;
        }
        case FUSE_GETATTR: {
            struct fuse_attr_out out = { 0 };
            attributes(&out.attr, in->nodeid);
            reply(fd, in->unique, 0, &out, sizeof out);
            break;
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
            struct fuse_open_out out = { .fh = 1, .open_flags = FOPEN_KEEP_CACHE };
            reply(fd, in->unique, 0, &out, sizeof out);
            break;
        }
        case FUSE_READ:
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
            break; /* a READ is never answered */
        default:
            reply(fd, in->unique, -ENOSYS, NULL, 0);
        }
    }
}

/* The FUSE file, open for the "stuck" thread's read. */
static int stalling_file = -1;
static pid_t stuck_tid;

static void *stuck(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "stuck");
    __atomic_store_n(&stuck_tid, gettid(), __ATOMIC_SEQ_CST);
    char byte;
    ssize_t ignored = pread(stalling_file, &byte, 1, 0); /* a READ the server never answers */
    (void)ignored;
    return NULL;
}


/* Maps the FUSE file as an image, and over a page inside the command line's text and one inside the
 * environment's (what /proc/PID/cmdline and environ read); 0 when done. */
static int map_stalling_file(char *argument, char *variable)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    char directory[] = "/tmp/cw-fuse-stall-XXXXXX";
    if (!mkdtemp(directory)) return -1;
    /* FUSE_STALL_MOUNTS=N: N mounts first, on a 3,000-character path (a long line each in
     * /proc/PID/mountinfo), so that the FUSE mount comes late in a mount table of several MiB. */
    const char *extra = getenv("FUSE_STALL_MOUNTS");
    long count = extra ? strtol(extra, NULL, 10) : 0;
    if (count > 0) {
        char deep[4096];
        snprintf(deep, sizeof deep, "%s", directory);
        for (int level = 0; level < 12; level++) {
            size_t length = strlen(deep);
            deep[length] = '/';
            memset(deep + length + 1, 'a', 250);
            deep[length + 251] = 0;
            if (mkdir(deep, 0700) != 0 && errno != EEXIST) return -1;
        }
        for (long i = 0; i < count; i++)
            if (mount("none", deep, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") != 0) return -1;
    }
    int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fuse < 0) return -1;
    char options[128];
    snprintf(options, sizeof options, "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
    if (mount("fuse_stall", directory, "fuse.fuse_stall", MS_NOSUID | MS_NODEV, options) != 0) return -1;
    pid_t server = fork();
    if (server < 0) return -1;
    if (server == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        alarm(6);
        serve(fuse);
        _exit(0);
    }
    close(fuse);
    char path[128];
    snprintf(path, sizeof path, "%s/image", directory);
    int file = open(path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return -1;
    /* Never touched here: every read of these pages is a READ request the server leaves waiting. */
    void *image = mmap(NULL, 65536, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
    void *in_arguments = (void *)(((unsigned long)argument + 8192) & ~4095UL);
    void *in_environment = (void *)(((unsigned long)variable + 8192) & ~4095UL);
    void *over_arguments = mmap(in_arguments, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED, file, 65536);
    void *over_environment = mmap(in_environment, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED, file, 69632);
    stalling_file = file;
    if (image == MAP_FAILED || over_arguments == MAP_FAILED || over_environment == MAP_FAILED) return -1;
    return 0;
}

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(int argc, char **argv)
{
    /* Once more with a 16 KiB argument and variable: a page well inside each holds nothing else. */
    static char argument[16384], variable[16384] = "FUSE_STALL_FILLER=";
    if (argc < 3 || strcmp(argv[1], "--stalled") != 0) {
        memset(argument, 'a', sizeof argument - 1);
        memset(variable + strlen(variable), 'b', sizeof variable - strlen(variable) - 1);
        char *arguments[] = { argv[0], "--stalled", argument, NULL };
        static char mounts[64];
        const char *extra = getenv("FUSE_STALL_MOUNTS");
        snprintf(mounts, sizeof mounts, "FUSE_STALL_MOUNTS=%s", extra ? extra : "0");
        char *environment[] = { variable, mounts, NULL };
        execve("/proc/self/exe", arguments, environment);
        fprintf(stderr, "fuse_stall: cannot run again: %s\n", strerror(errno));
    } else if (map_stalling_file(argv[2], environ[0]) == 0) {
        fprintf(stderr, "fuse_stall: FUSE mapping in place\n");
        pthread_t thread;
        pthread_create(&thread, NULL, stuck, NULL);
        for (char state = 0; state != 'S' && state != 'D'; state = thread_state(__atomic_load_n(&stuck_tid, __ATOMIC_SEQ_CST)))
            usleep(1000);
    } else {
        fprintf(stderr, "fuse_stall: no FUSE mapping (%s); crashing without one\n", strerror(errno));
    }
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
