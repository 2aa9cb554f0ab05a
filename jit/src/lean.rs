//! The lean helpers: plain functions over the words of the input and the
//! run's heap, for numbers other than small integers and for lookups in
//! small maps. They compute exactly what the interpreter's fast paths
//! compute, and hand anything else to the frame helpers ([`abi::call`],
//! [`abi::compare`]).
//!
//! They cannot panic (no indexing, no allocation; an `extern "C"`
//! function that did would abort, never unwind), touch no frame and no
//! host, and write only their op's heap words: they run even after a
//! helper's panic, harmlessly. Every read is bounds-checked against the
//! lengths in the [`Ctx`], which every helper that may build refreshes.

use std::ffi::c_void;

use matchspec::bif::{self, Bif};
use matchspec::ir::Cmp;
use matchspec::term::word::layout;
use matchspec::term::{Atom, Space, Word};

use crate::abi::{self, CMPS, Ctx, FAILED, SCRATCH, Words};

/// The words of the space the boxed term `w` points into, with their
/// number, and the term's offset there, if it lies in the input or the
/// run's heap (literals and anything else: `None`).
///
/// # Safety
///
/// `ctx` must point to a live [`Ctx`] whose `input`/`input_len` and
/// `heap`/`heap_len` describe readable words.
#[inline(always)]
unsafe fn space(ctx: *const Ctx<'_>, w: u64) -> Option<(*const u64, u64, u64)> {
    if w & layout::TAG_MASK != layout::TAG_BOXED {
        return None;
    }
    let space = ((w >> layout::SPACE_SHIFT) & layout::SPACE_MASK) as usize;
    // SAFETY: as this function's contract; the field is read by value, no
    // reference to the `Ctx` is made. Literals have no words here (length
    // 0): nothing is inside.
    let Words { at, len } = unsafe { (*ctx).spaces[space] };
    Some((at.cast_const(), len, w >> layout::OFFSET_SHIFT))
}

/// The header of the boxed term `w` points at and a pointer to it, if it
/// lies in the input or the run's heap with `more` words after it.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn boxed(ctx: *const Ctx<'_>, w: u64, more: u64) -> Option<(u64, *const u64)> {
    // SAFETY: as this function's contract.
    let (base, len, at) = unsafe { space(ctx, w)? };
    // `at` is below 2^59: no overflow.
    if at + more >= len {
        return None;
    }
    // SAFETY: `at + more` is below `len`, and `len` words at `base` are
    // readable (this function's contract).
    unsafe {
        let cells = base.add(at as usize);
        Some((*cells, cells))
    }
}

/// The cells of the boxed term `w` points at and how many words from
/// there on lie inside its space (at least two: every number has a word
/// after its header), if it is a boxed term of the input or the run's heap.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn number_cells(ctx: *const Ctx<'_>, w: u64) -> Option<(*const u64, u64)> {
    // SAFETY: as this function's contract.
    let (base, len, at) = unsafe { space(ctx, w)? };
    // `at` is below 2^59: no overflow.
    if at + 1 >= len {
        return None;
    }
    // SAFETY: `at` is below `len`, and `len` words at `base` are readable.
    Some((unsafe { base.add(at as usize) }, len - at))
}

/// A number as comparisons see it, from its header alone.
#[derive(Clone, Copy)]
enum Key {
    Small(i64),
    Float(f64),
    /// A bignum: negative?
    Big(bool),
}

/// `w`'s [`Key`]; `None` if it is not a number.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn key_of(ctx: *const Ctx<'_>, w: u64) -> Option<Key> {
    if w & layout::TAG_MASK == layout::TAG_SMALL {
        return Some(Key::Small((w as i64) >> layout::TAG_BITS));
    }
    // SAFETY: as this function's contract; `number_cells` checked the
    // header and the word after it are inside.
    unsafe {
        let (cells, _) = number_cells(ctx, w)?;
        let header = *cells;
        if header == layout::FLOAT_HEADER {
            return Some(Key::Float(f64::from_bits(*cells.add(1))));
        }
        match header & layout::HEADER_KIND_MASK {
            layout::HEADER_POS_BIG => Some(Key::Big(false)),
            layout::HEADER_NEG_BIG => Some(Key::Big(true)),
            _ => None,
        }
    }
}

