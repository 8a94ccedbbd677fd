/*
 * annotate_dlopen — dlopen()s libannotate_plugin.so from the directory of its own executable (the
 * library, not the program, declares the crashwatch annotation table: its note is found only in an
 * image loaded at run time), calls its plugin_record(), which records the context of
 * annotate_context.h with language "c-plugin", then dereferences NULL in crash_here() (main ->
 * crash_here). The report's annotations are exactly ANNOTATIONS, its breadcrumbs exactly
 * BREADCRUMBS (see annotate_c).
 *
 * BUILD: -O0 -g -ldl
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: crash_here
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=c-plugin session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) void crash_here(void)
{
    volatile int *volatile p = NULL;
    *p = 42;
}

int main(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash - path) + sizeof "/libannotate_plugin.so" > sizeof path) {
        fprintf(stderr, "annotate_dlopen: unexpected executable path %s\n", path);
        return 1;
    }
    strcpy(slash, "/libannotate_plugin.so");
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void (*record)(void) = plugin == NULL ? NULL : (void (*)(void))dlsym(plugin, "plugin_record");
    if (record == NULL) {
        fprintf(stderr, "annotate_dlopen: %s\n", dlerror());
        return 1;
    }
    record();
    printf("ready\n");
    fflush(stdout);
    crash_here();
    return 0;
}
