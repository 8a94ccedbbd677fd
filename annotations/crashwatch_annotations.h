/* crashwatch_annotations.h — annotations and breadcrumbs that crashwatch reads out of a crashed
 * process, with no library to link and no code on the crash path.
 *
 * Header-only, C99 or C++11 (strict ISO modes too), x86-64 and ARM64 (little-endian, 64-bit); the
 * Rust module, the Swift module map and the Go package beside it write the same table. In exactly
 * one source file of each executable or shared library that declares a table:
 *
 *     #define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
 *     #include "crashwatch_annotations.h"
 *
 * That file defines the table (in the image's writable data) and an ELF note that points to it, so
 * crashwatch finds the table in a stripped binary, or in a library loaded with dlopen, without symbols.
 * Every other file includes the header alone and calls:
 *
 *     crashwatch_annotate("request_id", "7f3a-19");     // set or replace a key
 *     crashwatch_annotate("request_id", NULL);          // remove it
 *     crashwatch_breadcrumb(CRASHWATCH_INFO, "cache miss for user 42");
 *
 * The writers touch only the table, with plain and atomic stores: no system call, no lock, no
 * allocation, safe from any thread and from a signal handler. Keys and values longer than their slots
 * are cut (at a UTF-8 character boundary); a key that finds no free slot is dropped (the call returns
 * -1). A writer interrupted by the crash leaves its entry's sequence number odd; crashwatch drops that
 * entry instead of reading half of it.
 *
 * Sizes (define before including, the same in every file of the image): CRASHWATCH_ANNOTATION_SLOTS
 * (64), CRASHWATCH_KEY_SIZE (64 bytes), CRASHWATCH_VALUE_SIZE (256), CRASHWATCH_BREADCRUMB_SLOTS (64),
 * CRASHWATCH_MESSAGE_SIZE (128). crashwatch reads at most 256 annotations of 128 + 1024 bytes, 256
 * breadcrumbs of 1024 bytes, 512 KiB per table; docs/annotations.md has the layout and every cap.
 *
 * The layout, version 1 (all fields little-endian, offsets in bytes):
 *   note      owner "crashwatch", type 1, descriptor: int64 = the table's address minus the
 *             descriptor's own address (a link-time constant: no relocation, works in PIE and .so)
 *   table     0 magic "CWTABLE\0" | 8 u32 version = 1 | 12 u32 header size = 72
 *             16 u64 address of the annotation slots | 24 u32 slot count | 28 u16 key size
 *             30 u16 value size | 32 u64 address of the breadcrumb slots | 40 u32 slot count
 *             44 u16 message size | 46 u16 zero | 48 u64 breadcrumbs ever started (the write index)
 *             56 u64 address of a further table (0: none) | 64 u64 zero
 *   annotation slot (8 + key size + value size, rounded up to 8)
 *             0 u32 sequence (0: never written; odd: being written) | 4 u16 key length (0: free)
 *             6 u16 value length | 8 key bytes | 8 + key size value bytes (UTF-8, not terminated)
 *   breadcrumb slot (24 + message size, rounded up to 8)
 *             0 u32 sequence | 4 u8 level (0 debug, 1 info, 2 warning, 3 error, 4 fatal) | 5 u8 zero
 *             6 u16 message length | 8 u64 index (the breadcrumb's number; slot = index % count)
 *             16 i64 time (CLOCK_REALTIME, nanoseconds) | 24 message bytes (UTF-8)
 */
#ifndef CRASHWATCH_ANNOTATIONS_H
#define CRASHWATCH_ANNOTATIONS_H

#include <stdint.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "crashwatch annotations: x86-64 and ARM64 only"
#endif

#ifndef CRASHWATCH_ANNOTATION_SLOTS
#define CRASHWATCH_ANNOTATION_SLOTS 64
#endif
#ifndef CRASHWATCH_KEY_SIZE
#define CRASHWATCH_KEY_SIZE 64
#endif
#ifndef CRASHWATCH_VALUE_SIZE
#define CRASHWATCH_VALUE_SIZE 256
#endif
#ifndef CRASHWATCH_BREADCRUMB_SLOTS
#define CRASHWATCH_BREADCRUMB_SLOTS 64
#endif
#ifndef CRASHWATCH_MESSAGE_SIZE
#define CRASHWATCH_MESSAGE_SIZE 128
#endif

