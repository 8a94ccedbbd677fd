//! crashwatch_annotations.rs — annotations and breadcrumbs that crashwatch reads out of a crashed Rust
//! program, with no crate, no library to link and no code on the crash path: the same table and note as
//! crashwatch_annotations.h (format version 1, docs/annotations.md), written with plain and atomic stores.
//!
//! Copy this file into the crate (or `#[path = ".../crashwatch_annotations.rs"] mod crashwatch;`), then:
//!
//!     crashwatch::annotate("request_id", Some("7f3a-19")); // set or replace a key
//!     crashwatch::annotate("request_id", None);            // remove it
//!     crashwatch::breadcrumb(crashwatch::Level::Info, "cache miss for user 42");
//!
//! One table per image: use the module once per executable or cdylib (a C part of the same image that
//! uses the C header declares its own table; both are found). x86-64 and ARM64 Linux. Keys and values
//! longer than their slots are cut at a UTF-8 character boundary; `annotate` returns false when no slot
//! was free. The sizes are the C header's defaults; change them here alone.
#![allow(dead_code)]

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

pub const ANNOTATION_SLOTS: usize = 64;
pub const KEY_SIZE: usize = 64;
pub const VALUE_SIZE: usize = 256;
pub const BREADCRUMB_SLOTS: usize = 64;
pub const MESSAGE_SIZE: usize = 128;

/// A breadcrumb's level, as the format numbers it.
#[derive(Clone, Copy)]
#[repr(u8)]
pub enum Level { Debug = 0, Info = 1, Warning = 2, Error = 3, Fatal = 4 }

#[repr(C)]
struct AnnotationSlot { sequence: AtomicU32, key_length: u16, value_length: u16, text: [u8; (KEY_SIZE + VALUE_SIZE + 7) & !7] }

#[repr(C)]
struct BreadcrumbSlot { sequence: AtomicU32, level: u8, reserved: u8, message_length: u16, index: u64, time: i64, message: [u8; (MESSAGE_SIZE + 7) & !7] }

#[repr(C)]
struct Table {
    magic: [u8; 8], version: u32, header_size: u32,
    annotations: *mut AnnotationSlot, annotation_slots: u32, key_size: u16, value_size: u16,
    breadcrumbs: *mut BreadcrumbSlot, breadcrumb_slots: u32, message_size: u16, reserved: u16,
    breadcrumb_next: AtomicU64, next: u64, reserved2: u64,
}

#[repr(C)]
struct Storage { table: Table, annotations: [AnnotationSlot; ANNOTATION_SLOTS], breadcrumbs: [BreadcrumbSlot; BREADCRUMB_SLOTS] }

#[repr(transparent)]
struct Cell(UnsafeCell<Storage>);
unsafe impl Sync for Cell {}

const EMPTY_ANNOTATION: AnnotationSlot = AnnotationSlot { sequence: AtomicU32::new(0), key_length: 0, value_length: 0, text: [0; (KEY_SIZE + VALUE_SIZE + 7) & !7] };
const EMPTY_BREADCRUMB: BreadcrumbSlot = BreadcrumbSlot { sequence: AtomicU32::new(0), level: 0, reserved: 0, message_length: 0, index: 0, time: 0, message: [0; (MESSAGE_SIZE + 7) & !7] };

/// The table and its slots, in writable data; the slot pointers are relocated by the loader. Not
/// `#[no_mangle]`: an exported symbol could be preempted in a cdylib, and the note's address difference
/// must be resolved when the image is linked.
#[used]
static CRASHWATCH_TABLE: Cell = Cell(UnsafeCell::new(Storage {
    table: Table {
        magic: *b"CWTABLE\0", version: 1, header_size: core::mem::size_of::<Table>() as u32,
        annotations: unsafe { (&raw const CRASHWATCH_TABLE as *mut Storage as *mut u8).add(core::mem::offset_of!(Storage, annotations)) as *mut AnnotationSlot },
        annotation_slots: ANNOTATION_SLOTS as u32, key_size: KEY_SIZE as u16, value_size: VALUE_SIZE as u16,
        breadcrumbs: unsafe { (&raw const CRASHWATCH_TABLE as *mut Storage as *mut u8).add(core::mem::offset_of!(Storage, breadcrumbs)) as *mut BreadcrumbSlot },
        breadcrumb_slots: BREADCRUMB_SLOTS as u32, message_size: MESSAGE_SIZE as u16, reserved: 0,
        breadcrumb_next: AtomicU64::new(0), next: 0, reserved2: 0,
    },
    annotations: [EMPTY_ANNOTATION; ANNOTATION_SLOTS],
    breadcrumbs: [EMPTY_BREADCRUMB; BREADCRUMB_SLOTS],
}));

