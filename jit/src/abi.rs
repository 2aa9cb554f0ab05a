//! The contract between the machine code and Rust: the entry function's
//! signature, the codes it returns, and the helpers it calls.
//!
//! The compiled function runs the program on a whole list of inputs:
//!
//! ```text
//! entry(ctx: *mut Ctx, registers: *mut u64, heap: *const u64, heap_len: u64,
//!       inputs: *const u64, count: u64) -> u64
//! ```
//!
//! For each input (a word of the input heap `heap`) it loads the input
//! into register 0 (trace programs that need the arguments in Rust ask
//! [`reset`] to load them; the others read the input list themselves and
//! call it only for the error when the input is not a list), runs the
//! clauses, and hands a match to [`matched`] and, when asked to, a
//! no-match to [`no_match`], which pass them on to Rust and clean up for
//! the next input. A single run (see [`Ctx`]) instead returns its match at
//! once ([`EXIT_MATCHED`]). The code keeps registers in machine registers,
//! storing them to the run's register file for the helpers that read them
//! there; it reads head cells from the input heap (every such read is
//! bounds-checked against `heap_len`), builds terms in heap words set
//! aside for it, and
//! calls a helper of [`HelperId`] for what it does not do itself. Each
//! helper is a thin shim over a method of
//! [`Frame`](matchspec::interp::Frame), the interpreter's own definition
//! of what the op computes, so the two engines share every rule beyond a
//! few machine instructions.
//!
//! A helper never unwinds: a panic is caught and parked in [`Ctx::panic`],
//! and from then on every helper does nothing and answers harmlessly (go
//! on, "no", "failed", stop). The code only jumps forward within an input
//! and stops at the next one, so it soon returns; Rust then finds the
//! panic and resumes it. Nothing the spec does after the panic reaches the
//! host.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use matchspec::bif::{self, Bif};
use matchspec::interp::{Frame, Step};
use matchspec::ir::{Cmp, Operands, Reg};
use matchspec::term::Word;
use matchspec::{EvalError, Outcome};

/// The compiled function (see the module docs).
pub(crate) type Entry =
    unsafe extern "C" fn(*mut c_void, *mut u64, *const u64, u64, *const u64, u64) -> u64;

/// [`Entry`] returns this when it ran every input.
pub(crate) const EXIT_DONE: u64 = 0;
/// A helper asked to stop (a single run ended, or a panic).
pub(crate) const EXIT_STOPPED: u64 = 1;
/// A head op found a pointer outside the input's heap: the input is not a
/// well-formed term (the interpreter panics on the same input).
pub(crate) const EXIT_BAD_INPUT: u64 = 2;
/// A single run matched: the low 32 bits of [`Entry`]'s result are this,
/// the high 32 bits the register holding the result.
pub(crate) const EXIT_MATCHED: u64 = 3;

/// [`step`] returns this to go on with the next op; otherwise the label to
/// jump to. Labels are below 2^32.
pub(crate) const STEP_NEXT: u64 = 1 << 32;

/// What helpers that make a term return when the function fails: tag 111
/// words are never terms.
pub(crate) const FAILED: u64 = Word::NONE.to_bits();

/// What [`matched`], [`no_match`] and [`reset`] return: go on with the
/// next input, skip this one (reset only), or stop.
pub(crate) const GO_ON: u64 = 0;
/// See [`GO_ON`].
pub(crate) const SKIP: u64 = 1;
/// See [`GO_ON`].
pub(crate) const STOP: u64 = 2;

