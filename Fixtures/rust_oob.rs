/*
 * rust_oob — Rust (edition 2021) built optimized (-C opt-level=2 -g -C panic=abort) and linked
 * with LLVM's lld (-C link-arg=-fuse-ld=lld: rustc 1.90 and later link with rust-lld by
 * default on x86-64 Linux; saying so keeps older rustc versions on the same linker). main ->
 * rust_oob::entry -> rust_oob::scatter -> rust_oob::write_at, each #[inline(never)] and using
 * its callee's result afterwards (no tail calls); write_at stores through a raw pointer
 * computed far past the end of a boxed slice, into unmapped memory: SIGSEGV, SEGV_MAPERR, at an
 * address that depends on where the heap lies (not deterministic). No panic, no unwinding. But
 * Rust's std installs a SIGSEGV handler (its stack-overflow detector): for a fault outside a
 * guard page it restores SIG_DFL and returns, so the store is retried and faults again, now
 * fatally. The report therefore carries the first, handled SIGSEGV as its original fault (same
 * thread, same pc), like any handler that re-raises. Rust's std frames (lang_start and its
 * closures, __rust_begin_short_backtrace) sit between rust_oob::main and the C main.
 *
 * ELF symbols are mangled: legacy for the program's own functions (with a ::h<hash> suffix),
 * v0 (_R...) for std. CRASH-STACK lists the frames as gdb shows them on the core, that is by
 * their DWARF names qualified by their namespaces (crate::path, generic arguments in <...>, no
 * hash), inlined calls included (core::ptr::write_volatile<u64> inlined in write_at, std's
 * catch_unwind layers inlined in lang_start_internal). A comma inside <...>, (...) or {...}
 * does not separate entries. RUST_BACKTRACE is pinned to 0 (ENV). Debian's libunwind 1.6.2
 * finds no unwind table in lld output (PITFALLS.md, "Real toolchains"). build.sh builds it
 * with the rustc on PATH or in $HOME/.cargo/bin, and skips it (the Rust tests then report a
 * skip) when there is none.
 *
 * BUILD: --edition 2021 -C opt-level=2 -g -C panic=abort -C link-arg=-fuse-ld=lld
 * ARGS:
 * ENV: RUST_BACKTRACE=0
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * ORIGINAL-SIGNAL: SIGSEGV
 * ORIGINAL-CODE: SEGV_MAPERR
 * ORIGINAL-FUNCTION: rust_oob::write_at
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-THREAD: main
 * CRASH-FUNCTION: rust_oob::write_at
 * CRASH-STACK: core::ptr::write_volatile<u64>,rust_oob::write_at,rust_oob::scatter,rust_oob::entry,rust_oob::main,core::ops::function::FnOnce::call_once<fn(), ()>,std::sys::backtrace::__rust_begin_short_backtrace<fn(), ()>,std::rt::lang_start::{closure#0}<()>,core::ops::function::impls::{impl#2}::call_once<(), (dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe)>,std::panicking::catch_unwind::do_call<&(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe), i32>,std::panicking::catch_unwind<i32, &(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe)>,std::panic::catch_unwind<&(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe), i32>,std::rt::lang_start_internal::{closure#0},std::panicking::catch_unwind::do_call<std::rt::lang_start_internal::{closure_env#0}, isize>,std::panicking::catch_unwind<isize, std::rt::lang_start_internal::{closure_env#0}>,std::panic::catch_unwind<std::rt::lang_start_internal::{closure_env#0}, isize>,std::rt::lang_start_internal,main,__libc_start_call_main
 * STDOUT: ready
 */
use std::hint::black_box;
use std::io::Write;

/// Stores `value` at `base + index` elements through a raw pointer, unchecked.
#[inline(never)]
fn write_at(base: *mut u64, index: usize, value: u64) -> u64 {
    unsafe {
        let target = base.wrapping_add(index);
        std::ptr::write_volatile(target, value);
        std::ptr::read_volatile(base) ^ value
    }
}

/// Writes a few in-bounds values, then one far out of bounds.
#[inline(never)]
fn scatter(slots: &mut [u64], stride: usize) -> u64 {
    let base = slots.as_mut_ptr();
    let mut sum = 0u64;
    for i in 0..slots.len() {
        sum = sum.wrapping_add(write_at(base, i, i as u64 * 3));
    }
    // 1 << 40 elements (8 TiB) past the slice: far beyond any mapping.
    sum = sum.wrapping_add(write_at(base, black_box(stride) << 40, sum));
    black_box(sum).wrapping_mul(7)
}

#[inline(never)]
fn entry(count: usize) -> u64 {
    let mut slots = vec![0u64; count].into_boxed_slice();
    let result = scatter(&mut slots, black_box(1));
    black_box(result).wrapping_add(slots[0])
}

fn main() {
    println!("ready");
    std::io::stdout().flush().unwrap();
    let result = entry(black_box(16));
    println!("{}", result);
}
