//! The synchronisation the generation switch is made of (`pin.rs`), named
//! in one place: the loom model (`runtime/loom`) compiles `pin.rs` against
//! loom's versions of these instead.

pub(crate) use parking_lot::Mutex;
pub(crate) use std::sync::Arc;
pub(crate) use std::sync::atomic::{AtomicU64, Ordering, compiler_fence, fence};
pub(crate) use std::thread::yield_now;
