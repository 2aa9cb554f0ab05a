//! The interface between this crate and the JIT (`matchspec-jit`):
//! **not a stable API**, and hidden from the documentation.
//!
//! It exists so that the JIT can be a crate of its own and still share the
//! interpreter's code rather than copy it: the machine code runs the hot
//! ops itself and calls helpers that are thin shims over the interpreter's
//! [`Frame`] (its definition of every op, one [`Step`] at a time), on the
//! frame's heap words and registers. None of it is meant for anyone but
//! `matchspec-jit`: it changes with the engines, in any release, without
//! notice. Everything here is re-exported from where it is defined, which
//! is private to this crate; a user's API is elsewhere ([`Run`](crate::Run),
//! [`term`](mod@crate::term), [`ir`](crate::ir), ...).
//!
//! - [`Frame`] and [`Step`]: a run of a program and the interpreter's
//!   meaning of each op, which the JIT's helpers call.
//! - [`number`]: the number fast path both engines take (a number read
//!   from its header and the words after it, arithmetic and comparisons
//!   on such numbers), which the JIT's lean helpers call on the words they
//!   read.
//! - [`scan`]: what the plain-term scan checks an element with, and the
//!   format's tags, which the JIT's wire runs read the same way.

pub use crate::interp::frame::{Frame, Step};

/// The number fast path every engine shares: see `matchspec/src/number.rs`.
pub mod number {
    pub use crate::number::{Encoded, Number, Value, arith, order};
}

/// The plain-term scan's tables and the tags it reads: see
/// `matchspec/src/etf/scan.rs`.
pub mod scan {
    pub use crate::etf::scan::{FIXED_SIZE, HIGH_BITS, WINDOW};

    /// The external term format's tags (`erts/emulator/beam/external.h`).
    pub mod tag {
        pub use crate::etf::tag::{
            INTEGER_EXT, SMALL_ATOM_UTF8_EXT, SMALL_INTEGER_EXT, SMALL_TUPLE_EXT,
        };
    }
}
