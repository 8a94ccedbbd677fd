/*
 * demangle.c — Rust and C++ names through libiberty (with a cap on the text a symbol may expand to; C++
 * without function return types, as gdb and eu-stack print names), Swift names through the Swift runtime's
 * swift_demangle on a thread of their own, given up past a CPU-time budget.
 */
#define _GNU_SOURCE
#include "ccrashwatch/demangle.h"
#include "ccrashwatch/signals.h"
#include "symbolizer_internal.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libiberty/demangle.h>

extern char *swift_demangle(const char *mangled, size_t mangled_length, char *buffer, size_t *buffer_size, uint32_t flags);

/* Demangled text as libiberty hands it over, kept to CW_NAME_BYTES + 1 bytes. */
struct capped_text {
    char text[CW_NAME_SLOT];
    size_t length;
    jmp_buf full;
};

/* libiberty's output callback: appends, and once the text is longer than any name a report keeps,
 * leaves the demangler for good (a longjmp back into cw_rust_demangle_capped). v0 back-references let a
 * few hundred bytes of symbol expand to gigabytes of text, written in time proportional to the text,
 * and libiberty has no limit of its own on either. */
static void capped_text_append(const char *piece, size_t length, void *opaque) {
    struct capped_text *out = opaque;
    size_t room = CW_NAME_BYTES + 1 - out->length;
    size_t n = length < room ? length : room;
    memcpy(out->text + out->length, piece, n);
    out->length += n;
    if (out->length > CW_NAME_BYTES) longjmp(out->full, 1);
}

/* `name` demangled by a libiberty `demangler` with `options`, at most CW_NAME_BYTES + 1 bytes: a longer
 * name comes back cut there, for the caller to mark. NULL when the demangler does not take it. */
static char *demangle_capped(const char *name, int (*demangler)(const char *, int, demangle_callbackref, void *),
                             int options) {
    struct capped_text *out = malloc(sizeof *out);
    if (!out) return NULL;
    out->length = 0;
    int demangled;
    if (setjmp(out->full) == 0) {
        demangled = demangler(name, options, capped_text_append, out);
    } else {
        demangled = 1; /* cut: the text so far, longer than any name a report keeps */
    }
    char *result = demangled ? strndup(out->text, out->length) : NULL;
    free(out);
    return result;
}

/* A Rust symbol demangled by libiberty (v0 `_R…`, or legacy `_ZN…17h<hash>E` with the hash left out and
 * `$u7b$`/`$LT$`/`..` escapes decoded, as `nm --demangle=rust` prints them), capped (demangle_capped).
 * NULL when not a Rust symbol. libiberty bounds its own recursion (1024 levels); its rust_demangle_callback
 * allocates nothing but a punycode buffer for a non-ASCII identifier, which a cut in the middle of one leaks.
 * Options 0: no DMGL_VERBOSE, so no legacy hash and no crate disambiguators (`std[e28293b1aa0f68bd]`). */
char *cw_rust_demangle_capped(const char *name) {
    return demangle_capped(name, rust_demangle_callback, 0);
}

/* Swift names. The runtime's swift_demangle builds the whole text and has no cap: a symbol of a few hundred
 * bytes whose substitutions nest expands to 65 MiB in about 1.4 s of CPU (Fixtures/demangle_bomb), and each
 * further level of nesting multiplies that by four. It cannot be stopped midway (leaving it by a signal could
 * leave malloc's lock held), so it runs on a thread of its own while the caller waits, and a name that takes
 * more than CW_SWIFT_DEMANGLE_CPU_NS of that thread's CPU time is given up: the caller gets NULL at once, and
 * the thread is left to finish on its own and free what it made (its process, a worker or a command, ends
 * soon after). The next Swift name gets a new thread, up to CW_SWIFT_DEMANGLERS given up per process; past
 * that, Swift names stay mangled. One caller at a time. */
#define CW_SWIFT_DEMANGLE_CPU_NS (100 * 1000 * 1000LL)
#define CW_SWIFT_DEMANGLERS 2
/* How often a waiting caller looks at the thread's CPU time. */
#define CW_SWIFT_DEMANGLE_POLL_NS (5 * 1000 * 1000LL)

struct swift_demangler {
    pthread_t thread;
    clockid_t cpu_clock;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* on CLOCK_MONOTONIC */
    char *name;             /* the name to demangle, owned by the thread once handed over */
    char *result;
    int done;
    int abandoned;          /* set by the caller that gives up (or never uses it); the thread then frees everything */
};

static pthread_mutex_t swift_callers = PTHREAD_MUTEX_INITIALIZER;
static struct swift_demangler *swift_current;
static int swift_abandoned;

