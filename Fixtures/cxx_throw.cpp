/*
 * cxx_throw — a NULL dereference in a C++ member function, for demangling: main ->
 * crashwatch_demo::run -> crashwatch_demo::Widget::explode(int), which stores through a
 * volatile NULL pointer. Nothing is thrown (the name is the C++ family's, see cxx_uncaught for
 * an exception). The crashed function's ELF symbol is the Itanium-mangled CRASH-SYMBOL; its
 * demangling (c++filt, or __cxa_demangle) is CRASH-DEMANGLED, parameter list included.
 *
 * BUILD: -O0 -g
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * CRASH-THREAD: main
 * CRASH-SYMBOL: _ZN15crashwatch_demo6Widget7explodeEi
 * CRASH-DEMANGLED: crashwatch_demo::Widget::explode(int)
 * CRASH-FILE: cxx_throw.cpp
 * CRASH-LINE: 38
 * STDOUT: ready
 */
#include <cstdio>

namespace crashwatch_demo {

class Widget {
public:
    explicit Widget(int size) : size_(size) {}
    int explode(int factor);

private:
    int size_;
};

__attribute__((noinline)) int Widget::explode(int factor)
{
    int *volatile target = nullptr;
    *target = size_ * factor;
    return size_;
}

__attribute__((noinline)) int run(int factor)
{
    Widget widget(factor + 3);
    int result = widget.explode(factor);
    __asm__ volatile("" ::: "memory"); // not a tail call
    return result;
}

} // namespace crashwatch_demo

int main(int argc, char **)
{
    std::printf("ready\n");
    std::fflush(stdout);
    return crashwatch_demo::run(argc);
}
