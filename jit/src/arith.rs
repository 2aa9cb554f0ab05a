//! The lean arithmetic helpers: `+ - * /` on numbers that are not both
//! small integers (or whose result is not one), computing what the
//! interpreter's fast path computes by the same number path
//! ([`number::arith`] on the numbers [`number_of`] reads), and
//! handing everything else to [`abi::call`].
//!
//! As the other lean helpers (`lean.rs`), they cannot panic, touch no
//! frame and no host, and write only the three heap words set aside for
//! their op.

use std::ffi::c_void;

use matchspec::bif::Bif;
use matchspec::engine_internals::number::{self, Encoded, Number, Value};
use matchspec::term::word::layout;
use matchspec::term::{Space, Word};

use crate::abi::{self, Ctx, FAILED, SCRATCH};
use crate::lean::{boxed_number, num_compare, number_of};

/// One of `+ - * /` as a type, so each helper is compiled for its own.
trait Arith {
    /// The function.
    const BIF: Bif;
}

/// `+`.
struct Add;
/// `-`.
struct Sub;
/// `*`.
struct Mul;
/// `/`.
struct Div;

impl Arith for Add {
    const BIF: Bif = Bif::Add;
}
impl Arith for Sub {
    const BIF: Bif = Bif::Sub;
}
impl Arith for Mul {
    const BIF: Bif = Bif::Mul;
}
impl Arith for Div {
    const BIF: Bif = Bif::FloatDiv;
}

/// The two helpers of each of `+ - * /`: `msc_num_OP(ctx, x, y, at)`, the
/// result by [`num_arith`], and `msc_num_OP_compare(ctx, op, x, y, at,
/// other)`, whether it stands in comparison `op` to `other`, by
/// [`num_arith_compare`].
macro_rules! arith_helpers {
    ($($arith:ty: $result:ident, $compare:ident, $symbol:literal;)*) => {$(
        #[doc = concat!("`msc_", stringify!($result), "(ctx, x, y, at)`: `x ", $symbol,
                        " y` by [`num_arith`].")]
        ///
        /// # Safety
        ///
        /// As [`num_arith`].
        pub(crate) unsafe extern "C" fn $result(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
            // SAFETY: as this function's contract.
            unsafe { num_arith::<$arith>(ctx, x, y, at) }
        }

        #[doc = concat!("`msc_", stringify!($compare), "(ctx, op, x, y, at, other)`: `x ",
                        $symbol, " y` compared with `other` by [`num_arith_compare`].")]
        ///
        /// # Safety
        ///
        /// As [`num_arith_compare`].
        pub(crate) unsafe extern "C" fn $compare(
            ctx: *mut c_void,
            op: u64,
            x: u64,
            y: u64,
            at: u64,
            other: u64,
        ) -> u64 {
            // SAFETY: as this function's contract.
            unsafe { num_arith_compare::<$arith>(ctx, op, x, y, at, other) }
        }
    )*};
}

arith_helpers! {
    Add: num_add, num_add_compare, "+";
    Sub: num_sub, num_sub_compare, "-";
    Mul: num_mul, num_mul_compare, "*";
    Div: num_div, num_div_compare, "/";
}

/// Does comparison `op` (an index of [`CMPS`](abi::CMPS)) hold of `x`
/// `A` `y` and `other`? 1 if so; 0 if not, or if `A` fails (a guard's
/// arithmetic and comparison fused, failing to the same place: see
/// `fuse.rs`).
///
/// The usual case, a float or a bignum and a small integer compared with
/// a small integer by one of `< =< > >= == /=`, is decided from the
/// result's value without building it, as [`lean::num_compare`] decides
/// it, from one read of the first and without saving registers.
/// Anything else is built at `at`, as [`num_arith`] builds it, and
/// compared by `msc_num_compare`, out of line.
///
/// # Safety
///
/// As [`num_arith`] and [`abi::compare`].
///
/// [`lean::num_compare`]: crate::lean::num_compare
#[inline(always)]
unsafe fn num_arith_compare<A: Arith>(
    ctx: *mut c_void,
    op: u64,
    x: u64,
    y: u64,
    at: u64,
    other: u64,
) -> u64 {
    if (y | other) & layout::TAG_MASK == layout::TAG_SMALL
        && let Some(&holds) = HOLDS.get(op as usize)
    {
        // SAFETY: as this function's contract.
        if let Some(order) = unsafe { small_order(ctx.cast_const().cast(), A::BIF, x, y, other) } {
            return (u64::from(holds) >> (order + 1)) & 1;
        }
    }
    // SAFETY: as this function's contract.
    unsafe { built_compare::<A>(ctx, op, x, y, at, other) }
}

/// For each comparison but `=:=` and `=/=` (which tell floats from
/// integers), in [`CMPS`](abi::CMPS) order: the orders it holds for, as
/// bits 0 (less), 1 (equal) and 2 (greater).
const HOLDS: [u8; 6] = [0b001, 0b011, 0b100, 0b110, 0b010, 0b101];

