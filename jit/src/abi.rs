//! The contract between the machine code and Rust: the entry function's
//! signature, the codes it returns, and the helpers it calls.
//!
//! The compiled function runs the program on a list of inputs:
//!
//! ```text
//! entry(ctx: *mut Ctx) -> u64
//! ```
//!
//! From input [`Ctx::next`] of the `count` inputs at [`Ctx::inputs`]
//! (words of the input heap, [`Ctx::spaces`]`[INPUT]`) on, it loads each input into register
//! 0 (trace programs that need the arguments in Rust ask [`reset`] to load
//! them; the others read the input list themselves and call it only for
//! the error when the input is not a list) and runs the clauses. How an
//! outcome reaches Rust depends on what the program's helpers may do
//! ([`Effects`](crate::effects::Effects)). A match that only the code
//! touched (no helper built a term or set a flag since Rust last cleaned
//! up: [`Ctx::dirty`] is clear) is written to [`Ctx::result_words`] and the
//! code goes on with the next input; a no-match is not reported at all
//! (Rust hands over the inputs between two results as no-matches when
//! the caller wants them). The code returns to Rust, which hands the
//! buffered results over, when the buffer is full ([`EXIT_FULL`]), at the
//! end ([`EXIT_DONE`]), and at any outcome Rust must see at once: a match
//! or a no-match after a helper left something to clean up, a match of a
//! program whose helpers may touch the host, a no-match the caller wants
//! of such a program ([`DIRTY_EVERY`]) ([`EXIT_MATCHED`],
//! [`EXIT_NO_MATCH`]), an input that cannot run ([`EXIT_SKIPPED`]).
//! Returning, the code leaves the input it stopped at in [`Ctx::index`]
//! (at the end: `count`). So the outcomes reach Rust in input order, and
//! each before any later input's effects on the host (a helper that only
//! builds terms of the run is no effect anyone sees). A single run is a
//! batch of one. The code keeps registers in machine registers, storing
//! them to the run's register file for the helpers that read them there;
//! it reads head cells from the input heap (every such read is
//! bounds-checked against the heap's length), builds terms in heap words set
//! aside for it (one region per buffered result: [`Ctx::build`]), and
//! calls a helper of `HelperId` (`helpers.rs`) for what it does not do itself. Each
//! helper is a thin shim over a method of
//! [`Frame`], the interpreter's own definition
//! of what the op computes, so the two engines share every rule beyond a
//! few machine instructions.
//!
//! A helper never unwinds: a panic is caught and parked in [`Ctx::panic`],
//! and from then on every helper does nothing and answers harmlessly (go
//! on, "no", "failed", skip); the panic also sets `count` to 0 and notes
//! how many results came before it ([`Ctx::keep`]), so the code returns
//! at the input's end and Rust hands over only those before resuming the
//! panic. Nothing the spec does
//! after the panic reaches the host. The lean helpers (`lean.rs`, `arith.rs`) are
//! plain functions that cannot panic and run even after a panic,
//! harmlessly.

use std::any::Any;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};

use matchspec::EvalError;
use matchspec::bif::{self, Bif};
use matchspec::engine_internals::{Frame, Step};
use matchspec::ir::{Cmp, Operands};
use matchspec::term::{Space, Word};

/// The compiled function (see the module docs).
pub(crate) type Entry = unsafe extern "C" fn(*mut c_void) -> u64;

/// [`Entry`] returns this when it ran every input.
pub(crate) const EXIT_DONE: u64 = 0;
/// The buffer of results is full ([`Ctx::result_words`]).
pub(crate) const EXIT_FULL: u64 = 1;
/// A head op found a pointer outside the input's heap: the input is not a
/// well-formed term (the interpreter panics on the same input).
pub(crate) const EXIT_BAD_INPUT: u64 = 2;
/// The input matched and Rust must see it now: the low 32 bits of
/// [`Entry`]'s result are this, the high 32 bits the register holding the
/// result.
pub(crate) const EXIT_MATCHED: u64 = 3;
/// The input matched nothing and Rust must see it now.
pub(crate) const EXIT_NO_MATCH: u64 = 4;
/// [`reset`] could not start the input ([`Ctx::error`] says why), or a
/// helper panicked.
pub(crate) const EXIT_SKIPPED: u64 = 5;

/// [`step`] returns this to go on with the next op; otherwise the label to
/// jump to. Labels are below 2^32.
pub(crate) const STEP_NEXT: u64 = 1 << 32;