/// Where outcomes go: a batch's callback, or (for a single run) nowhere,
/// the first outcome ending the run.
pub(crate) type Deliver<'d> = Option<&'d mut dyn FnMut(usize, Result<Outcome<'_>, EvalError>)>;

/// What the machine code passes to helpers.
///
/// The machine code reads the first fields itself: `heap` and
/// `heap_len`, the current address and length of the run's heap, where it
/// builds terms at fixed offsets (see [`Frame::reserve_scratch`]) and
/// reads numbers (every helper that may build refreshes both, since
/// building may move the heap; only cleaning up, in the helpers that end
/// an input, shrinks it); `dirty`, nonzero when the end of
/// an input that matched nothing must be reported ([`no_match`]): the
/// caller wants every outcome ([`DIRTY_EVERY`]), or a helper built terms
/// or set flags, to clean up ([`DIRTY_BUILT`]); and `single`, nonzero for a single run: its frame was reset to
/// the input before the call (the code need not call [`reset`]), and a
/// match returns [`EXIT_MATCHED`] at once instead of calling [`matched`].
#[repr(C)]
pub(crate) struct Ctx<'f, 'd> {
    pub(crate) heap: *mut Word,
    pub(crate) heap_len: u64,
    pub(crate) dirty: u64,
    pub(crate) single: u64,
    pub(crate) frame: &'f mut dyn Machine,
    pub(crate) deliver: Deliver<'d>,
    /// Report inputs that match nothing too.
    pub(crate) every: bool,
    /// A single run's result: the register holding it, if a clause matched.
    pub(crate) result: Option<Reg>,
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

/// [`Ctx::dirty`]: the caller wants to hear of no-matches too.
pub(crate) const DIRTY_EVERY: u64 = 1;
/// [`Ctx::dirty`]: a helper built terms (or set flags) since the last clean.
pub(crate) const DIRTY_BUILT: u64 = 2;

impl Ctx<'_, '_> {
    /// Cleans up after an input, if a helper left anything to clean.
    fn clean(&mut self) {
        if self.dirty & DIRTY_BUILT != 0 {
            self.frame.clean();
        }
        self.dirty = if self.every { DIRTY_EVERY } else { 0 };
    }
}

/// The offset of [`Ctx::heap`], which the machine code loads.
pub(crate) const CTX_HEAP: i32 = std::mem::offset_of!(Ctx<'static, 'static>, heap) as i32;
/// The offset of [`Ctx::heap_len`], which the machine code loads.
pub(crate) const CTX_HEAP_LEN: i32 = std::mem::offset_of!(Ctx<'static, 'static>, heap_len) as i32;
/// The offset of [`Ctx::dirty`], which the machine code loads.
pub(crate) const CTX_DIRTY: i32 = std::mem::offset_of!(Ctx<'static, 'static>, dirty) as i32;
/// The offset of [`Ctx::single`], which the machine code loads.
pub(crate) const CTX_SINGLE: i32 = std::mem::offset_of!(Ctx<'static, 'static>, single) as i32;

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
    fn scratch_address(&mut self) -> *mut Word;
    fn scratch_len(&self) -> usize;
    fn outcome(&self, result: Reg) -> Outcome<'_>;
    fn clean(&mut self);
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
    fn scratch_address(&mut self) -> *mut Word {
        Frame::scratch_address(self)
    }
    fn scratch_len(&self) -> usize {
        Frame::scratch_len(self)
    }
    fn outcome(&self, result: Reg) -> Outcome<'_> {
        Frame::outcome(self, result)
    }
    fn clean(&mut self) {
        Frame::clean(self)
    }
    fn reset(&mut self, input: Word) -> Result<(), EvalError> {
        Frame::reset(self, input)
    }
}

/// A helper the machine code may call: its symbol, address and number of
/// `u64` parameters after `ctx` (every helper returns one `u64`).
pub(crate) struct Helper {
    pub(crate) name: &'static str,
    pub(crate) address: *const u8,
    pub(crate) params: usize,
}

/// Which helper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HelperId {
    Step,
    Call,
    Compare,
    TypeTest,
    ExactEq,
    MapValue,
    MakeTuple,
    MakeList,
    MakeCons,
    Matched,
    NoMatch,
    Reset,
}

impl HelperId {
    /// Every helper, in `HelperId` order.
    pub(crate) const ALL: [HelperId; 12] = [
        HelperId::Step,
        HelperId::Call,
        HelperId::Compare,
        HelperId::TypeTest,
        HelperId::ExactEq,
        HelperId::MapValue,
        HelperId::MakeTuple,
        HelperId::MakeList,
        HelperId::MakeCons,
        HelperId::Matched,
        HelperId::NoMatch,
        HelperId::Reset,
    ];

    /// May the helper build terms (and so move the heap)?
    pub(crate) fn may_build(self) -> bool {
        match self {
            HelperId::Step
            | HelperId::Call
            | HelperId::MakeTuple
            | HelperId::MakeList
            | HelperId::MakeCons
            | HelperId::Matched
            | HelperId::NoMatch
            | HelperId::Reset => true,
            HelperId::Compare | HelperId::TypeTest | HelperId::ExactEq | HelperId::MapValue => {
                false
            }
        }
    }

    /// The helper's row.
    pub(crate) fn helper(self) -> Helper {
        let (name, address, params): (&'static str, *const u8, usize) = match self {
            HelperId::Step => ("msc_step", step as *const u8, 1),
            HelperId::Call => ("msc_call", call as *const u8, 4),
            HelperId::Compare => ("msc_compare", compare as *const u8, 3),
            HelperId::TypeTest => ("msc_type_test", type_test as *const u8, 2),
            HelperId::ExactEq => ("msc_exact_eq", exact_eq as *const u8, 2),
            HelperId::MapValue => ("msc_map_value", map_value as *const u8, 2),
            HelperId::MakeTuple => ("msc_make_tuple", make_tuple as *const u8, 2),
            HelperId::MakeList => ("msc_make_list", make_list as *const u8, 2),
            HelperId::MakeCons => ("msc_make_cons", make_cons as *const u8, 2),
            HelperId::Matched => ("msc_matched", matched as *const u8, 2),
            HelperId::NoMatch => ("msc_no_match", no_match as *const u8, 1),
            HelperId::Reset => ("msc_reset", reset as *const u8, 2),
        };
        Helper { name, address, params }
    }
}