/// The order (-1, 0 or 1) of `bif` on `x` and the small integer `y`
/// against the small integer `t`, if [`with_small`] computes the result
/// and the number path decides its order ([`number::order`], as
/// `msc_num_compare` would on the built result).
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn small_order(ctx: *const Ctx<'_>, bif: Bif, x: u64, y: u64, t: u64) -> Option<i64> {
    // SAFETY: as this function's contract.
    let result = unsafe { with_small(ctx, bif, x, y)? };
    let order = number::order(result.number(), Number::Small((t as i64) >> layout::TAG_BITS))?;
    Some(order as i64)
}

/// [`num_arith_compare`] by building the result: 0 if `A` fails, else
/// `msc_num_compare` of it and `other`.
///
/// # Safety
///
/// As [`num_arith_compare`].
#[inline(never)]
unsafe fn built_compare<A: Arith>(
    ctx: *mut c_void,
    op: u64,
    x: u64,
    y: u64,
    at: u64,
    other: u64,
) -> u64 {
    // SAFETY: as this function's contract.
    let word = unsafe { num_arith::<A>(ctx, x, y, at) };
    if word == FAILED {
        return 0;
    }
    // SAFETY: as this function's contract.
    unsafe { num_compare(ctx, op, word, other) }
}

/// [`abi::call`] of `A` (`+`, `-`, `*` or `/`), computing itself what
/// the interpreter's fast path computes for numbers in the input or the
/// run's heap ([`number::arith`]): a float if either is a float (or for
/// `/`), if finite; else in 128 bits, if the operands fit. A float or
/// bignum result is built in the three heap words at offset `at` (set
/// aside for the op).
///
/// The usual case, a float or a bignum and then a small integer (the
/// translator puts a constant operand second where it can), is computed
/// from one read of the first without saving registers; the rest is out
/// of line, with the same arguments.
///
/// # Safety
///
/// As [`lean::space`](crate::lean) and [`abi::call`]; `at` and the two
/// words after it must be heap words set aside for the code (below the
/// run's heap length in `Ctx::spaces`).
#[inline(always)]
unsafe fn num_arith<A: Arith>(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    if y & layout::TAG_MASK == layout::TAG_SMALL {
        // SAFETY: as this function's contract.
        if let Some(value) = unsafe { with_small(ctx.cast(), A::BIF, x, y) } {
            // SAFETY: as this function's contract.
            return unsafe { place(ctx.cast(), at, value) };
        }
    }
    // SAFETY: as this function's contract.
    unsafe { general::<A>(ctx, x, y, at) }
}

/// `bif` on `x` and the small integer `y`, as [`num_arith`] computes it;
/// `None` if `x` is not a float or bignum that [`boxed_number`] reads or
/// the number path does not compute the result, for [`general`] to
/// decide.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn with_small(ctx: *const Ctx<'_>, bif: Bif, x: u64, y: u64) -> Option<Value> {
    // SAFETY: as this function's contract.
    let x = unsafe { boxed_number(ctx, x)? };
    number::arith(bif, x, Number::Small((y as i64) >> layout::TAG_BITS))
}

/// The word of `value`: a small integer's, or that of the float or bignum
/// it writes at `at` in the run's heap.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn place(ctx: *mut Ctx<'_>, at: u64, value: Value) -> u64 {
    match value.encode() {
        Encoded::Small(word) => word.to_bits(),
        // SAFETY: as this function's contract.
        Encoded::Boxed(words) => unsafe { build(ctx, at, words) },
    }
}

/// Writes `words` at `at` in the run's heap; the word of the term there.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn build(ctx: *mut Ctx<'_>, at: u64, words: [Word; 3]) -> u64 {
    // SAFETY: as this function's contract: the three words at `at` are set
    // aside for this op, inside the run's heap (a `Word` is a `u64`).
    unsafe {
        let heap = (*ctx).spaces[SCRATCH].at.add(at as usize);
        std::ptr::copy_nonoverlapping(words.as_ptr().cast::<u64>(), heap, 3);
    }
    scratch_boxed(at)
}

/// [`num_arith`] for any operands.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(never)]
unsafe fn general<A: Arith>(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    let numbers = {
        let ctx = ctx.cast_const().cast();
        // SAFETY: as this function's contract.
        unsafe { number_of(ctx, x).zip(number_of(ctx, y)) }
    };
    match numbers.and_then(|(x, y)| number::arith(A::BIF, x, y)) {
        // SAFETY: as this function's contract.
        Some(value) => unsafe { place(ctx.cast(), at, value) },
        // SAFETY: as this function's contract.
        None => unsafe { call_slow(ctx, A::BIF, x, y) },
    }
}

/// [`abi::call`] of `bif` on `x` and `y`, out of the hot helpers' way.
///
/// # Safety
///
/// As [`abi::call`].
#[inline(never)]
#[cold]
unsafe fn call_slow(ctx: *mut c_void, bif: Bif, x: u64, y: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { abi::call(ctx, bif as u8 as u64, x, y, Word::NIL.to_bits()) }
}

/// The word of a boxed term at offset `at` of the run's heap.
fn scratch_boxed(at: u64) -> u64 {
    (at << layout::OFFSET_SHIFT)
        | ((Space::Scratch as u64) << layout::SPACE_SHIFT)
        | layout::TAG_BOXED
}