#define CRASHWATCH_TABLE_VERSION 1
#define CRASHWATCH_NOTE_TYPE 1

#ifdef __cplusplus
extern "C" {
#endif

enum crashwatch_level {
    CRASHWATCH_DEBUG = 0,
    CRASHWATCH_INFO = 1,
    CRASHWATCH_WARNING = 2,
    CRASHWATCH_ERROR = 3,
    CRASHWATCH_FATAL = 4
};

#define CRASHWATCH_ROUND8(n) (((n) + 7u) & ~7u)

struct crashwatch_annotation_slot {
    uint32_t sequence;
    uint16_t key_length;
    uint16_t value_length;
    char text[CRASHWATCH_ROUND8(CRASHWATCH_KEY_SIZE + CRASHWATCH_VALUE_SIZE)];
};

struct crashwatch_breadcrumb_slot {
    uint32_t sequence;
    uint8_t level;
    uint8_t reserved;
    uint16_t message_length;
    uint64_t index;
    int64_t time;
    char message[CRASHWATCH_ROUND8(CRASHWATCH_MESSAGE_SIZE)];
};

struct crashwatch_table {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
    struct crashwatch_annotation_slot *annotations;
    uint32_t annotation_slots;
    uint16_t key_size;
    uint16_t value_size;
    struct crashwatch_breadcrumb_slot *breadcrumbs;
    uint32_t breadcrumb_slots;
    uint16_t message_size;
    uint16_t reserved;
    uint64_t breadcrumb_next;
    struct crashwatch_table *next;
    uint64_t reserved2;
};

/* The image's table (hidden: each executable and shared library has its own). */
extern struct crashwatch_table crashwatch_table __attribute__((visibility("hidden")));

/* clock_gettime under a name of our own: <time.h> hides it in strict ISO modes (-std=c99, -std=c11),
 * and a header must not choose the including file's feature macros. struct timespec is two longs on
 * x86-64 and ARM64 Linux; CLOCK_REALTIME is 0. */
struct crashwatch__timespec { long seconds; long nanoseconds; };
extern int crashwatch__clock_gettime(int clock, struct crashwatch__timespec *now) __asm__("clock_gettime");

/* Cuts `length` bytes of UTF-8 at `limit` without splitting a character. */
static inline uint16_t crashwatch__fit(const char *text, uint64_t limit) {
    uint64_t n = 0;
    while (text[n] != 0 && n < limit) n++;
    if (text[n] != 0) {
        while (n > 0 && (((unsigned char)text[n]) & 0xC0) == 0x80) n--;
    }
    return (uint16_t)n;
}

static inline void crashwatch__copy(char *to, const char *from, uint16_t length) {
    for (uint16_t i = 0; i < length; i++) to[i] = from[i];
}

/* Claims a slot for writing: its even sequence becomes odd. 0 when another writer holds it. */
static inline int crashwatch__claim(uint32_t *sequence, uint32_t *was) {
    uint32_t seen = __atomic_load_n(sequence, __ATOMIC_RELAXED);
    if (seen & 1u) return 0;
    if (!__atomic_compare_exchange_n(sequence, &seen, seen + 1u, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
    *was = seen;
    return 1;
}

static inline void crashwatch__publish(uint32_t *sequence, uint32_t was) {
    __atomic_store_n(sequence, was + 2u, __ATOMIC_RELEASE);
}

static inline int crashwatch__same_key(const struct crashwatch_annotation_slot *slot, const char *key, uint16_t length) {
    if (slot->key_length != length) return 0;
    for (uint16_t i = 0; i < length; i++) {
        if (slot->text[i] != key[i]) return 0;
    }
    return 1;
}

/* Sets `key` to `value` (NULL removes the key). 0 on success, -1 when no slot was free (or, rarely,
 * another thread held the key's slot for as long as the call tried). */
static inline int crashwatch_annotate(const char *key, const char *value) {
    struct crashwatch_table *table = &crashwatch_table;
    uint16_t key_length = crashwatch__fit(key, CRASHWATCH_KEY_SIZE);
    if (key_length == 0) return -1;
    for (int attempt = 0; attempt < 64; attempt++) {
        struct crashwatch_annotation_slot *slot = 0;
        for (uint32_t i = 0; i < CRASHWATCH_ANNOTATION_SLOTS; i++) {
            struct crashwatch_annotation_slot *candidate = &table->annotations[i];
            if (crashwatch__same_key(candidate, key, key_length)) { slot = candidate; break; }
        }
        if (slot == 0 && value == 0) return 0;
        if (slot == 0) {
            for (uint32_t i = 0; i < CRASHWATCH_ANNOTATION_SLOTS; i++) {
                if (table->annotations[i].key_length == 0) { slot = &table->annotations[i]; break; }
            }
        }
        if (slot == 0) return -1;
        uint32_t was;
        if (!crashwatch__claim(&slot->sequence, &was)) continue;
        if (slot->key_length != 0 && !crashwatch__same_key(slot, key, key_length)) {
            crashwatch__publish(&slot->sequence, was);  /* another thread took it meanwhile */
            continue;
        }
        if (value == 0) {
            slot->key_length = 0;
            slot->value_length = 0;
        } else {
            uint16_t value_length = crashwatch__fit(value, CRASHWATCH_VALUE_SIZE);
            crashwatch__copy(slot->text, key, key_length);
            crashwatch__copy(slot->text + CRASHWATCH_KEY_SIZE, value, value_length);
            slot->key_length = key_length;
            slot->value_length = value_length;
        }
        crashwatch__publish(&slot->sequence, was);
        return 0;
    }
    return -1;
}

/* Appends a breadcrumb to the ring (the oldest is overwritten once it is full). */
static inline void crashwatch_breadcrumb(enum crashwatch_level level, const char *message) {
    struct crashwatch_table *table = &crashwatch_table;
    uint64_t index = __atomic_fetch_add(&table->breadcrumb_next, 1, __ATOMIC_RELAXED);
    struct crashwatch_breadcrumb_slot *slot = &table->breadcrumbs[index % CRASHWATCH_BREADCRUMB_SLOTS];
    uint32_t was;
    if (!crashwatch__claim(&slot->sequence, &was)) return;  /* a writer a full ring behind holds it */
    struct crashwatch__timespec now = {0, 0};
    crashwatch__clock_gettime(0, &now);  /* CLOCK_REALTIME, through the vDSO: no system call */
    uint16_t length = crashwatch__fit(message, CRASHWATCH_MESSAGE_SIZE);
    slot->level = (uint8_t)level;
    slot->index = index;
    slot->time = (int64_t)now.seconds * 1000000000 + now.nanoseconds;
    crashwatch__copy(slot->message, message, length);
    slot->message_length = length;
    crashwatch__publish(&slot->sequence, was);
}

#ifdef CRASHWATCH_ANNOTATIONS_IMPLEMENTATION

static struct crashwatch_annotation_slot crashwatch__annotation_slots[CRASHWATCH_ANNOTATION_SLOTS];
static struct crashwatch_breadcrumb_slot crashwatch__breadcrumb_slots[CRASHWATCH_BREADCRUMB_SLOTS];

__attribute__((used, visibility("hidden"))) struct crashwatch_table crashwatch_table = {
    {'C', 'W', 'T', 'A', 'B', 'L', 'E', 0},
    CRASHWATCH_TABLE_VERSION,
    (uint32_t)sizeof(struct crashwatch_table),
    crashwatch__annotation_slots,
    CRASHWATCH_ANNOTATION_SLOTS,
    CRASHWATCH_KEY_SIZE,
    CRASHWATCH_VALUE_SIZE,
    crashwatch__breadcrumb_slots,
    CRASHWATCH_BREADCRUMB_SLOTS,
    CRASHWATCH_MESSAGE_SIZE,
    0,
    0,
    0,
    0
};

/* The note: owner "crashwatch" (10 bytes and a NUL, padded to 12), type 1, and an 8-byte descriptor
 * holding the table's address relative to the descriptor's (resolved by the linker). "R" keeps it
 * through --gc-sections. */
__asm__(
    ".pushsection .note.crashwatch, \"aR\", %note\n"
    ".balign 8\n"
    ".long 11\n"
    ".long 8\n"
    ".long 1\n"
    ".asciz \"crashwatch\"\n"
    ".balign 4\n"
    "1: .quad crashwatch_table - 1b\n"
    ".popsection\n");

#endif /* CRASHWATCH_ANNOTATIONS_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif

#endif /* CRASHWATCH_ANNOTATIONS_H */