/// What helpers that make a term return when the function fails: tag 111
/// words are never terms.
pub(crate) const FAILED: u64 = Word::NONE.to_bits();

/// What [`reset`] returns: run the input, or skip it.
pub(crate) const GO_ON: u64 = 0;
/// See [`GO_ON`].
pub(crate) const SKIP: u64 = 1;

/// How many results the code buffers before returning to Rust.
pub(crate) const RESULTS: usize = 64;

/// What the machine code passes to helpers.
///
/// The machine code (or, for the numbers they read, the lean helpers)
/// reads the first fields itself: `spaces`, the words a pointer of each
/// [`Space`] points into, by space number (a pointer's space bits pick its
/// words without a branch): the input's heap ([`INPUT`]), nothing for
/// literals and the unused number, and the run's heap ([`SCRATCH`]), where
/// the code builds terms at fixed offsets from `build` (see
/// [`Frame::reserve_scratch`]; every helper that may build refreshes its
/// address and length, since building may move it; only Rust cleaning up
/// between the code's runs shrinks it); `dirty`, see [`DIRTY_BUILT`];
/// `single`, nonzero for a single run, whose frame was reset to the input
/// before the call (the code need not call [`reset`]); `registers`, the
/// run's register file, which the code reads and writes only around the
/// helpers that use it; `inputs` and `count`, the inputs to run on;
/// `next`, `index`, `pending` and the results (see the module docs). The
/// code keeps the values it needs on every trip round its loop in machine
/// registers, loading them from here at the entry and after each helper
/// call (`looping.rs`); the rest it reads here when it needs them.
#[repr(C)]
pub(crate) struct Ctx<'f> {
    pub(crate) spaces: [Words; 4],
    pub(crate) dirty: u64,
    pub(crate) single: u64,
    pub(crate) registers: *mut u64,
    pub(crate) inputs: *const u64,
    pub(crate) count: u64,
    /// The input the code starts at.
    pub(crate) next: u64,
    /// The input the code returned at.
    pub(crate) index: u64,
    /// How many results are buffered.
    pub(crate) pending: u64,
    /// After a panic: how many of the buffered results came before it.
    pub(crate) keep: u64,
    /// The heap offset of the region the code builds in: the regions of
    /// buffered results are left alone.
    pub(crate) build: u64,
    /// The frame, for the helpers (Rust reaches it by the same pointer).
    pub(crate) frame: *mut (dyn Machine + 'f),
    /// Why [`reset`] could not start an input (boxed: dropping a context
    /// without one is then a null test, on every single run).
    pub(crate) error: Option<Box<EvalError>>,
    pub(crate) panic: Option<Box<dyn Any + Send>>,
    /// The buffered matches' input indexes and, in `result_words`, their
    /// result words: two arrays, so the code addresses an entry of each
    /// by `pending` times 8. Only the first `pending` are written (setting
    /// all 1 KiB would cost a single run more than its code).
    pub(crate) result_inputs: [MaybeUninit<u64>; RESULTS],
    pub(crate) result_words: [MaybeUninit<u64>; RESULTS],
}

/// Words of a heap: where, and how many.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Words {
    pub(crate) at: *mut u64,
    pub(crate) len: u64,
}

impl Words {
    /// No words.
    pub(crate) const NONE: Words = Words { at: std::ptr::null_mut(), len: 0 };
}

/// The input's heap in [`Ctx::spaces`].
pub(crate) const INPUT: usize = Space::Heap as usize;
/// The run's heap in [`Ctx::spaces`].
pub(crate) const SCRATCH: usize = Space::Scratch as usize;

/// [`Ctx::dirty`], a bit set: the caller wants to hear of no-matches at
/// once (programs whose helpers may touch the host; the others' no-matches
/// are never reported).
pub(crate) const DIRTY_EVERY: u64 = 1;
/// [`Ctx::dirty`]: a helper built terms, set flags or touched the host
/// since Rust last cleaned up: the input's outcome returns to Rust at
/// once.
pub(crate) const DIRTY_BUILT: u64 = 2;