// The note: owner "crashwatch", type 1, descriptor = the table's address minus the descriptor's.
core::arch::global_asm!(
    ".pushsection .note.crashwatch, \"aR\", %note",
    ".balign 8",
    ".long 11", ".long 8", ".long 1",
    ".asciz \"crashwatch\"",
    ".balign 4",
    "1: .quad {table} - 1b",
    ".popsection",
    table = sym CRASHWATCH_TABLE,
);

fn storage() -> *mut Storage { CRASHWATCH_TABLE.0.get() }

/// The length of `text` cut to `limit` bytes without splitting a UTF-8 character.
fn fit(text: &str, limit: usize) -> usize {
    if text.len() <= limit { return text.len(); }
    let mut n = limit;
    while !text.is_char_boundary(n) { n -= 1; }
    n
}

fn claim(sequence: &AtomicU32) -> Option<u32> {
    let seen = sequence.load(Ordering::Relaxed);
    if seen & 1 != 0 { return None; }
    sequence.compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed).ok()
}

unsafe fn same_key(slot: *const AnnotationSlot, key: &[u8]) -> bool {
    let text = (&raw const (*slot).text).cast::<u8>();
    (*slot).key_length as usize == key.len() && (0..key.len()).all(|i| *text.add(i) == key[i])
}

/// Copies `bytes` to `to` with plain stores (the slot is raw memory another thread may read).
unsafe fn store(bytes: &[u8], to: *mut u8) { core::ptr::copy_nonoverlapping(bytes.as_ptr(), to, bytes.len()) }

/// Sets `key` to `value` (None removes it); false when no slot was free.
pub fn annotate(key: &str, value: Option<&str>) -> bool {
    let key = &key.as_bytes()[..fit(key, KEY_SIZE)];
    if key.is_empty() { return false; }
    unsafe {
        let slots = &raw mut (*storage()).annotations;
        for _ in 0..64 {
            let mut found = (0..ANNOTATION_SLOTS).find(|&i| same_key(&raw const (*slots)[i], key));
            if found.is_none() && value.is_none() { return true; }
            if found.is_none() { found = (0..ANNOTATION_SLOTS).find(|&i| (*slots)[i].key_length == 0); }
            let Some(i) = found else { return false };
            let slot = &raw mut (*slots)[i];
            let Some(was) = claim(&(*slot).sequence) else { continue };
            if (*slot).key_length != 0 && !same_key(slot, key) {
                (*slot).sequence.store(was + 2, Ordering::Release); // another thread took it meanwhile
                continue;
            }
            match value {
                None => { (*slot).key_length = 0; (*slot).value_length = 0; }
                Some(value) => {
                    let value = &value.as_bytes()[..fit(value, VALUE_SIZE)];
                    let text = (&raw mut (*slot).text).cast::<u8>();
                    store(key, text);
                    store(value, text.add(KEY_SIZE));
                    (*slot).key_length = key.len() as u16;
                    (*slot).value_length = value.len() as u16;
                }
            }
            (*slot).sequence.store(was + 2, Ordering::Release);
            return true;
        }
    }
    false
}

/// Appends a breadcrumb to the ring (the oldest is overwritten once it is full).
pub fn breadcrumb(level: Level, message: &str) {
    let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
    unsafe {
        let table = &raw mut (*storage()).table;
        let index = (*table).breadcrumb_next.fetch_add(1, Ordering::Relaxed);
        let slot = &raw mut (*storage()).breadcrumbs[(index % BREADCRUMB_SLOTS as u64) as usize];
        let Some(was) = claim(&(*slot).sequence) else { return }; // a writer a full ring behind holds it
        let message = &message.as_bytes()[..fit(message, MESSAGE_SIZE)];
        (*slot).level = level as u8;
        (*slot).index = index;
        (*slot).time = time;
        store(message, (&raw mut (*slot).message).cast::<u8>());
        (*slot).message_length = message.len() as u16;
        (*slot).sequence.store(was + 2, Ordering::Release);
    }
}