/// `w` as an integer of at most 127 bits: a small integer, or a bignum of
/// one or two words; `None` for anything else.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn int_of(ctx: *const Ctx<'_>, w: u64) -> Option<i128> {
    const ONE: u64 = 1 << layout::HEADER_KIND_BITS;
    const TWO: u64 = 2 << layout::HEADER_KIND_BITS;
    if w & layout::TAG_MASK == layout::TAG_SMALL {
        return Some(i128::from((w as i64) >> layout::TAG_BITS));
    }
    // SAFETY: as this function's contract; `number_cells` checked the
    // header and the word after it are inside, and `n` words are.
    unsafe {
        let (cells, n) = number_cells(ctx, w)?;
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
/// As [`space`].
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

/// `msc_num_compare(ctx, op, x, y)`: [`abi::compare`], deciding itself
/// the comparisons but `=:=` and `=/=` of the numbers whose order is a
/// machine comparison: floats and small integers that floats hold exactly
/// (within ±2^53), and a small integer against a bignum (bignums lie
/// outside the small range: the sign decides).
///
/// # Safety
///
/// As [`space`] and [`abi::compare`].
pub(crate) unsafe extern "C" fn num_compare(ctx: *mut c_void, op: u64, x: u64, y: u64) -> u64 {
    // SAFETY: as this function's contract.
    match unsafe { num_order(ctx.cast_const().cast(), op, x, y) } {
        Some(holds) => u64::from(holds),
        // SAFETY: as this function's contract.
        None => unsafe { abi::compare(ctx, op, x, y) },
    }
}

/// What [`num_compare`] decides itself.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn num_order(ctx: *const Ctx<'_>, op: u64, x: u64, y: u64) -> Option<bool> {
    use std::cmp::Ordering::{Greater, Less};
    const LIMIT: i64 = 1 << 53;
    // A float, or a small integer a float holds exactly.
    let exact = |k: Key| match k {
        Key::Small(i) if (-LIMIT..=LIMIT).contains(&i) => Some(i as f64),
        Key::Float(f) => Some(f),
        Key::Small(_) | Key::Big(_) => None,
    };
    // SAFETY: as this function's contract.
    let (p, q) = unsafe { (key_of(ctx, x)?, key_of(ctx, y)?) };
    let order = match (p, q) {
        (Key::Small(_), Key::Big(negative)) => {
            if negative {
                Greater
            } else {
                Less
            }
        }
        (Key::Big(negative), Key::Small(_)) => {
            if negative {
                Less
            } else {
                Greater
            }
        }
        _ => exact(p)?.partial_cmp(&exact(q)?)?,
    };
    match CMPS.get(op as usize)? {
        Cmp::Lt => Some(order == Less),
        Cmp::Le => Some(order != Greater),
        Cmp::Gt => Some(order == Greater),
        Cmp::Ge => Some(order != Less),
        Cmp::Eq => Some(order.is_eq()),
        Cmp::Ne => Some(order.is_ne()),
        Cmp::ExactEq | Cmp::ExactNe => None,
    }
}

/// `msc_num_add(ctx, x, y, at)`: `x + y` by [`num_arith`].
///
/// # Safety
///
/// As [`num_arith`].
pub(crate) unsafe extern "C" fn num_add(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { num_arith(ctx, Bif::Add, x, y, at) }
}

/// `msc_num_sub(ctx, x, y, at)`: `x - y` by [`num_arith`].
///
/// # Safety
///
/// As [`num_arith`].
pub(crate) unsafe extern "C" fn num_sub(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { num_arith(ctx, Bif::Sub, x, y, at) }
}

/// `msc_num_mul(ctx, x, y, at)`: `x * y` by [`num_arith`].
///
/// # Safety
///
/// As [`num_arith`].
pub(crate) unsafe extern "C" fn num_mul(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { num_arith(ctx, Bif::Mul, x, y, at) }
}

/// `msc_num_div(ctx, x, y, at)`: `x / y` by [`num_arith`].
///
/// # Safety
///
/// As [`num_arith`].
pub(crate) unsafe extern "C" fn num_div(ctx: *mut c_void, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    unsafe { num_arith(ctx, Bif::FloatDiv, x, y, at) }
}