/// Runs `f` on the frame behind `ctx`; after a panic (caught here and
/// parked in the `Ctx`, now or by an earlier helper) answers `after_panic`
/// without running anything. If `f` `may_build` terms, refreshes
/// [`Ctx::heap`].
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
    // call; the machine code does not touch it, and no other reference to
    // it is used while this one lives.
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_, '_>>() };
    if ctx.panic.is_some() {
        return after_panic;
    }
    let frame = &mut *ctx.frame;
    let code = match catch_unwind(AssertUnwindSafe(|| f(frame))) {
        Ok(code) => code,
        Err(payload) => {
            ctx.panic = Some(payload);
            after_panic
        }
    };
    if may_build {
        ctx.heap = ctx.frame.scratch_address();
        ctx.heap_len = ctx.frame.scratch_len() as u64;
        ctx.dirty |= DIRTY_BUILT;
    }
    code
}

fn word_or_failed(w: Option<Word>) -> u64 {
    w.map_or(FAILED, Word::to_bits)
}

fn bif_of(index: u64) -> Option<Bif> {
    bif::TABLE.get(index as usize).map(|entry| entry.bif)
}

/// The comparisons by their `repr` index (what the machine code passes).
const CMPS: [Cmp; 8] =
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

/// `msc_map_value(ctx, map, key)`: the value, or [`FAILED`].
///
/// # Safety
///
/// As [`guarded`]; `map` must be a map that is part of the input.
pub(crate) unsafe extern "C" fn map_value(ctx: *mut c_void, map: u64, key: u64) -> u64 {
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

/// Runs `f` on the whole `Ctx` (for the helpers that end an input, which
/// hand outcomes over), catching a panic as [`guarded`] does; after a
/// panic answers [`STOP`].
///
/// # Safety
///
/// As [`guarded`].
#[inline(always)]
unsafe fn guarded_ctx(ctx: *mut c_void, f: impl FnOnce(&mut Ctx<'_, '_>) -> u64) -> u64 {
    // SAFETY: as this function's contract (see `guarded`).
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_, '_>>() };
    if ctx.panic.is_some() {
        return STOP;
    }
    let code = match catch_unwind(AssertUnwindSafe(|| f(&mut *ctx))) {
        Ok(code) => code,
        Err(payload) => {
            ctx.panic = Some(payload);
            STOP
        }
    };
    // Cleaning up and resetting move the heap back to its set-aside words.
    ctx.heap = ctx.frame.scratch_address();
    ctx.heap_len = ctx.frame.scratch_len() as u64;
    code
}

/// `msc_matched(ctx, index, register)`: input `index` matched, its result in
/// `register`. Hands the outcome over and cleans up ([`GO_ON`]), or, for a
/// single run, records it and stops.
///
/// # Safety
///
/// As [`guarded`]; `register` must be a register of the frame's program.
pub(crate) unsafe extern "C" fn matched(ctx: *mut c_void, index: u64, register: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded_ctx(ctx, |ctx| {
            let result = Reg(register as u32);
            let Some(deliver) = ctx.deliver.as_mut() else {
                ctx.result = Some(result);
                return STOP;
            };
            deliver(index as usize, Ok(ctx.frame.outcome(result)));
            ctx.clean();
            GO_ON
        })
    }
}

/// `msc_no_match(ctx, index)`: input `index` matched no clause. Hands that
/// over if asked to and cleans up ([`GO_ON`]), or ends a single run.
///
/// # Safety
///
/// As [`guarded`].
pub(crate) unsafe extern "C" fn no_match(ctx: *mut c_void, index: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded_ctx(ctx, |ctx| {
            let Some(deliver) = ctx.deliver.as_mut() else {
                return STOP;
            };
            if ctx.every {
                deliver(index as usize, Ok(Outcome::NoMatch));
            }
            ctx.clean();
            GO_ON
        })
    }
}

/// `msc_reset(ctx, index, input)`: starts the run on input `index` (trace
/// programs: loads the arguments). [`GO_ON`] to run it; [`SKIP`] if it
/// cannot run (the error is handed over); [`STOP`] to stop.
///
/// # Safety
///
/// As [`guarded`]; `input` must be a word of the frame's input heap.
pub(crate) unsafe extern "C" fn reset(ctx: *mut c_void, index: u64, input: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe {
        guarded_ctx(ctx, |ctx| match ctx.frame.reset(Word::from_bits(input)) {
            Ok(()) => GO_ON,
            Err(err) => match ctx.deliver.as_mut() {
                Some(deliver) => {
                    deliver(index as usize, Err(err));
                    SKIP
                }
                // A single run's input was loaded before the run.
                None => STOP,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every helper is in the table once, in `ALL` order.
    #[test]
    fn helpers_are_listed_in_order() {
        for (i, id) in HelperId::ALL.iter().enumerate() {
            assert_eq!(*id as usize, i);
        }
        let names: std::collections::HashSet<_> =
            HelperId::ALL.iter().map(|id| id.helper().name).collect();
        assert_eq!(names.len(), HelperId::ALL.len());
    }

    /// The comparison table is `cmp_index`'s inverse.
    #[test]
    fn comparisons_round_trip() {
        for (i, op) in CMPS.iter().enumerate() {
            assert_eq!(cmp_index(*op), i as u64);
        }
    }
}
