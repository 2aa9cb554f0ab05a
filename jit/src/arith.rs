//! The lean arithmetic helpers: `+ - * /` on numbers that are not both
//! small integers (or whose result is not one), computing what the
//! interpreter's fast path computes (`bif::wide_arith`,
//! `bif::float_arith`) from one read of each operand's header, and
//! handing everything else to [`abi::call`].
//!
//! As the other lean helpers (`lean.rs`), they cannot panic, touch no
//! frame and no host, and write only the three heap words set aside for
//! their op.

use std::ffi::c_void;

use matchspec::bif::Bif;
use matchspec::engine_internals::{float_arith, wide_arith};
use matchspec::term::word::layout;
use matchspec::term::{Space, Word};

use crate::abi::{self, Ctx, FAILED, SCRATCH};
use crate::lean::{Key, boxed, key_cmp, num_compare, number_cells};

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
/// it, from one read of the first's header and without saving registers.
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

/// The order (-1, 0 or 1) of `bif` on the float or bignum `x` and the
/// small integer `y` against the small integer `t`, if [`with_small`]
/// computes the result and their keys decide its order
/// ([`lean::key_cmp`](crate::lean::key_cmp), as `msc_num_compare` would
/// on the built result).
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn small_order(ctx: *const Ctx<'_>, bif: Bif, x: u64, y: u64, t: u64) -> Option<i64> {
    // SAFETY: as this function's contract.
    let result = match unsafe { with_small(ctx, bif, x, y)? } {
        Ok([header, bits, _]) if header == layout::FLOAT_HEADER => Key::Float(f64::from_bits(bits)),
        Ok([header, ..]) => Key::Big(header & layout::HEADER_KIND_MASK == layout::HEADER_NEG_BIG),
        Err(word) => Key::Small((word as i64) >> layout::TAG_BITS),
    };
    let order = key_cmp(result, Key::Small((t as i64) >> layout::TAG_BITS))?;
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
/// run's heap: a float if either is a float (or for `/`), if finite; else
/// in 128 bits, if the operands fit. A float or bignum result is built in
/// the three heap words at offset `at` (set aside for the op).
///
/// The usual case, a float or a bignum and then a small integer (the
/// translator puts a constant operand second where it can), is computed
/// from one read of the first's header without saving registers; the rest
/// is out of line, with the same arguments.
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
        match unsafe { with_small(ctx.cast(), A::BIF, x, y) } {
            // SAFETY: as this function's contract.
            Some(Ok(words)) => return unsafe { build(ctx.cast(), at, words) },
            Some(Err(word)) => return word,
            None => {}
        }
    }
    // SAFETY: as this function's contract.
    unsafe { general::<A>(ctx, x, y, at) }
}

