/*
 * unwind.c — stack unwinding with libunwind (whose API is macros, so it is called from C) over a
 * captured address space (space.c): libunwind only ever sees memory through `access_mem` and registers
 * through `access_reg`, and finds unwind tables through `find_proc_info` (ehframe.c, debugframe.c).
 */
#define _GNU_SOURCE
#include "ccrashwatch/unwind.h"
#include "space_internal.h"

#include <stdlib.h>
#include <string.h>

/* libunwind's table search (exported, not declared in its public headers). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* The space and register snapshot of the unwind in progress (libunwind hands accessors only `arg`). */
static __thread cw_space *current_space;
static __thread const uint64_t *current_registers;
static __thread size_t current_register_count;
/* The last address a read of the unwind in progress (or the latest) found missing from the space. */
static __thread uint64_t missing_address;

/* ---- libunwind accessors ---- */

/* Each of the image's tables in turn, for the addresses it covers: the first that has an FDE for `ip`
 * answers (`*slot` says which); the first error other than "no info" when none has. */
static int search_tables(unw_addr_space_t as, struct cw_image *image, unw_word_t ip, unw_proc_info_t *pi,
                         int need_unwind_info, void *arg, int *slot) {
    int result = -UNW_ENOINFO;
    for (*slot = 0; *slot < SLOT_COUNT; (*slot)++) {
        struct cw_table *table = cw_image_table(current_space, image, *slot);
        if (!table) continue;
        int found = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &table->info, pi, need_unwind_info, arg);
        if (found == 0) return 0;
        if (result == -UNW_ENOINFO) result = found;
    }
    *slot = -1;
    return result;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg) {
    struct cw_image *image = cw_space_image_at(current_space, ip);
    if (!image) return -UNW_ENOINFO;
    int slot;
    return search_tables(as, image, ip, pi, need_unwind_info, arg, &slot);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    /* libunwind calls this for dynamic (JIT-registered) info only, which this space never yields;
     * table info is freed by libunwind itself. */
    (void)as; (void)pi; (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg) {
    (void)as; (void)dilap; (void)arg;
    return -UNW_ENOINFO; /* no JIT-registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
    (void)as;
    (void)arg;
    if (write) return -UNW_EREADONLYREG;
    if (cw_space_read_exact(current_space, addr, val, sizeof *val) == 0) return 0;
    missing_address = addr;
    return -UNW_EINVAL;
}

/* libunwind register number → index in the kernel's NT_PRSTATUS layout. */
static int register_index(unw_regnum_t reg) {
#if defined(__x86_64__)
    /* user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ... */
    static const int map[] = {
        [UNW_X86_64_RAX] = 10, [UNW_X86_64_RDX] = 12, [UNW_X86_64_RCX] = 11, [UNW_X86_64_RBX] = 5,
        [UNW_X86_64_RSI] = 13, [UNW_X86_64_RDI] = 14, [UNW_X86_64_RBP] = 4, [UNW_X86_64_RSP] = 19,
        [UNW_X86_64_R8] = 9, [UNW_X86_64_R9] = 8, [UNW_X86_64_R10] = 7, [UNW_X86_64_R11] = 6,
        [UNW_X86_64_R12] = 3, [UNW_X86_64_R13] = 2, [UNW_X86_64_R14] = 1, [UNW_X86_64_R15] = 0,
        [UNW_X86_64_RIP] = 16,
    };
    if (reg >= 0 && reg <= UNW_X86_64_RIP) return map[reg];
    return -1;
#elif defined(__aarch64__)
    /* user_pt_regs: x0..x30, sp, pc, pstate — the same order as libunwind's numbering. */
    if (reg >= UNW_AARCH64_X0 && reg <= UNW_AARCH64_PSTATE) return (int)reg;
    return -1;
#else
    (void)reg;
    return -1;
#endif
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg) {
    (void)as;
    (void)arg;
    if (write) return -UNW_EREADONLYREG;
    int index = register_index(reg);
    if (index < 0 || (size_t)index >= current_register_count) return -UNW_EBADREG;
    *val = current_registers[index];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg) {
    (void)as; (void)reg; (void)val; (void)write; (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
    (void)as; (void)c; (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *offp, void *arg) {
    (void)as; (void)addr; (void)buf; (void)len; (void)offp; (void)arg;
    return -UNW_ENOINFO; /* names come from libdw */
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

int cw_unwind_covering_slot(cw_space *s, uint64_t ip) {
    if (s->slot_memo_stale) {
        memset(s->slot_memo, 0, CW_SLOT_MEMO_SIZE * sizeof *s->slot_memo);
        s->slot_memo_stale = 0;
    }
    struct cw_slot_memo *memo = &s->slot_memo[(ip ^ (ip >> 12)) % CW_SLOT_MEMO_SIZE];
    if (memo->key == ip + 1) return memo->slot;
    int slot = -1;
    struct cw_image *image = cw_space_image_at(s, ip);
    if (image) {
        cw_space *saved = current_space;
        current_space = s;
        unw_proc_info_t info;
        (void)search_tables(s->space, image, ip, &info, 0, NULL, &slot);
        current_space = saved;
    }
    memo->key = ip + 1;
    memo->slot = slot;
    return slot;
}

unw_addr_space_t cw_unwind_address_space_create(void) {
    unw_addr_space_t space = unw_create_addr_space(&accessors, 0);
    if (space) unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
    return space;
}

int cw_unwind(cw_space *s, const uint64_t *registers, size_t register_count,
              cw_frame *frames, int max_frames, int *stop) {
    cw_space_sort(s);
    current_space = s;
    current_registers = registers;
    current_register_count = register_count;
    missing_address = 0;
    *stop = CW_UNWIND_STOP_END;

    unw_cursor_t cursor;
    int result = unw_init_remote(&cursor, s->space, NULL);
    if (result < 0) {
        *stop = result;
        current_space = NULL;
        return 0;
    }
    int count = 0;
    while (count < max_frames) {
        unw_word_t pc = 0, sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &pc);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        /* A zero return address ends the stack (Go's goexit, a thread's outermost frame): it is no frame. */
        if (pc == 0 && count > 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        cw_frame *frame = &frames[count];
        frame->pc = pc;
        frame->sp = sp;
        frame->signal_frame = unw_is_signal_frame(&cursor) > 0;
        /* Whether a table has an FDE for the address libunwind looks the frame up by: the call instruction
         * (pc - 1) of a return address, the pc itself for the first frame and one a signal interrupted.
         * (unw_get_proc_info would answer the same, searching the table and running the FDE's program on
         * every call: a capture's threads share most of their return addresses.) */
        int exact = count == 0 || frames[count - 1].signal_frame;
        frame->has_unwind_info = cw_unwind_covering_slot(s, exact ? pc : pc - 1) >= 0;
        if (count > 0) {
            const cw_frame *previous = &frames[count - 1];
            /* The stack grows down: a caller's frame never sits below its callee's, except where a
             * signal interrupted it (the handler may have run on an alternate stack). libunwind marks
             * the interrupted frame, the one restored from the signal frame's saved context. */
            if ((sp < previous->sp && !frame->signal_frame) || (sp == previous->sp && pc == previous->pc)) {
                *stop = CW_UNWIND_STOP_NO_PROGRESS;
                break;
            }
        }
        count++;
        if (pc == 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        result = unw_step(&cursor);
        if (result == 0) {
            *stop = CW_UNWIND_STOP_END;
            break;
        }
        if (result < 0) {
            *stop = result;
            break;
        }
        if (count == max_frames) *stop = CW_UNWIND_STOP_LIMIT;
    }
    current_space = NULL;
    return count;
}

uint64_t cw_unwind_missing_address(void) {
    return missing_address;
}

const char *cw_unwind_error_name(int code) {
    return unw_strerror(code);
}
