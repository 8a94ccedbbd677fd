/*
 * cxx_uncaught — a C++ exception nobody catches: main -> crashwatch_demo::run ->
 * crashwatch_demo::thrower(), which throws std::runtime_error. The unwinder finds no handler,
 * so __cxa_throw calls std::terminate, whose default handler (libstdc++'s verbose terminate
 * handler) prints "terminate called after throwing an instance of 'std::runtime_error'" and the
 * what() text to stderr and calls abort(). The innermost frames of the crashed thread are
 * libc's (pthread_kill, raise, abort) and libstdc++'s (the terminate handler, std::terminate,
 * __cxa_throw); thrower is the innermost frame of the fixture's own code, the frame whose
 * call of __cxa_throw never returned. Its ELF symbol is CRASH-SYMBOL, its demangling
 * CRASH-DEMANGLED; CRASH-LINE is the throw statement.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-SYMBOL: _ZN15crashwatch_demo7throwerEv
 * CRASH-DEMANGLED: crashwatch_demo::thrower()
 * CRASH-FILE: cxx_uncaught.cpp
 * CRASH-LINE: 34
 * STDOUT: ready
 */
#include <cstdio>
#include <stdexcept>

namespace crashwatch_demo {

__attribute__((noinline)) void thrower()
{
    std::printf("ready\n");
    std::fflush(stdout);
    throw std::runtime_error("crashwatch_demo: nobody catches this");
}

__attribute__((noinline)) int run()
{
    thrower();
    __asm__ volatile("" ::: "memory"); // not a tail call
    return 0;
}

} // namespace crashwatch_demo

int main()
{
    return crashwatch_demo::run();
}
