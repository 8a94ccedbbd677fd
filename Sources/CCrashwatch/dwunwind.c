/*
 * dwunwind.c — stack unwinding with libdw's unwinder (elfutils' frame API) over a captured address space,
 * for the stacks libunwind cannot do: libunwind is built for the host alone, so an aarch64 core on an
 * x86-64 machine (or the reverse) goes through libdw, whose backends know every architecture's CFI rules,
 * and so does ARM64 on any host (libunwind stops at DW_CFA_AARCH64_negate_ra_state). The modules are the
 * image files the caller opened and checked, reported by descriptor; memory is the cw_space (captured
 * stacks, image bytes): nothing here opens a path or reads a process.
 *
 * ARM64 pointer authentication: elfutils 0.188 neither strips PAC bits from return addresses nor lets a
 * client see them on their way, so every word the unwinder reads has the code-address mask cleared. For
 * the registers CFI restores (x19–x30) that is exact where they hold pointers (a user-space pointer has
 * no bits under the mask) and changes nothing the report shows where they do not.
 */
#define _GNU_SOURCE
#include "ccrashwatch/dwunwind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

struct cw_dwfl_unwinder {
    Dwfl *dwfl;
    Dwfl_Callbacks callbacks;
    cw_space *memory;
    uint16_t machine;
    uint64_t code_mask;
    int attached;
    char *header;   /* a bare ELF header naming the architecture: libdw picks its backend from it */
    Elf *architecture;
    /* The thread being unwound. */
    const uint64_t *registers;
    size_t register_count;
    const char *error;
};

/* Every module is reported with its file; nothing is looked for by path. */
static int no_elf(Dwfl_Module *m, void **u, const char *n, Dwarf_Addr b, char **f, Elf **e) {
    (void)m, (void)u, (void)n, (void)b, (void)f, (void)e;
    return -1;
}

static int no_debuginfo(Dwfl_Module *m, void **u, const char *n, Dwarf_Addr b, const char *f, const char *d,
                        GElf_Word c, char **out) {
    (void)m, (void)u, (void)n, (void)b, (void)f, (void)d, (void)c, (void)out;
    return -1;
}

cw_dwfl_unwinder *cw_dwfl_unwinder_create(cw_space *memory, uint16_t elf_machine, uint64_t code_mask) {
    if (elf_machine != EM_AARCH64 && elf_machine != EM_X86_64) {
        errno = EINVAL;
        return NULL;
    }
    elf_version(EV_CURRENT);
    cw_dwfl_unwinder *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->memory = memory;
    u->machine = elf_machine;
    u->code_mask = code_mask;
    u->callbacks.find_elf = no_elf;
    u->callbacks.find_debuginfo = no_debuginfo;
    u->callbacks.section_address = dwfl_offline_section_address;
    u->header = calloc(1, sizeof(Elf64_Ehdr));
    if (u->header) {
        Elf64_Ehdr *h = (Elf64_Ehdr *)u->header;
        memcpy(h->e_ident, ELFMAG, SELFMAG);
        h->e_ident[EI_CLASS] = ELFCLASS64;
        h->e_ident[EI_DATA] = ELFDATA2LSB;
        h->e_ident[EI_VERSION] = EV_CURRENT;
        h->e_type = ET_CORE;
        h->e_machine = elf_machine;
        h->e_version = EV_CURRENT;
        h->e_ehsize = sizeof(Elf64_Ehdr);
        u->architecture = elf_memory(u->header, sizeof(Elf64_Ehdr));
    }
    u->dwfl = u->architecture ? dwfl_begin(&u->callbacks) : NULL;
    if (!u->dwfl) {
        cw_dwfl_unwinder_destroy(u);
        errno = ENOMEM;
        return NULL;
    }
    dwfl_report_begin(u->dwfl);
    return u;
}