impl Ctx<'_> {
    /// The first `n` buffered results: input indexes and result words.
    ///
    /// # Safety
    ///
    /// The code must have written them: `n` is at most `pending` as the
    /// code left it.
    pub(crate) unsafe fn results(&self, n: usize) -> (&[u64], &[u64]) {
        let (inputs, words) = (&self.result_inputs[..n], &self.result_words[..n]);
        // SAFETY: as this function's contract, the `n` entries of each are
        // initialized; `MaybeUninit<T>` has `T`'s layout.
        unsafe {
            (
                &*(std::ptr::from_ref(inputs) as *const [u64]),
                &*(std::ptr::from_ref(words) as *const [u64]),
            )
        }
    }

    /// Reads the heap's address and length again.
    ///
    /// # Safety
    ///
    /// `frame` must point to a live frame that nothing else accesses
    /// during the call.
    pub(crate) unsafe fn refresh(&mut self) {
        // SAFETY: as this function's contract.
        let (at, len) = unsafe { (*self.frame).scratch() };
        self.spaces[SCRATCH] = Words { at: at.cast(), len };
    }
}

/// The offset of the run's heap's address, which the machine code loads.
pub(crate) const CTX_HEAP: i32 =
    (std::mem::offset_of!(Ctx<'static>, spaces) + SCRATCH * size_of::<Words>()) as i32;
/// The offset of [`Ctx::dirty`], which the machine code loads.
pub(crate) const CTX_DIRTY: i32 = std::mem::offset_of!(Ctx<'static>, dirty) as i32;
/// The offset of [`Ctx::registers`], which the machine code loads.
pub(crate) const CTX_REGISTERS: i32 = std::mem::offset_of!(Ctx<'static>, registers) as i32;
/// The offset of [`Ctx::spaces`], which the machine code indexes.
pub(crate) const CTX_SPACES: i32 = std::mem::offset_of!(Ctx<'static>, spaces) as i32;
/// The offset of the input heap's address, which the machine code loads.
pub(crate) const CTX_INPUT: i32 =
    (std::mem::offset_of!(Ctx<'static>, spaces) + INPUT * size_of::<Words>()) as i32;
/// The offset of the input heap's length, which the machine code loads.
pub(crate) const CTX_INPUT_LEN: i32 = CTX_INPUT + 8;
/// The offset of [`Ctx::inputs`], which the machine code loads.
pub(crate) const CTX_INPUTS: i32 = std::mem::offset_of!(Ctx<'static>, inputs) as i32;
/// The offset of [`Ctx::count`], which the machine code loads.
pub(crate) const CTX_COUNT: i32 = std::mem::offset_of!(Ctx<'static>, count) as i32;
/// The offset of [`Ctx::single`], which the machine code loads.
pub(crate) const CTX_SINGLE: i32 = std::mem::offset_of!(Ctx<'static>, single) as i32;
/// The offset of [`Ctx::next`], which the machine code loads.
pub(crate) const CTX_NEXT: i32 = std::mem::offset_of!(Ctx<'static>, next) as i32;
/// The offset of [`Ctx::index`], which the machine code writes.
pub(crate) const CTX_INDEX: i32 = std::mem::offset_of!(Ctx<'static>, index) as i32;
/// The offset of [`Ctx::pending`], which the machine code updates.
pub(crate) const CTX_PENDING: i32 = std::mem::offset_of!(Ctx<'static>, pending) as i32;
/// The offset of [`Ctx::build`], which the machine code updates.
pub(crate) const CTX_BUILD: i32 = std::mem::offset_of!(Ctx<'static>, build) as i32;
/// The offset of [`Ctx::result_inputs`], which the machine code writes.
pub(crate) const CTX_RESULT_INPUTS: i32 = std::mem::offset_of!(Ctx<'static>, result_inputs) as i32;
/// The offset of [`Ctx::result_words`], which the machine code writes.
pub(crate) const CTX_RESULT_WORDS: i32 = std::mem::offset_of!(Ctx<'static>, result_words) as i32;

/// A frame, with its lifetimes erased for the trip through machine code:
/// the [`Frame`] methods the helpers call.
pub(crate) trait Machine {
    fn step(&mut self, pc: usize) -> Step;
    fn call(&mut self, bif: Bif, args: [Word; 3]) -> Option<Word>;
    fn compare(&self, op: Cmp, x: Word, y: Word) -> bool;
    fn type_test(&self, test: Bif, w: Word) -> bool;
    fn exact_eq(&self, a: Word, b: Word) -> bool;
    fn map_value(&self, map: Word, key: Word) -> Option<Word>;
    fn make_tuple(&mut self, elements: Operands) -> Word;
    fn make_list(&mut self, elements: Operands) -> Word;
    fn make_cons(&mut self, head: Word, tail: Word) -> Word;
    /// The address and length of the run's heap.
    fn scratch(&mut self) -> (*mut Word, u64);
    fn reset(&mut self, input: Word) -> Result<(), EvalError>;
}

impl Machine for Frame<'_, '_> {
    fn step(&mut self, pc: usize) -> Step {
        Frame::step(self, pc)
    }
    fn call(&mut self, bif: Bif, args: [Word; 3]) -> Option<Word> {
        Frame::call(self, bif, args)
    }
    fn compare(&self, op: Cmp, x: Word, y: Word) -> bool {
        Frame::compare(self, op, x, y)
    }
    fn type_test(&self, test: Bif, w: Word) -> bool {
        Frame::type_test(self, test, w)
    }
    fn exact_eq(&self, a: Word, b: Word) -> bool {
        Frame::exact_eq(self, a, b)
    }
    fn map_value(&self, map: Word, key: Word) -> Option<Word> {
        Frame::map_value(self, map, key)
    }
    fn make_tuple(&mut self, elements: Operands) -> Word {
        Frame::make_tuple(self, elements)
    }
    fn make_list(&mut self, elements: Operands) -> Word {
        Frame::make_list(self, elements)
    }
    fn make_cons(&mut self, head: Word, tail: Word) -> Word {
        Frame::make_cons(self, head, tail)
    }
    fn scratch(&mut self) -> (*mut Word, u64) {
        (Frame::scratch_address(self), Frame::scratch_len(self) as u64)
    }
    fn reset(&mut self, input: Word) -> Result<(), EvalError> {
        Frame::reset(self, input)
    }
}

/// Runs `f` on the frame behind `ctx`; after a panic (caught here and
/// parked in the `Ctx`, now or by an earlier helper) answers `after_panic`
/// without running anything. If `f` `may_build` terms, refreshes the run's
/// heap in [`Ctx::spaces`] and marks the `Ctx` dirty.
///
/// # Safety
///
/// `ctx` must point to a live [`Ctx`] that nothing else accesses during the
/// call.
#[inline(always)]
unsafe fn guarded(
    ctx: *mut c_void,
    after_panic: u64,
    may_build: bool,
    f: impl FnOnce(&mut dyn Machine) -> u64,
) -> u64 {
    // SAFETY: the entry function passes on the `Ctx` pointer `run` gave it,
    // which points to a `Ctx` on `run`'s stack that lives for the whole
    // call; the fields the machine code writes are not read through this
    // reference while the code runs, and no other reference to it is used
    // while this one lives.
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_>>() };
    if ctx.panic.is_some() {
        return after_panic;
    }
    // SAFETY: `frame` points to the run's frame, which Rust does not touch
    // while the machine code runs.
    let frame = unsafe { &mut *ctx.frame };
    let code = match catch_unwind(AssertUnwindSafe(|| f(frame))) {
        Ok(code) => code,
        Err(payload) => {
            ctx.panic = Some(payload);
            // The code stops at the input's end, and Rust hands over only
            // the results before this one.
            ctx.count = 0;
            ctx.keep = ctx.pending;
            after_panic
        }
    };
    if may_build {
        // SAFETY: as above.
        unsafe { ctx.refresh() };
        ctx.dirty |= DIRTY_BUILT;
    }
    code
}

fn word_or_failed(w: Option<Word>) -> u64 {
    w.map_or(FAILED, Word::to_bits)
}

pub(crate) fn bif_of(index: u64) -> Option<Bif> {
    bif::TABLE.get(index as usize).map(|entry| entry.bif)
}

/// The comparisons by their `repr` index (what the machine code passes).
pub(crate) const CMPS: [Cmp; 8] =
    [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne, Cmp::ExactEq, Cmp::ExactNe];

/// The index of `op` in [`CMPS`].
pub(crate) fn cmp_index(op: Cmp) -> u64 {
    match op {
        Cmp::Lt => 0,
        Cmp::Le => 1,
        Cmp::Gt => 2,
        Cmp::Ge => 3,
        Cmp::Eq => 4,
        Cmp::Ne => 5,
        Cmp::ExactEq => 6,
        Cmp::ExactNe => 7,
    }
}

fn operands(start: u64, len: u64) -> Operands {
    Operands { start: start as u32, len: len as u32 }
}

/// `msc_step(ctx, pc)`: op `pc` by the interpreter. Returns [`STEP_NEXT`]
/// or the label to jump to.
///
/// # Safety
///
/// As [`guarded`]; `pc` must be an op of the frame's program.
pub(crate) unsafe extern "C" fn step(ctx: *mut c_void, pc: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, STEP_NEXT, true, |m| match m.step(pc as usize) {
            Step::Next => STEP_NEXT,
            Step::Jump(label) => label.index() as u64,
            // The machine code ends clauses itself.
            Step::Succeed(_) | Step::NoMatch => {
                panic!("the JIT asked the interpreter to end a clause")
            }
        })
    }
}

/// `msc_call(ctx, bif, a, b, c)`: the function's value, or [`FAILED`].
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn call(ctx: *mut c_void, bif: u64, a: u64, b: u64, c: u64) -> u64 {
    let args = [Word::from_bits(a), Word::from_bits(b), Word::from_bits(c)];
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, FAILED, true, |m| {
            word_or_failed(bif_of(bif).and_then(|bif| m.call(bif, args)))
        })
    }
}

/// `msc_compare(ctx, op, x, y)`: 1 if it holds, else 0.
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn compare(ctx: *mut c_void, op: u64, x: u64, y: u64) -> u64 {
    let op = CMPS[(op as usize) % CMPS.len()];
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, 0, false, |m| u64::from(m.compare(op, Word::from_bits(x), Word::from_bits(y))))
    }
}

/// `msc_type_test(ctx, test, w)`: 1 if it holds, else 0.
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn type_test(ctx: *mut c_void, test: u64, w: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, 0, false, |m| {
            u64::from(bif_of(test).is_some_and(|test| m.type_test(test, Word::from_bits(w))))
        })
    }
}

/// `msc_exact_eq(ctx, a, b)`: 1 if `a =:= b`, else 0.
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn exact_eq(ctx: *mut c_void, a: u64, b: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, 0, false, |m| u64::from(m.exact_eq(Word::from_bits(a), Word::from_bits(b))))
    }
}

/// A map's value under `key` by the frame's lookup, or [`FAILED`]
/// (`msc_map_value`'s way when `lean::map_value` cannot decide).
///
/// # Safety
///
/// As [`guarded`]; `map` must be a map that is part of the input.
pub(crate) unsafe fn map_value(ctx: *mut c_void, map: u64, key: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, FAILED, false, |m| {
            word_or_failed(m.map_value(Word::from_bits(map), Word::from_bits(key)))
        })
    }
}

/// `msc_make_tuple(ctx, start, len)`: a tuple of the operand registers.
///
/// # Safety
///
/// As [`guarded`]; the operands must be the program's.
pub(crate) unsafe extern "C" fn make_tuple(ctx: *mut c_void, start: u64, len: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { guarded(ctx, FAILED, true, |m| m.make_tuple(operands(start, len)).to_bits()) }
}

/// `msc_make_list(ctx, start, len)`: a list of the operand registers.
///
/// # Safety
///
/// As [`guarded`]; the operands must be the program's.
pub(crate) unsafe extern "C" fn make_list(ctx: *mut c_void, start: u64, len: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { guarded(ctx, FAILED, true, |m| m.make_list(operands(start, len)).to_bits()) }
}

/// `msc_make_cons(ctx, head, tail)`: a new list cell.
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn make_cons(ctx: *mut c_void, head: u64, tail: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded(ctx, FAILED, true, |m| {
            m.make_cons(Word::from_bits(head), Word::from_bits(tail)).to_bits()
        })
    }
}

/// `msc_reset(ctx, input)`: starts the run on `input` (trace programs:
/// loads the arguments). [`GO_ON`] to run it; [`SKIP`] if it cannot run
/// ([`Ctx::error`] says why) or after a panic.
///
/// # Safety
///
/// As [`guarded`]; `input` must be a word of the frame's input heap.
pub(crate) unsafe extern "C" fn reset(ctx: *mut c_void, input: u64) -> u64 {
    let mut error = None;
    // SAFETY: as this function's contract. Resetting cleans up, which
    // leaves the words set aside for the code (and the buffered results
    // built there) alone.
    let code = unsafe {
        guarded(ctx, SKIP, false, |m| match m.reset(Word::from_bits(input)) {
            Ok(()) => GO_ON,
            Err(err) => {
                error = Some(err);
                SKIP
            }
        })
    };
    // SAFETY: as in `guarded`.
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_>>() };
    ctx.error = error.map(Box::new);
    // The heap shrank (it did not move: the words set aside stay).
    // SAFETY: as in `guarded`.
    unsafe { ctx.refresh() };
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The comparison table is `cmp_index`'s inverse.
    #[test]
    fn comparisons_round_trip() {
        for (i, op) in CMPS.iter().enumerate() {
            assert_eq!(cmp_index(*op), i as u64);
        }
    }
}
