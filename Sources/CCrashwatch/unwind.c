/*
 * unwind.c — remote stack unwinding with libunwind (whose API is macros, so it is called from C),
 * fed by fast, cached reads of the target's memory instead of libunwind-ptrace's one
 * PTRACE_PEEKDATA per word.
 *
 * libunwind-ptrace still finds the unwind tables (it maps the ELF files named in /proc/PID/maps);
 * memory and registers come from here. Registers are a snapshot taken with PTRACE_GETREGSET, so an
 * unwind needs no further ptrace request.
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#define UNW_REMOTE_ONLY
#include <libunwind.h>
#include <libunwind-ptrace.h>

#define CW_PAGE_SIZE 4096u
#define CW_CACHE_SLOTS 512u /* 2 MiB of cached target memory per unwinder */

#define CW_MAX_IMAGES 4096

/* One loaded image with its own libunwind-ptrace state. libunwind-ptrace remembers the unwind table
 * of one image only, and re-reads /proc/PID/maps and re-maps the ELF file on every switch; a state per
 * image keeps each image's table for the whole capture. */
struct cw_image_slot {
    uint64_t start, end;
    void *upt; /* created on first use */
};

struct cw_unwinder {
    pid_t pid;
    int mem_fd; /* /proc/PID/mem, the fallback when process_vm_readv is refused */
    void *upt;  /* libunwind-ptrace's state for addresses outside every known image */
    struct cw_image_slot *images;
    size_t image_count;
    unw_addr_space_t space;
    uint64_t *page_address; /* page address per cache slot; UINT64_MAX when empty */
    uint8_t *pages;
};

/* The unwinder and register snapshot of the unwind in progress. libunwind passes accessors the
 * `arg` of whichever call reached them (ours or libunwind-ptrace's), so they find their context
 * here instead: every unwind runs on the one tracer thread. */
static __thread cw_unwinder *current_unwinder;
static __thread const uint64_t *current_registers;
static __thread size_t current_register_count;

ssize_t cw_process_read(pid_t pid, uint64_t address, void *buffer, size_t length) {
    struct iovec local = {.iov_base = buffer, .iov_len = length};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = length};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

static int read_page(cw_unwinder *u, uint64_t page, const uint8_t **out) {
    size_t slot = (size_t)((page / CW_PAGE_SIZE) % CW_CACHE_SLOTS);
    uint8_t *data = u->pages + slot * CW_PAGE_SIZE;
    if (u->page_address[slot] == page) {
        *out = data;
        return 0;
    }
    ssize_t n = cw_process_read(u->pid, page, data, CW_PAGE_SIZE);
    if (n != (ssize_t)CW_PAGE_SIZE && u->mem_fd >= 0) {
        n = pread(u->mem_fd, data, CW_PAGE_SIZE, (off_t)page);
    }
    if (n != (ssize_t)CW_PAGE_SIZE) {
        u->page_address[slot] = UINT64_MAX;
        return -1;
    }
    u->page_address[slot] = page;
    *out = data;
    return 0;
}

ssize_t cw_unwinder_read(cw_unwinder *u, uint64_t address, void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        uint64_t at = address + done;
        uint64_t page = at & ~(uint64_t)(CW_PAGE_SIZE - 1);
        const uint8_t *data;
        if (read_page(u, page, &data) != 0) break;
        size_t offset = (size_t)(at - page);
        size_t chunk = CW_PAGE_SIZE - offset;
        if (chunk > length - done) chunk = length - done;
        memcpy((uint8_t *)buffer + done, data + offset, chunk);
        done += chunk;
    }
    if (done == 0 && length > 0) {
        errno = EFAULT;
        return -1;
    }
    return (ssize_t)done;
}

/* ---- libunwind accessors ---- */

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
    (void)as;
    (void)arg;
    if (write) return -UNW_EREADONLYREG;
    if (cw_unwinder_read(current_unwinder, addr, val, sizeof *val) != (ssize_t)sizeof *val) return -UNW_EINVAL;
    return 0;
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

