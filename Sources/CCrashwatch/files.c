/*
 * files.c — file calls Swift's Glibc module does not expose: renameat2(RENAME_NOREPLACE), which moves an
 * entry only when nothing exists under the new name (the spool's claim, release and quarantine moves).
 */
#define _GNU_SOURCE
#include "ccrashwatch.h"

#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int cw_renameat_noreplace(int old_dirfd, const char *old_name, int new_dirfd, const char *new_name) {
    return (int)syscall(SYS_renameat2, old_dirfd, old_name, new_dirfd, new_name, RENAME_NOREPLACE);
}
