/*
 * annotate_rust — Rust using annotations/crashwatch_annotations.rs (no crate: a static table and its
 * note from global_asm!): records the same context as annotate_context.h with language "rust" (the
 * annotations through annotate(), the 100 breadcrumbs through breadcrumb()), prints "ready", then
 * stores through a null pointer in crash_here() (main -> crash_here, #[inline(never)]; built without
 * debug assertions, so no null-pointer check panics first): SIGSEGV, SEGV_MAPERR at 0x0. The
 * report's annotations are exactly ANNOTATIONS, its breadcrumbs exactly BREADCRUMBS (see annotate_c).
 *
 * BUILD: --edition 2021 -C opt-level=1 -g -C debug-assertions=off
 * ARGS:
 * EXIT: signal SIGSEGV
 * CRASHES: 1
 * CRASH-SIGNAL: SIGSEGV
 * CRASH-CODE: SEGV_MAPERR
 * CRASH-ADDR: 0x0
 * STDOUT: ready
 * ANNOTATIONS: build=release city=Zürich language=rust session_token=<redacted> user_id=42
 * BREADCRUMBS: 36...99
 */
#[path = "../annotations/crashwatch_annotations.rs"]
mod crashwatch;

use std::io::Write;

#[inline(never)]
fn crash_here() {
    unsafe { std::ptr::write_volatile(std::hint::black_box(std::ptr::null_mut::<i32>()), 42) };
}

fn main() {
    crashwatch::annotate("language", Some("rust"));
    crashwatch::annotate("build", Some("debug"));
    crashwatch::annotate("scratch", Some("temporary"));
    crashwatch::annotate("user_id", Some(&42.to_string()));
    crashwatch::annotate("city", Some("Zürich"));
    crashwatch::annotate("session_token", Some("hunter2"));
    crashwatch::annotate("build", Some("release"));
    crashwatch::annotate("scratch", None);
    let levels = [crashwatch::Level::Debug, crashwatch::Level::Info, crashwatch::Level::Warning,
                  crashwatch::Level::Error, crashwatch::Level::Fatal];
    for i in 0..100 {
        crashwatch::breadcrumb(levels[i % 5], &format!("step {i}"));
    }
    println!("ready");
    std::io::stdout().flush().unwrap();
    crash_here();
}