/* The libunwind-ptrace state for the image containing `ip` (binary search over sorted ranges). */
static void *upt_for(cw_unwinder *u, uint64_t ip) {
    size_t low = 0, high = u->image_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (ip < u->images[middle].start) {
            high = middle;
        } else if (ip >= u->images[middle].end) {
            low = middle + 1;
        } else {
            struct cw_image_slot *slot = &u->images[middle];
            if (!slot->upt) slot->upt = _UPT_create(u->pid);
            return slot->upt ? slot->upt : u->upt;
        }
    }
    return u->upt;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info, void *arg) {
    (void)arg;
    return _UPT_find_proc_info(as, ip, pi, need_unwind_info, upt_for(current_unwinder, ip));
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    (void)arg;
    _UPT_put_unwind_info(as, pi, upt_for(current_unwinder, pi->start_ip));
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg) {
    (void)as; (void)dilap; (void)arg;
    return -UNW_ENOINFO; /* no JIT-registered unwind info */
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

cw_unwinder *cw_unwinder_create(pid_t pid) {
    cw_unwinder *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->pid = pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    u->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
    u->page_address = malloc(CW_CACHE_SLOTS * sizeof *u->page_address);
    u->pages = malloc((size_t)CW_CACHE_SLOTS * CW_PAGE_SIZE);
    u->upt = _UPT_create(pid);
    u->space = unw_create_addr_space(&accessors, 0);
    if (!u->page_address || !u->pages || !u->upt || !u->space) {
        int e = errno ? errno : ENOMEM;
        cw_unwinder_destroy(u);
        errno = e;
        return NULL;
    }
    for (size_t i = 0; i < CW_CACHE_SLOTS; i++) u->page_address[i] = UINT64_MAX;
    unw_set_caching_policy(u->space, UNW_CACHE_GLOBAL);
    return u;
}

int cw_unwinder_set_images(cw_unwinder *u, const uint64_t *starts, const uint64_t *ends, size_t count) {
    if (count > CW_MAX_IMAGES) count = CW_MAX_IMAGES;
    struct cw_image_slot *slots = calloc(count ? count : 1, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < count; i++) {
        slots[i].start = starts[i];
        slots[i].end = ends[i];
    }
    for (size_t i = 0; i < u->image_count; i++) {
        if (u->images[i].upt) _UPT_destroy(u->images[i].upt);
    }
    free(u->images);
    u->images = slots;
    u->image_count = count;
    return 0;
}

void cw_unwinder_destroy(cw_unwinder *u) {
    if (!u) return;
    for (size_t i = 0; i < u->image_count; i++) {
        if (u->images[i].upt) _UPT_destroy(u->images[i].upt);
    }
    free(u->images);
    if (u->space) unw_destroy_addr_space(u->space);
    if (u->upt) _UPT_destroy(u->upt);
    if (u->mem_fd >= 0) close(u->mem_fd);
    free(u->page_address);
    free(u->pages);
    free(u);
}

int cw_unwind(cw_unwinder *u, const uint64_t *registers, size_t register_count,
              cw_frame *frames, int max_frames, int *stop) {
    current_unwinder = u;
    current_registers = registers;
    current_register_count = register_count;
    *stop = CW_UNWIND_STOP_END;

    unw_cursor_t cursor;
    int result = unw_init_remote(&cursor, u->space, u->upt);
    if (result < 0) {
        *stop = result;
        current_unwinder = NULL;
        return 0;
    }
    int count = 0;
    while (count < max_frames) {
        unw_word_t pc = 0, sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &pc);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        unw_proc_info_t info;
        cw_frame *frame = &frames[count];
        frame->pc = pc;
        frame->sp = sp;
        frame->signal_frame = unw_is_signal_frame(&cursor) > 0;
        frame->has_unwind_info = unw_get_proc_info(&cursor, &info) == 0 && info.format != UNW_INFO_FORMAT_DYNAMIC;
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
    current_unwinder = NULL;
    return count;
}

const char *cw_unwind_error_name(int code) {
    return unw_strerror(code);
}
