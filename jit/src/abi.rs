//! The contract between the machine code and Rust: the entry function's
//! signature, the codes it returns, and the helpers it calls.
//!
//! The compiled function is
//!
//! ```text
//! entry(ctx: *mut Ctx, registers: *mut u64, input: *const u64, input_len: u64) -> u64
//! ```
//!
//! It reads and writes the run's registers in place, reads head cells from
//! the input's words (every such read is bounds-checked against
//! `input_len`), and calls [`step`] for every op it does not do itself.
//! `step` runs the op with [`Frame::step`], the interpreter's own
//! definition, so the two engines share every rule beyond a few machine
//! instructions.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use matchspec::interp::{Frame, Step};

/// The compiled function (see the module docs).
pub(crate) type Entry = unsafe extern "C" fn(*mut c_void, *mut u64, *const u64, u64) -> u64;

/// [`Entry`] returns this when no clause matched; otherwise the register
/// holding the result, or one of the codes below.
pub(crate) const EXIT_NO_MATCH: u64 = u64::MAX;
/// A helper panicked; the payload is in [`Ctx::panic`].
pub(crate) const EXIT_PANIC: u64 = u64::MAX - 1;
/// A head op found a pointer outside the input's heap: the input is not a
/// well-formed term (the interpreter panics on the same input).
pub(crate) const EXIT_BAD_INPUT: u64 = u64::MAX - 2;

/// [`step`] returns this to go on with the next op; otherwise the label to
/// jump to, or [`STEP_PANIC`].
pub(crate) const STEP_NEXT: u64 = 1 << 32;
/// The op panicked (or asked to end the run, which only the machine code
/// may do); the payload is in [`Ctx::panic`].
pub(crate) const STEP_PANIC: u64 = 1 << 33;

/// What the machine code passes to helpers: the run's frame, and where a
/// helper leaves a panic for the caller to resume (a panic must not
/// unwind through machine code).
pub(crate) struct Ctx<'f> {
    pub(crate) frame: &'f mut dyn Stepper,
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

/// A frame, with its lifetimes erased for the trip through machine code.
pub(crate) trait Stepper {
    fn step(&mut self, pc: usize) -> Step;
}

impl Stepper for Frame<'_, '_> {
    fn step(&mut self, pc: usize) -> Step {
        Frame::step(self, pc)
    }
}

/// The helper the machine code calls for an op it does not run itself.
///
/// # Safety
///
/// `ctx` must point to a live [`Ctx`] that nothing else accesses during the
/// call, and `pc` must be an op index of the frame's program.
pub(crate) unsafe extern "C" fn step(ctx: *mut c_void, pc: u64) -> u64 {
    // SAFETY: the entry function passes on the `Ctx` pointer `run` gave it,
    // which points to a `Ctx` on `run`'s stack that lives for the whole
    // call; the machine code does not touch it, and no other reference to
    // it is used while this one lives.
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_>>() };
    let frame = &mut *ctx.frame;
    match catch_unwind(AssertUnwindSafe(|| frame.step(pc as usize))) {
        Ok(Step::Next) => STEP_NEXT,
        Ok(Step::Jump(label)) => label.index() as u64,
        Ok(Step::Succeed(_) | Step::NoMatch) => {
            ctx.panic = Some(Box::new("the JIT sent an ending op to the interpreter"));
            STEP_PANIC
        }
        Err(payload) => {
            ctx.panic = Some(payload);
            STEP_PANIC
        }
    }
}
