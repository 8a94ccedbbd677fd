/*
 * annotations_hostile_notes — declares 10,000 annotation tables: 10,000 `crashwatch` notes (generated with
 * .rept in top-level asm, 320 KB of notes in one PT_NOTE segment), each pointing at its own table, every
 * table holding annotation "table" = its number. Then dereferences NULL in crash_here() on the main thread.
 * The report must carry at most 64 tables' worth: annotation "table" = "0" (the first table wins the key),
 * annotationBytes at most 2 MiB, and soft errors of stage "annotations" saying the notes past 64 KiB were
 * not read and tables past the cap of 64 were not.
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
#include "../annotations/crashwatch_annotations.h"
#include <stdio.h>
#include <string.h>

#define TABLES 10000

__attribute__((used)) struct crashwatch_table hostile_tables[TABLES];
static struct crashwatch_annotation_slot hostile_slots[TABLES];

__asm__(
    ".pushsection .note.crashwatch, \"aR\", %note\n"
    ".set cw_table, 0\n"
    ".rept 10000\n"
    ".balign 8\n"
    ".long 11\n"
    ".long 8\n"
    ".long 1\n"
    ".asciz \"crashwatch\"\n"
    ".balign 4\n"
    "1: .quad hostile_tables + cw_table * 72 - 1b\n"
    ".set cw_table, cw_table + 1\n"
    ".endr\n"
    ".popsection\n");

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    for (int n = 0; n < TABLES; n++) {
        struct crashwatch_table *table = &hostile_tables[n];
        memcpy(table->magic, "CWTABLE", 8);
        table->version = CRASHWATCH_TABLE_VERSION;
        table->header_size = sizeof *table;
        table->annotations = &hostile_slots[n];
        table->annotation_slots = 1;
        table->key_size = CRASHWATCH_KEY_SIZE;
        table->value_size = CRASHWATCH_VALUE_SIZE;
        struct crashwatch_annotation_slot *slot = &hostile_slots[n];
        memcpy(slot->text, "table", 5);
        slot->key_length = 5;
        slot->value_length = (uint16_t)snprintf(slot->text + CRASHWATCH_KEY_SIZE, CRASHWATCH_VALUE_SIZE, "%d", n);
        slot->sequence = 2;
    }
    puts("ready");
    fflush(stdout);
    crash_here();
    return 0;
}