int cw_dwfl_unwinder_report(cw_dwfl_unwinder *u, const char *name, int fd, uint64_t load_address) {
    if (u->attached) {
        errno = EBUSY;
        return -1;
    }
    int own = dup(fd); /* libdw closes it at the end */
    if (own < 0) return -1;
    if (!dwfl_report_elf(u->dwfl, name, name, own, load_address, false)) {
        close(own);
        u->error = dwfl_errmsg(-1);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

const char *cw_dwfl_unwinder_error(cw_dwfl_unwinder *u) {
    return u->error ? u->error : "unknown libdw error";
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg) {
    /* Threads are unwound one at a time, by id (get_thread): there is no list to walk. */
    (void)dwfl, (void)arg, (void)thread_arg;
    return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg) {
    (void)dwfl, (void)tid;
    *thread_arg = arg;
    return true;
}

static bool read_word(Dwfl *dwfl, Dwarf_Addr address, Dwarf_Word *result, void *arg) {
    (void)dwfl;
    cw_dwfl_unwinder *u = arg;
    uint64_t word;
    if (cw_space_read(u->memory, address, &word, sizeof word) != (ssize_t)sizeof word) return false;
    *result = word & ~u->code_mask;
    return true;
}

/* x86-64 DWARF registers 0–16 (rax rdx rcx rbx rsi rdi rbp rsp r8–r15 rip) as slots of user_regs_struct. */
static const uint8_t x86_64_slots[17] = {10, 12, 11, 5, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0, 16};

static bool set_initial_registers(Dwfl_Thread *thread, void *arg) {
    cw_dwfl_unwinder *u = arg;
    Dwarf_Word dwarf[32];
    if (u->machine == EM_AARCH64) {
        /* user_pt_regs: x0–x30, sp, pc, pstate; DWARF 0–30 are x0–x30, 31 is sp. */
        if (u->register_count < 33) return false;
        for (int i = 0; i < 32; i++) dwarf[i] = u->registers[i];
        dwarf[30] &= ~u->code_mask; /* the link register may be signed already (paciasp) */
        if (!dwfl_thread_state_registers(thread, 0, 32, dwarf)) return false;
        dwfl_thread_state_register_pc(thread, u->registers[32] & ~u->code_mask);
        return true;
    }
    if (u->register_count < 20) return false;
    for (int i = 0; i < 17; i++) dwarf[i] = u->registers[x86_64_slots[i]];
    if (!dwfl_thread_state_registers(thread, 0, 17, dwarf)) return false;
    dwfl_thread_state_register_pc(thread, u->registers[16]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = read_word,
    .set_initial_registers = set_initial_registers,
};

/* Whether CFI (.eh_frame, else .debug_frame) covers `address` in its module. */
static int has_cfi(Dwfl *dwfl, Dwarf_Addr address) {
    Dwfl_Module *module = dwfl_addrmodule(dwfl, address);
    if (!module) return 0;
    Dwarf_Addr bias;
    Dwarf_Frame *frame;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(module, &bias);
    if (cfi && dwarf_cfi_addrframe(cfi, address - bias, &frame) == 0) {
        free(frame);
        return 1;
    }
    cfi = dwfl_module_dwarf_cfi(module, &bias);
    if (cfi && dwarf_cfi_addrframe(cfi, address - bias, &frame) == 0) {
        free(frame);
        return 1;
    }
    return 0;
}

/* Whether `address` lies in a PLT section of its module: stubs with no CFI and no frame record of their own. */
static int in_plt(Dwfl *dwfl, Dwarf_Addr address) {
    Dwfl_Module *module = dwfl_addrmodule(dwfl, address);
    if (!module) return 0;
    Dwarf_Addr offset = address, bias;
    Elf_Scn *section = dwfl_module_address_section(module, &offset, &bias);
    Elf *elf = dwfl_module_getelf(module, &bias);
    GElf_Shdr header;
    size_t names;
    if (!section || !elf || !gelf_getshdr(section, &header) || elf_getshdrstrndx(elf, &names) != 0) return 0;
    const char *name = elf_strptr(elf, names, header.sh_name);
    return name && (strcmp(name, ".plt") == 0 || strcmp(name, ".iplt") == 0 || strcmp(name, ".plt.sec") == 0);
}

struct walk {
    cw_dwfl_unwinder *u;
    cw_frame *frames;
    int max_frames, count, stop;
    int expect_repeat; /* the frame-pointer walk's first step is about to repeat the last frame's pc */
    int called;        /* the unwind starts at a return address (after a PLT stub): not a signal frame */
};

static int on_frame(Dwfl_Frame *state, void *arg) {
    struct walk *w = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation)) {
        w->u->error = dwfl_errmsg(-1);
        w->stop = CW_UNWIND_STOP_ERROR;
        return DWARF_CB_ABORT;
    }
    /* A zero return address ends the stack (a thread's outermost frame): it is no frame. */
    if (pc == 0 && w->count > 0) {
        w->stop = CW_UNWIND_STOP_END;
        return DWARF_CB_ABORT;
    }
    /* Where CFI ends, libdw's aarch64 backend walks frame records, and its first step takes the caller's
     * pc from the link register, which in a frame CFI restored is that frame's own return address: the
     * last frame again. That repeat is no frame. */
    int repeat = w->expect_repeat && pc == w->frames[w->count - 1].pc;
    w->expect_repeat = 0;
    if (repeat) return DWARF_CB_OK;
    cw_frame *frame = &w->frames[w->count];
    /* libdw's frame API (0.188) gives no register of an unwound frame: only the first frame's sp is known. */
    frame->pc = pc;
    frame->sp = w->count == 0 ? w->u->registers[w->u->machine == EM_AARCH64 ? 31 : 19] : 0;
    frame->signal_frame = w->count > 0 && activation && !w->called;
    w->called = 0;
    frame->has_unwind_info = has_cfi(w->u->dwfl, activation ? pc : pc - 1);
    w->count++;
    w->expect_repeat = w->u->machine == EM_AARCH64 && w->count >= 2 && !frame->has_unwind_info && frame[-1].has_unwind_info;
    if (w->count == w->max_frames) {
        w->stop = CW_UNWIND_STOP_LIMIT;
        return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

int cw_dwfl_unwind(cw_dwfl_unwinder *u, const uint64_t *registers, size_t register_count,
                   cw_frame *frames, int max_frames, int *stop) {
    *stop = CW_UNWIND_STOP_END;
    u->error = NULL;
    if (max_frames <= 0) return 0;
    if (!u->attached) {
        dwfl_report_end(u->dwfl, NULL, NULL);
        /* The pid only names the process to libdw; nothing reads it. */
        if (!dwfl_attach_state(u->dwfl, u->architecture, 1, &thread_callbacks, u)) {
            u->error = dwfl_errmsg(-1);
            *stop = CW_UNWIND_STOP_ERROR;
            return 0;
        }
        u->attached = 1;
    }
    u->registers = registers;
    u->register_count = register_count;
    struct walk w = {.u = u, .frames = frames, .max_frames = max_frames, .count = 0, .stop = CW_UNWIND_STOP_END};
    /* An ARM64 PLT stub has no CFI and pushes no frame record, so libdw's frame-record walk would take
     * the caller's record for the stub's and skip a frame: the stub's caller is at lr, every other
     * register as it is. The stub is the first frame; the unwind goes on from lr. */
    uint64_t from_lr[34];
    if (u->machine == EM_AARCH64 && register_count >= 33 && register_count <= 34 && max_frames > 1) {
        uint64_t pc = registers[32] & ~u->code_mask;
        if (!has_cfi(u->dwfl, pc) && in_plt(u->dwfl, pc)) {
            frames[0] = (cw_frame){.pc = pc, .sp = registers[31], .signal_frame = 0, .has_unwind_info = 0};
            w.count = 1;
            w.called = 1;
            memcpy(from_lr, registers, register_count * sizeof *registers);
            from_lr[32] = registers[30];
            u->registers = from_lr;
        }
    }
    int result = dwfl_getthread_frames(u->dwfl, 1, on_frame, &w);
    if (result < 0) {
        /* The caller of the last frame was not found (or, with no frame, the registers were refused). */
        u->error = dwfl_errmsg(-1);
        w.stop = CW_UNWIND_STOP_ERROR;
    }
    u->registers = NULL;
    *stop = w.stop;
    return w.count;
}

void cw_dwfl_unwinder_destroy(cw_dwfl_unwinder *u) {
    if (!u) return;
    if (u->dwfl) dwfl_end(u->dwfl);
    if (u->architecture) elf_end(u->architecture);
    free(u->header);
    free(u);
}