static void swift_demangler_free(struct swift_demangler *d) {
    pthread_cond_destroy(&d->changed);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static void *swift_demangler_main(void *context) {
    struct swift_demangler *d = context;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->name && !d->abandoned) pthread_cond_wait(&d->changed, &d->lock);
        char *result = NULL;
        if (d->name) {
            char *name = d->name;
            pthread_mutex_unlock(&d->lock);
            result = swift_demangle(name, strlen(name), NULL, NULL, 0);
            pthread_mutex_lock(&d->lock);
            free(name);
            d->name = NULL;
        }
        if (d->abandoned) {
            pthread_mutex_unlock(&d->lock);
            free(result);
            swift_demangler_free(d);
            return NULL;
        }
        d->result = result;
        d->done = 1;
        pthread_cond_broadcast(&d->changed);
    }
}

static struct swift_demangler *swift_demangler_start(void) {
    struct swift_demangler *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&d->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&d->lock, NULL);
    /* Detached (nobody joins a thread given up), every signal blocked on it. */
    int failure = cw_start_thread_handle(swift_demangler_main, d, &d->thread);
    if (failure != 0) {
        swift_demangler_free(d);
        return NULL;
    }
    if (pthread_getcpuclockid(d->thread, &d->cpu_clock) != 0) {
        /* A thread without a readable CPU clock cannot be budgeted: it is let go before any work. */
        pthread_mutex_lock(&d->lock);
        d->abandoned = 1;
        pthread_cond_broadcast(&d->changed);
        pthread_mutex_unlock(&d->lock);
        return NULL;
    }
    return d;
}

static long long nanoseconds(clockid_t clock) {
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return -1;
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* `name` demangled by swift_demangle within the budget; NULL with *why_not set otherwise. */
static char *swift_demangle_bounded(const char *name, int *why_not) {
    char *copy = strdup(name);
    if (!copy) {
        *why_not = CW_DEMANGLE_NO_THREAD;
        return NULL;
    }
    pthread_mutex_lock(&swift_callers);
    if (!swift_current && swift_abandoned < CW_SWIFT_DEMANGLERS) swift_current = swift_demangler_start();
    struct swift_demangler *d = swift_current;
    if (!d) {
        pthread_mutex_unlock(&swift_callers);
        free(copy);
        *why_not = swift_abandoned < CW_SWIFT_DEMANGLERS ? CW_DEMANGLE_NO_THREAD : CW_DEMANGLE_GAVE_UP_BEFORE;
        return NULL;
    }
    long long start = nanoseconds(d->cpu_clock);
    pthread_mutex_lock(&d->lock);
    d->done = 0;
    d->result = NULL;
    d->name = copy;
    pthread_cond_broadcast(&d->changed);
    char *result = NULL;
    for (;;) {
        if (d->done) {
            result = d->result;
            d->result = NULL;
            *why_not = result ? CW_DEMANGLE_DONE : CW_DEMANGLE_NOT_MANGLED;
            break;
        }
        long long used = nanoseconds(d->cpu_clock);
        if (start < 0 || used < 0 || used - start > CW_SWIFT_DEMANGLE_CPU_NS) {
            d->abandoned = 1;
            swift_current = NULL;
            swift_abandoned++;
            *why_not = CW_DEMANGLE_GAVE_UP;
            break;
        }
        long long until = nanoseconds(CLOCK_MONOTONIC) + CW_SWIFT_DEMANGLE_POLL_NS;
        struct timespec deadline = {.tv_sec = until / 1000000000LL, .tv_nsec = until % 1000000000LL};
        pthread_cond_timedwait(&d->changed, &d->lock, &deadline);
    }
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_unlock(&swift_callers);
    return result;
}

char *cw_demangle(const char *name, int *why_not) {
    int ignored;
    if (!why_not) why_not = &ignored;
    *why_not = CW_DEMANGLE_NOT_MANGLED;
    if (!name) return NULL;
    char *demangled = NULL;
    /* Rust: v0, or legacy (an Itanium-shaped `_ZN…E` path ending in a `17h<16 hex digits>` hash). */
    if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
        demangled = cw_rust_demangle_capped(name);
        if (demangled || name[1] == 'R') {
            if (demangled) *why_not = CW_DEMANGLE_DONE;
            return demangled;
        }
    }
    if (strncmp(name, "_Z", 2) == 0) {
        /* Parameters and qualifiers, no return type (`std::__invoke_impl<void, void (*)()>(…)`, not `void std::…`):
         * how gdb and eu-stack name a frame, and what a template function's mangling alone would add. */
        demangled = demangle_capped(name, cplus_demangle_v3_callback, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP);
        if (demangled) *why_not = CW_DEMANGLE_DONE;
        return demangled;
    }
    if (strncmp(name, "$s", 2) == 0 || strncmp(name, "$S", 2) == 0 || strncmp(name, "_$s", 3) == 0 ||
        strncmp(name, "$e", 2) == 0 || strncmp(name, "_T0", 3) == 0) {
        return swift_demangle_bounded(name, why_not);
    }
    return NULL;
}
