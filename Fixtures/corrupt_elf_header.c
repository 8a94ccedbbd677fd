/*
 * corrupt_elf_header — overwrites the ELF header of its own executable in memory, then
 * crashes. The header is the start of the first mapping of the executable (file offset 0; the
 * linker's __ehdr_start symbol). The program makes that page writable with mprotect (a private
 * file mapping: copy-on-write, the file is not changed), writes garbage, and sets the page back
 * to read-only, so /proc/PID/maps still shows r--p for it.
 * Without an argument (mode `phdr`): e_phoff = 0xffffffffffffffff, e_phnum = 0xffff,
 * e_phentsize = 0xffff. A reader that trusts them reads 4 GiB from an address that does not
 * exist or loops 65,535 times. The real program headers (where AT_PHDR in the auxiliary vector
 * points, right after the header) are left intact, and so is the file.
 * With the argument `class`: e_ident[EI_CLASS] = ELFCLASS32 (the 64-bit process now claims to be
 * a 32-bit ELF), e_shoff = 0xffffffffffffffff, e_shnum = 0xffff, e_shentsize = 0xffff,
 * e_shstrndx = 0xfffe.
 * Then it prints "ready" and crashes: main -> outer -> middle -> crash_here, crash_here storing
 * through a volatile NULL pointer. The report must be complete: the file on disk is intact, so
 * the stack, the names and the build-id (readelf -n of the file) are what they would be without
 * the corruption. Only the memory of this one process changes; tests may run it anywhere.
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
 * CRASH-STACK: crash_here,middle,outer,main,__libc_start_call_main
 * STDOUT: ready
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern ElfW(Ehdr) __ehdr_start;

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void middle(void)
{
    crash_here();
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void outer(void)
{
    middle();
    __asm__ volatile("" ::: "memory");
}

static int corrupt(const char *mode)
{
    ElfW(Ehdr) *header = &__ehdr_start;
    long page = sysconf(_SC_PAGESIZE);
    void *start = (void *)((uintptr_t)header & ~(uintptr_t)(page - 1));
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) {
        fprintf(stderr, "corrupt_elf_header: no ELF header at %p\n", (void *)header);
        return -1;
    }
    if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) {
        perror("mprotect");
        return -1;
    }
    if (strcmp(mode, "phdr") == 0) {
        header->e_phoff = (ElfW(Off))-1;
        header->e_phnum = 0xffff;
        header->e_phentsize = 0xffff;
    } else if (strcmp(mode, "class") == 0) {
        header->e_ident[EI_CLASS] = ELFCLASS32;
        header->e_shoff = (ElfW(Off))-1;
        header->e_shnum = 0xffff;
        header->e_shentsize = 0xffff;
        header->e_shstrndx = 0xfffe;
    } else {
        fprintf(stderr, "corrupt_elf_header: unknown mode %s (phdr or class)\n", mode);
        return -1;
    }
    if (mprotect(start, (size_t)page, PROT_READ) != 0) {
        perror("mprotect");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (corrupt(argc > 1 ? argv[1] : "phdr") != 0)
        return 1;
    printf("ready\n");
    fflush(stdout);
    outer();
    return 0;
}