/// `bif` on the float or bignum `x` and the small integer `y`, as
/// [`num_arith`] computes it: the words of a float or bignum (`Ok`) or a
/// small integer's word (`Err`); `None` if `x` is not one with two words
/// after its header, or the result is not a finite float or an integer of
/// at most 127 bits, for [`general`] to decide.
///
/// A bignum is worked on as it is stored, a sign and a magnitude (of one
/// or two words): a small integer is smaller than any bignum, so a sum or
/// difference keeps the bignum's sign, and its magnitude is the bignum's
/// plus or minus the small integer.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn with_small(
    ctx: *const Ctx<'_>,
    bif: Bif,
    x: u64,
    y: u64,
) -> Option<Result<[u64; 3], u64>> {
    const ONE: u64 = 1 << layout::HEADER_KIND_BITS;
    // SAFETY: as this function's contract; `boxed` checked that the header
    // and the two words after it are inside.
    let (header, cells) = unsafe { boxed(ctx, x, 2)? };
    // SAFETY: as above.
    let lo = unsafe { *cells.add(1) };
    let s = (y as i64) >> layout::TAG_BITS;
    let words = if header == layout::FLOAT_HEADER {
        let r = float_arith(bif, f64::from_bits(lo), s as f64)?;
        Ok([layout::FLOAT_HEADER, r.to_bits(), 0])
    } else {
        // A bignum of one or two words, positive or negative, less the
        // first: 0, 1, `ONE` or `ONE + 1`.
        let k = header.wrapping_sub(ONE | layout::HEADER_POS_BIG);
        if bif == Bif::FloatDiv || k & !(ONE | 1) != 0 {
            return None;
        }
        let (two, kind) = (k >> layout::HEADER_KIND_BITS, header & layout::HEADER_KIND_MASK);
        // SAFETY: as above; for one word, the word read is masked off.
        let hi = unsafe { *cells.add(1 + two as usize) } & two.wrapping_neg();
        let magnitude = u128::from(hi) << 64 | u128::from(lo);
        let (kind, magnitude) = match bif {
            Bif::Mul => {
                // A negative factor swaps the signs' kinds.
                let flip = if s < 0 { layout::HEADER_POS_BIG ^ layout::HEADER_NEG_BIG } else { 0 };
                (kind ^ flip, magnitude_product(magnitude, s.unsigned_abs())?)
            }
            _ => {
                // What the small integer adds to the magnitude (at most
                // 2^60 either way): the magnitude, at least 2^60, stays
                // positive.
                let toward = if bif == Bif::Sub { -s } else { s };
                let toward = if k & 1 != 0 { -toward } else { toward };
                let sum = magnitude.wrapping_add(toward as i128 as u128);
                // Below 2^127 before and after, as the interpreter's fast
                // path (so nothing wraps around): the rest is `general`'s.
                if (magnitude | sum) >> 127 != 0 {
                    return None;
                }
                (kind, sum)
            }
        };
        big_words(kind, magnitude)
    };
    Some(words)
}

/// `a * b`, if below 2^127 (as the interpreter's fast path): two 64-bit
/// products.
#[inline(always)]
fn magnitude_product(a: u128, b: u64) -> Option<u128> {
    let b = u128::from(b);
    let low = u128::from(a as u64) * b;
    // No overflow: at most (2^64 - 1)^2 + 2^64 - 1.
    let top = (a >> 64) * b + (low >> 64);
    if top >> 63 != 0 {
        return None;
    }
    Some(top << 64 | u128::from(low as u64))
}

/// The integer of `magnitude` with the sign of the bignum header kind
/// `kind`: the words of a bignum (`Ok`), or its small word (`Err`).
#[inline(always)]
fn big_words(kind: u64, magnitude: u128) -> Result<[u64; 3], u64> {
    let (lo, hi) = (magnitude as u64, (magnitude >> 64) as u64);
    let negative = kind == layout::HEADER_NEG_BIG;
    if hi == 0 {
        // Up to `MAX_SMALL`, and one more below zero.
        if lo <= layout::MAX_SMALL as u64 + u64::from(negative) {
            let value = if negative { (lo as i64).wrapping_neg() } else { lo as i64 };
            return Err((value << layout::TAG_BITS) as u64);
        }
        return Ok([1 << layout::HEADER_KIND_BITS | kind, lo, 0]);
    }
    // As `Heap::int128` builds it: one word of magnitude, or two.
    Ok([2 << layout::HEADER_KIND_BITS | kind, lo, hi])
}

/// Writes `words` at `at` in the run's heap; the word of the term there.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn build(ctx: *mut Ctx<'_>, at: u64, words: [u64; 3]) -> u64 {
    // SAFETY: as this function's contract: the three words at `at` are set
    // aside for this op, inside the run's heap.
    unsafe {
        let heap = (*ctx).spaces[SCRATCH].at.add(at as usize);
        std::ptr::copy_nonoverlapping(words.as_ptr(), heap, 3);
    }
    scratch_boxed(at)
}

/// [`num_arith`] for any operands: decoded as integers, else as floats.
///
/// # Safety
///
/// As [`num_arith`].
#[inline(never)]
unsafe fn general<A: Arith>(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    match unsafe { general_words(ctx.cast(), A::BIF, x, y) } {
        // SAFETY: as this function's contract.
        Ok(words) => unsafe { build(ctx.cast(), at, words) },
        // SAFETY: as this function's contract.
        Err(FAILED) => unsafe { call_slow(ctx, A::BIF, x, y) },
        Err(word) => word,
    }
}

