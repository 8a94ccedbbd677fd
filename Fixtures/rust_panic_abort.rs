/*
 * rust_panic_abort — a Rust panic with panic=abort: main -> rust_panic_abort::entry ->
 * rust_panic_abort::pick -> rust_panic_abort::lookup, each #[inline(never)]; lookup indexes a
 * Vec past its end (the index comes through black_box, so the bounds check stays), and the
 * failed check calls core::panicking::panic_bounds_check. With -C panic=abort the panic hook
 * prints its message to stderr ("index out of bounds: the len is 4 but the index is 9"; and
 * no backtrace, as ENV pins RUST_BACKTRACE to 0), then the runtime aborts through std's panic
 * machinery (rust_panic, panic_abort's __rust_start_panic) into libc's
 * abort(): SIGABRT, SI_TKILL, on the main thread. Built like rust_oob (opt-level 2, -g, lld).
 * CRASH-STACK is the crashed thread as gdb shows it on the core, innermost first: libc's abort
 * frames, std's panic machinery (gdb names std's frames from DWARF: std::panicking::panic_handler
 * is the function whose ELF symbol is __rustc::rust_begin_unwind), then the program's own, then
 * std's start-up frames (several inlined at one address) down to libc. The tail-call frame
 * __pthread_kill_internal gdb reconstructs between __pthread_kill_implementation and raise is
 * not on the stack and is left out. A comma inside <...>, (...) or {...} does not separate
 * entries.
 *
 * BUILD: --edition 2021 -C opt-level=2 -g -C panic=abort -C link-arg=-fuse-ld=lld
 * ARGS:
 * ENV: RUST_BACKTRACE=0
 * EXIT: signal SIGABRT
 * CRASHES: 1
 * CRASH-SIGNAL: SIGABRT
 * CRASH-CODE: SI_TKILL
 * CRASH-THREAD: main
 * CRASH-FUNCTION: rust_panic_abort::lookup
 * CRASH-STACK: __pthread_kill_implementation,__GI_raise,__GI_abort,std::sys::pal::unix::abort_internal,std::process::abort,std::rt::__rust_abort,panic_abort::__rust_start_panic,std::panicking::rust_panic,std::panicking::panic_with_hook,std::panicking::panic_handler::{closure#0},std::sys::backtrace::__rust_end_short_backtrace<std::panicking::panic_handler::{closure_env#0}, !>,std::panicking::panic_handler,core::panicking::panic_fmt,core::panicking::panic_bounds_check,rust_panic_abort::lookup,rust_panic_abort::pick,rust_panic_abort::entry,rust_panic_abort::main,core::ops::function::FnOnce::call_once<fn(), ()>,std::sys::backtrace::__rust_begin_short_backtrace<fn(), ()>,std::rt::lang_start::{closure#0}<()>,core::ops::function::impls::{impl#2}::call_once<(), (dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe)>,std::panicking::catch_unwind::do_call<&(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe), i32>,std::panicking::catch_unwind<i32, &(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe)>,std::panic::catch_unwind<&(dyn core::ops::function::Fn<(), Output=i32> + core::marker::Sync + core::panic::unwind_safe::RefUnwindSafe), i32>,std::rt::lang_start_internal::{closure#0},std::panicking::catch_unwind::do_call<std::rt::lang_start_internal::{closure_env#0}, isize>,std::panicking::catch_unwind<isize, std::rt::lang_start_internal::{closure_env#0}>,std::panic::catch_unwind<std::rt::lang_start_internal::{closure_env#0}, isize>,std::rt::lang_start_internal,main,__libc_start_call_main
 * STDOUT: ready
 */
use std::hint::black_box;
use std::io::Write;

/// Returns `table[index]`: panics when `index` is past the end.
#[inline(never)]
fn lookup(table: &[u32], index: usize) -> u32 {
    table[index].wrapping_mul(3)
}

#[inline(never)]
fn pick(table: &[u32], offset: usize) -> u32 {
    let first = lookup(table, 0);
    let chosen = lookup(table, black_box(offset) + 5);
    black_box(first ^ chosen).wrapping_add(1)
}

#[inline(never)]
fn entry(count: u32) -> u32 {
    let table: Vec<u32> = (0..count).map(|i| i * i + 1).collect();
    let value = pick(&table, black_box(4));
    black_box(value).wrapping_add(table[0])
}

fn main() {
    println!("ready");
    std::io::stdout().flush().unwrap();
    let value = entry(black_box(4));
    println!("{}", value);
}
