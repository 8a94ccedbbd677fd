/*
 * libappplugin — the plugin dlopen'ed by dlopen_crash; build.sh builds it into OUTDIR as
 * libappplugin.so (-shared -fPIC). plugin_entry() calls plugin_crash(), which dereferences NULL.
 *
 * BUILD: -O0 -g
 */
#include <stddef.h>

__attribute__((noinline)) void plugin_crash(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void plugin_entry(void)
{
    plugin_crash();
    __asm__ volatile("" ::: "memory");
}