/// `bif` on any `x` and `y`: the words of a float or bignum result
/// (`Ok`), or a word to return (`Err`: a small integer, or [`FAILED`]).
///
/// # Safety
///
/// As [`int_of`].
#[inline(always)]
unsafe fn general_words(ctx: *const Ctx<'_>, bif: Bif, x: u64, y: u64) -> Result<[u64; 3], u64> {
    // As the interpreter's fast path: integers of up to 127 bits unless
    // either is a float (or for `/`); floats then, converting small
    // integers (bignums never mix with floats here).
    let ints = match bif {
        Bif::FloatDiv => None,
        // SAFETY: as this function's contract.
        _ => unsafe { int_of(ctx, x).and_then(|p| Some((p, int_of(ctx, y)?))) },
    };
    if let Some((p, q)) = ints {
        let r = wide_result(bif, p, q).ok_or(FAILED)?;
        let kind = if r < 0 { layout::HEADER_NEG_BIG } else { layout::HEADER_POS_BIG };
        return big_words(kind, r.unsigned_abs());
    }
    // SAFETY: as this function's contract.
    let (Some(a), Some(b)) = (unsafe { float_of(ctx, x) }, unsafe { float_of(ctx, y) }) else {
        return Err(FAILED);
    };
    float_words(bif, a, b)
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

/// `w` as an integer of at most 127 bits: a small integer, or a bignum of
/// one or two words; `None` for anything else.
///
/// # Safety
///
/// As [`lean::space`](crate::lean): `ctx` points to a live [`Ctx`] whose
/// spaces describe readable words.
#[inline(always)]
unsafe fn int_of(ctx: *const Ctx<'_>, w: u64) -> Option<i128> {
    if w & layout::TAG_MASK == layout::TAG_SMALL {
        return Some(i128::from((w as i64) >> layout::TAG_BITS));
    }
    // SAFETY: as this function's contract; `number_cells` checked the
    // header and the word after it are inside, and `n` words are.
    unsafe {
        let (cells, n) = number_cells(ctx, w)?;
        wide_of(cells, n)
    }
}

/// The bignum of one or two words at `cells` (`n` words inside), as an
/// integer; `None` if it is not one.
///
/// # Safety
///
/// `cells` points to `n` readable words, `n` at least 2.
#[inline(always)]
unsafe fn wide_of(cells: *const u64, n: u64) -> Option<i128> {
    const ONE: u64 = 1 << layout::HEADER_KIND_BITS;
    const TWO: u64 = 2 << layout::HEADER_KIND_BITS;
    // SAFETY: as this function's contract; the third word is read only if
    // it is inside.
    unsafe {
        let lo = i128::from(*cells.add(1));
        let negative = match *cells {
            h if h == ONE | layout::HEADER_POS_BIG => return Some(lo),
            h if h == ONE | layout::HEADER_NEG_BIG => return Some(-lo),
            h if h == TWO | layout::HEADER_POS_BIG => false,
            h if h == TWO | layout::HEADER_NEG_BIG => true,
            _ => return None,
        };
        if n < 3 {
            return None;
        }
        let hi = *cells.add(2);
        // 2^127 and beyond do not fit.
        if hi >> 63 != 0 {
            return None;
        }
        let m = i128::from(hi) << 64 | lo;
        Some(if negative { -m } else { m })
    }
}

/// `w` as a float: a float, or a small integer converted (as the
/// interpreter's fast path converts it); `None` for anything else.
///
/// # Safety
///
/// As [`int_of`].
#[inline(always)]
unsafe fn float_of(ctx: *const Ctx<'_>, w: u64) -> Option<f64> {
    if w & layout::TAG_MASK == layout::TAG_SMALL {
        return Some(((w as i64) >> layout::TAG_BITS) as f64);
    }
    // SAFETY: as this function's contract; `number_cells` checked the
    // header and the word after it are inside.
    unsafe {
        let (cells, _) = number_cells(ctx, w)?;
        (*cells == layout::FLOAT_HEADER).then(|| f64::from_bits(*cells.add(1)))
    }
}

/// The integer result of `bif` on `p` and `q`, if it fits 128 bits.
#[inline(always)]
fn wide_result(bif: Bif, p: i128, q: i128) -> Option<i128> {
    match bif {
        // Operands of 64 bits make a product of at most 127: no overflow
        // check; nor with at most 127 significant bits together.
        Bif::Mul => match (fits_64(p), fits_64(q)) {
            (true, true) => Some(i128::from(p as i64) * i128::from(q as i64)),
            (false, true) => wide_product(p, q as i64),
            (true, false) => wide_product(q, p as i64),
            (false, false) => p.checked_mul(q),
        },
        _ => wide_arith(bif, p, q),
    }
}

/// Does `x` fit in 64 bits?
#[inline(always)]
fn fits_64(x: i128) -> bool {
    i128::from(x as i64) == x
}

/// `p * q`, if it fits in 128 bits: the magnitudes' product in two
/// 64-bit halves.
#[inline(always)]
fn wide_product(p: i128, q: i64) -> Option<i128> {
    let (a, b) = (p.unsigned_abs(), u128::from(q.unsigned_abs()));
    // `a` below 2^128 and `b` at most 2^63: each partial product fits.
    let low = (a as u64 as u128) * b;
    let high = (a >> 64) * b;
    if high >> 64 != 0 {
        return None;
    }
    let magnitude = (high << 64).checked_add(low)?;
    if (p < 0) != (q < 0) {
        // Down to -2^127.
        0i128.checked_sub_unsigned(magnitude)
    } else {
        i128::try_from(magnitude).ok()
    }
}

/// The words of the float `bif` makes of `a` and `b`, if finite.
#[inline(always)]
fn float_words(bif: Bif, a: f64, b: f64) -> Result<[u64; 3], u64> {
    let r = float_arith(bif, a, b).ok_or(FAILED)?;
    Ok([layout::FLOAT_HEADER, r.to_bits(), 0])
}

/// The word of a boxed term at offset `at` of the run's heap.
fn scratch_boxed(at: u64) -> u64 {
    (at << layout::OFFSET_SHIFT)
        | ((Space::Scratch as u64) << layout::SPACE_SHIFT)
        | layout::TAG_BOXED
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Products of magnitudes are `checked_mul`'s, below 2^127.
    #[test]
    fn magnitude_products_are_checked_products() {
        let mut wide = vec![0u128, 1, u128::MAX, u128::MAX >> 1, 1 << 64, (1 << 64) - 1];
        let mut narrow = vec![0u64, 1, 2, 3, u64::MAX, 1 << 60, (1 << 60) + 1];
        for k in 0..128 {
            wide.extend([1u128 << k, (1u128 << k) - 1, (1u128 << k) + 1]);
        }
        for k in 0..64 {
            narrow.extend([1u64 << k, (1u64 << k) - 1]);
        }
        for &a in &wide {
            for &b in &narrow {
                let product = a.checked_mul(u128::from(b)).filter(|p| p >> 127 == 0);
                assert_eq!(magnitude_product(a, b), product, "{a} * {b}");
            }
        }
    }

    /// Products of a wide and a 64-bit integer are `checked_mul`'s.
    #[test]
    fn wide_products_are_checked_products() {
        let mut wide = vec![i128::MAX, i128::MIN, i128::MIN + 1, 1 << 64, -(1 << 64), 1 << 126];
        let mut narrow = vec![0i64, 1, -1, 2, -2, 3, i64::MAX, i64::MIN, 1 << 32, -(1 << 62)];
        for k in 63..127 {
            wide.extend([1i128 << k, (1i128 << k) - 1, -(1i128 << k), 1 - (1i128 << k)]);
        }
        for k in 0..63 {
            narrow.extend([1i64 << k, (1i64 << k) + 1, -(1i64 << k)]);
        }
        for &p in &wide {
            for &q in &narrow {
                assert_eq!(wide_product(p, q), p.checked_mul(i128::from(q)), "{p} * {q}");
            }
        }
    }
}
