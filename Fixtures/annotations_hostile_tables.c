/*
 * annotations_hostile_tables — declares an annotation table (annotations/crashwatch_annotations.h) and, before
 * dereferencing NULL in crash_here() on the main thread, makes it hostile the way its argument says. The
 * report must stay bounded (at most 256 annotations and breadcrumbs, annotationBytes at most 2 MiB) and name
 * what was wrong in soft errors of stage "annotations":
 *   past-mapping (default)  the annotation slot array starts 64 bytes before the end of a mapping and runs
 *                           past it: "not in writable memory"
 *   loop                    next chains table -> second -> table: "reached again", each table read once
 *                           (annotation "second" = "yes" is kept)
 *   self-loop               table -> third -> third: "reached again"
 *   huge                    2^30 annotation slots of 65535-byte keys, 2^32-1 breadcrumb slots (in 1 MiB of
 *                           writable memory): "past the caps", "declared: the first 256 read"
 *   utf8                    invalid UTF-8 in a key, a value and a message: "not UTF-8", U+FFFD in the report
 *   torn                    a thread claimed an annotation slot and a breadcrumb slot (odd sequence) and
 *                           waits, half-written, while main crashes: "being written at the crash: dropped";
 *                           a second thread rewrites "churn" with "aaaa..." or "bbbb..." in a tight loop:
 *                           its value, when present, is one of the two, never a mix
 *   version2                a chained table of version 2: "version 2", skipped; the first table still read
 *   changing                a forked child rewrites a MAP_SHARED table chained from the first one (counts,
 *                           addresses, next, slots) without pause while the parent is captured, and exits
 *                           once the parent is gone
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
 * STDOUT: ready
 */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "../annotations/crashwatch_annotations.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct crashwatch_table second, third, version2;
static struct crashwatch_annotation_slot second_slots[4];

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

/* A table like the image's own, with its own slots (or none). */
static void make_table(struct crashwatch_table *table, struct crashwatch_annotation_slot *slots, uint32_t count)
{
    *table = crashwatch_table;
    table->annotations = slots;
    table->annotation_slots = count;
    table->breadcrumbs = 0;
    table->breadcrumb_slots = 0;
    table->next = 0;
}

static void set_slot(struct crashwatch_annotation_slot *slot, const char *key, const char *value)
{
    slot->key_length = (uint16_t)strlen(key);
    slot->value_length = (uint16_t)strlen(value);
    memcpy(slot->text, key, slot->key_length);
    memcpy(slot->text + CRASHWATCH_KEY_SIZE, value, slot->value_length);
    slot->sequence = 2;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t claimed = PTHREAD_COND_INITIALIZER;
static int claims = 0;

/* Claims a slot of each kind and never publishes them: a writer the crash interrupted. */
static void *half_writer(void *unused)
{
    (void)unused;
    struct crashwatch_annotation_slot *slot = &crashwatch_table.annotations[5];
    __atomic_store_n(&slot->sequence, 7, __ATOMIC_RELEASE);
    memcpy(slot->text, "half", 4);
    slot->key_length = 4;
    struct crashwatch_breadcrumb_slot *crumb = &crashwatch_table.breadcrumbs[2];
    __atomic_store_n(&crumb->sequence, 9, __ATOMIC_RELEASE);
    pthread_mutex_lock(&lock);
    claims = 1;
    pthread_cond_signal(&claimed);
    pthread_mutex_unlock(&lock);
    for (;;) pause();
    return 0;
}

static void *churner(void *unused)
{
    (void)unused;
    char a[200], b[200];
    memset(a, 'a', sizeof a - 1);
    memset(b, 'b', sizeof b - 1);
    a[sizeof a - 1] = b[sizeof b - 1] = 0;
    for (unsigned long n = 0;; n++) crashwatch_annotate("churn", n & 1 ? a : b);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "past-mapping";
    crashwatch_annotate("fixture", "annotations_hostile_tables");
    crashwatch_breadcrumb(CRASHWATCH_INFO, "starting");
    long page = sysconf(_SC_PAGESIZE);
    if (strcmp(mode, "past-mapping") == 0) {
        char *pages = mmap(0, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(pages + page, page);
        crashwatch_table.annotations = (struct crashwatch_annotation_slot *)(pages + page - 64);
    } else if (strcmp(mode, "loop") == 0) {
        make_table(&second, second_slots, 4);
        set_slot(&second_slots[0], "second", "yes");
        crashwatch_table.next = &second;
        second.next = &crashwatch_table;
    } else if (strcmp(mode, "self-loop") == 0) {
        make_table(&third, 0, 0);
        crashwatch_table.next = &third;
        third.next = &third;
    } else if (strcmp(mode, "huge") == 0) {
        /* The ring moves into 1 MiB of writable memory, so 256 slots of it can be read. */
        struct crashwatch_breadcrumb_slot *ring = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        memcpy(ring, crashwatch_table.breadcrumbs, sizeof(struct crashwatch_breadcrumb_slot) * CRASHWATCH_BREADCRUMB_SLOTS);
        crashwatch_table.breadcrumbs = ring;
        crashwatch_table.annotation_slots = 1u << 30;
        crashwatch_table.key_size = 65535;
        crashwatch_table.breadcrumb_slots = 0xffffffffu;
    } else if (strcmp(mode, "utf8") == 0) {
        crashwatch_annotate("bad\xff" "key", "fine");
        crashwatch_annotate("badvalue", "\xc3\x28 half a character");
        crashwatch_breadcrumb(CRASHWATCH_WARNING, "\xed\xa0\x80 a surrogate");
    } else if (strcmp(mode, "torn") == 0) {
        pthread_t writer, churn;
        pthread_create(&writer, 0, half_writer, 0);
        pthread_create(&churn, 0, churner, 0);
        pthread_mutex_lock(&lock);
        while (!claims) pthread_cond_wait(&claimed, &lock);
        pthread_mutex_unlock(&lock);
        usleep(1000);
    } else if (strcmp(mode, "version2") == 0) {
        make_table(&version2, 0, 0);
        version2.version = 2;
        crashwatch_table.next = &version2;
    } else if (strcmp(mode, "changing") == 0) {
        size_t size = 16 * (size_t)page;
        char *shared = mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        struct crashwatch_table *table = (struct crashwatch_table *)shared;
        struct crashwatch_annotation_slot *slots = (struct crashwatch_annotation_slot *)(shared + page);
        make_table(table, slots, 16);
        crashwatch_table.next = table;
        pid_t parent = getpid();
        if (fork() == 0) {
            /* Until the parent is gone (this child is reparented): then a clean exit. */
            for (uint64_t n = 0; (n & 0xfff) != 0 || getppid() == parent; n++) {
                table->annotation_slots = n & 1 ? 16 : 1u << 30;
                table->annotations = n & 2 ? slots : (struct crashwatch_annotation_slot *)(shared + size - 8);
                table->next = n & 4 ? table : 0;
                table->key_size = n & 8 ? CRASHWATCH_KEY_SIZE : 65535;
                struct crashwatch_annotation_slot *slot = &slots[n % 16];
                slot->sequence = (uint32_t)n;
                slot->key_length = (uint16_t)(n & 0xff);
                slot->value_length = (uint16_t)(n >> 3);
                memset(slot->text, (int)(n & 0xff), sizeof slot->text);
            }
            _exit(0);
        }
        usleep(20000);
    }
    puts("ready");
    fflush(stdout);
    crash_here();
    return 0;
}
