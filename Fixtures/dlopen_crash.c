/*
 * dlopen_crash — dlopen()s libappplugin.so from the directory of its own executable
 * (build.sh puts it there; keep them together when copying) and calls its plugin_entry(),
 * which calls plugin_crash(), which dereferences NULL. The crashing frames are in a
 * dlopen'ed image that is in-app (same directory as the executable):
 * plugin_crash -> plugin_entry (libappplugin.so) -> load_and_call -> main.
 *
 * BUILD: -O0 -g -ldl
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-FUNCTION: plugin_crash
 * CRASH-IMAGE: libappplugin.so
 * STDOUT: ready
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int load_and_call(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash - path) + sizeof "/libappplugin.so" > sizeof path) {
        fprintf(stderr, "dlopen_crash: unexpected executable path %s\n", path);
        return 1;
    }
    strcpy(slash, "/libappplugin.so");
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (plugin == NULL) {
        fprintf(stderr, "dlopen_crash: %s\n", dlerror());
        return 1;
    }
    void (*entry)(void) = (void (*)(void))dlsym(plugin, "plugin_entry");
    if (entry == NULL) {
        fprintf(stderr, "dlopen_crash: %s\n", dlerror());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    entry();
    return 0;
}

int main(void)
{
    return load_and_call();
}