/// [`abi::call`] of `bif` (`+`, `-`, `*` or `/`), computing itself what
/// the interpreter's fast path computes for numbers in the input or the
/// run's heap: a float if either is a float (or for `/`), if finite; else
/// in 128 bits, if the operands fit. A float or bignum result is built in
/// the three heap words at offset `at` (set aside for the op). One helper
/// per function, so each knows its own.
///
/// # Safety
///
/// As [`space`] and [`abi::call`]; `at` and the two words after it must
/// be heap words set aside for the code (below `Ctx::heap_len`).
#[inline(always)]
unsafe fn num_arith(ctx: *mut c_void, bif: Bif, x: u64, y: u64, at: u64) -> u64 {
    // SAFETY: as this function's contract.
    match unsafe { num_value(ctx.cast(), bif, x, y, at) } {
        // SAFETY: as this function's contract.
        FAILED => unsafe { call_slow(ctx, bif, x, y) },
        word => word,
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

/// What [`num_arith`] computes itself, or [`FAILED`].
///
/// # Safety
///
/// As [`num_arith`].
#[inline(always)]
unsafe fn num_value(ctx: *mut Ctx<'_>, bif: Bif, x: u64, y: u64, at: u64) -> u64 {
    // As the interpreter's fast path: integers of up to 127 bits unless
    // either is a float (or for `/`); floats then, converting small
    // integers (bignums never mix with floats here).
    let ints = match bif {
        Bif::FloatDiv => None,
        // SAFETY: as this function's contract.
        _ => unsafe { int_of(ctx, x).and_then(|p| Some((p, int_of(ctx, y)?))) },
    };
    let words = match ints {
        Some((p, q)) => match wide_words(bif, p, q) {
            Ok(words) => words,
            Err(word) => return word,
        },
        None => {
            // SAFETY: as this function's contract.
            let (Some(p), Some(q)) = (unsafe { float_of(ctx, x) }, unsafe { float_of(ctx, y) })
            else {
                return FAILED;
            };
            let Some(r) = bif::float_arith(bif, p, q) else { return FAILED };
            [layout::FLOAT_HEADER, r.to_bits(), 0]
        }
    };
    // SAFETY: as this function's contract: the three words at `at` are
    // set aside for this op, inside the run's heap.
    unsafe {
        let heap = (*ctx).spaces[SCRATCH].at.add(at as usize);
        std::ptr::copy_nonoverlapping(words.as_ptr(), heap, 3);
    }
    scratch_boxed(at)
}

/// The integer result of `bif` on `p` and `q` in 128 bits: the words of a
/// bignum (`Ok`), or a word to return (`Err`: a small integer, or
/// [`FAILED`]).
#[inline(always)]
fn wide_words(bif: Bif, p: i128, q: i128) -> Result<[u64; 3], u64> {
    let r = match bif {
        Bif::Add => p.checked_add(q),
        Bif::Sub => p.checked_sub(q),
        // Operands of 64 bits make a product of at most 127: no overflow
        // check; nor with at most 127 significant bits together.
        Bif::Mul => match (fits_64(p), fits_64(q)) {
            (true, true) => Some(i128::from(p as i64) * i128::from(q as i64)),
            (false, true) => wide_product(p, q as i64),
            (true, false) => wide_product(q, p as i64),
            (false, false) => p.checked_mul(q),
        },
        _ => bif::wide_arith(bif, p, q),
    };
    let Some(r) = r else { return Err(FAILED) };
    if let Some(word) = i64::try_from(r).ok().and_then(Word::small) {
        return Err(word.to_bits());
    }
    // As `Heap::int128` builds it: one word of magnitude, or two.
    let magnitude = r.unsigned_abs();
    let (lo, hi) = (magnitude as u64, (magnitude >> 64) as u64);
    let size: u64 = if hi == 0 { 1 } else { 2 };
    let kind = if r < 0 { layout::HEADER_NEG_BIG } else { layout::HEADER_POS_BIG };
    Ok([size << layout::HEADER_KIND_BITS | kind, lo, hi])
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

/// `msc_map_get(ctx, bif, key, map)`: [`abi::call`] of `map_get` or
/// `is_map_key` (the `Bif` index `bif`), answering itself for an
/// immediate key and a map of at most 8 keys in the input or the run's
/// heap, whose keys are compared as words (as `Frame::map_value` does for
/// heads).
///
/// # Safety
///
/// As [`space`] and [`abi::call`].
pub(crate) unsafe extern "C" fn map_get(ctx: *mut c_void, bif: u64, key: u64, map: u64) -> u64 {
    // SAFETY: as this function's contract.
    let found = unsafe { small_map_value(ctx.cast_const().cast(), key, map) };
    match (abi::bif_of(bif), found) {
        (Some(Bif::MapGet), Some(value)) => value.unwrap_or(FAILED),
        (Some(Bif::IsMapKey), Some(value)) => {
            let answer = if value.is_some() { Atom::TRUE } else { Atom::FALSE };
            Word::atom(answer).to_bits()
        }
        // SAFETY: as this function's contract.
        _ => unsafe { abi::call(ctx, bif, key, map, Word::NIL.to_bits()) },
    }
}

/// The value of the immediate `key` in `map`, a map of at most 8 keys in
/// the input or the run's heap (`Some(None)`: not a key); `None` if that
/// is not what they are.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
pub(crate) unsafe fn small_map_value(
    ctx: *const Ctx<'_>,
    key: u64,
    map: u64,
) -> Option<Option<u64>> {
    // Immediates (small integers, atoms, `[]`) have bit 1 of the tag clear.
    if key & 0b10 != 0 {
        return None;
    }
    // SAFETY: as this function's contract.
    let (header, _) = unsafe { boxed(ctx, map, 0)? };
    if header & layout::HEADER_KIND_MASK != layout::HEADER_MAP {
        return None;
    }
    let n = (header >> layout::HEADER_KIND_BITS) & !layout::MAP_IN_ORDER;
    if n > 8 {
        return None;
    }
    // SAFETY: as this function's contract; `boxed` checked the keys and
    // values (the `2 n` words after the header) are inside.
    unsafe {
        let (_, cells) = boxed(ctx, map, 2 * n)?;
        let keys = std::slice::from_raw_parts(cells.add(1), n as usize);
        let values = std::slice::from_raw_parts(cells.add(1 + n as usize), n as usize);
        Some(keys.iter().position(|&k| k == key).and_then(|i| values.get(i).copied()))
    }
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
