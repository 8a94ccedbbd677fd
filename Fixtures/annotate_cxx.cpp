/*
 * annotate_cxx — C++ using annotations/crashwatch_annotations.h (extern "C", header-only): declares
 * the table in its executable, sets the annotations of annotate_context.h with language "c++" from
 * std::string values and the 100 breadcrumbs from a std::vector, through a small RAII-free wrapper
 * class, then dereferences NULL in crashwatch_demo::crash_here() (main -> crash_here). The report's
 * annotations are exactly ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see annotate_c).
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-SYMBOL: _ZN15crashwatch_demo10crash_hereEv
 * CRASH-DEMANGLED: crashwatch_demo::crash_here()
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=c++ session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
#define CRASHWATCH_ANNOTATIONS_IMPLEMENTATION
#include "../annotations/crashwatch_annotations.h"

#include <cstdio>
#include <string>
#include <vector>

namespace crashwatch_demo {

struct Context {
    void set(const std::string &key, const std::string &value) { crashwatch_annotate(key.c_str(), value.c_str()); }
    void remove(const std::string &key) { crashwatch_annotate(key.c_str(), nullptr); }
    void trail(crashwatch_level level, const std::string &message) { crashwatch_breadcrumb(level, message.c_str()); }
};

__attribute__((noinline)) void crash_here()
{
    volatile int *volatile p = nullptr;
    *p = 42;
}

}  // namespace crashwatch_demo

int main()
{
    crashwatch_demo::Context context;
    context.set("language", "c++");
    context.set("build", "debug");
    context.set("scratch", "temporary");
    context.set("user_id", std::to_string(42));
    context.set("city", "Z\xc3\xbcrich");
    context.set("session_token", "hunter2");
    context.set("build", "release");
    context.remove("scratch");
    std::vector<std::string> steps;
    for (int i = 0; i < 100; i++) steps.push_back("step " + std::to_string(i));
    for (size_t i = 0; i < steps.size(); i++) context.trail(static_cast<crashwatch_level>(i % 5), steps[i]);
    std::printf("ready\n");
    std::fflush(stdout);
    crashwatch_demo::crash_here();
    return 0;
}
