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

use crate::abi::{self, CMPS, Ctx, FAILED};

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
    // SAFETY: as this function's contract; the fields are read by value,
    // no reference to the `Ctx` is made.
    let (base, len) = unsafe {
        match (w >> layout::SPACE_SHIFT) & layout::SPACE_MASK {
            s if s == Space::Heap as u64 => ((*ctx).input, (*ctx).input_len),
            s if s == Space::Scratch as u64 => ((*ctx).heap.cast_const().cast(), (*ctx).heap_len),
            _ => return None,
        }
    };
    Some((base, len, w >> layout::OFFSET_SHIFT))
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

/// A number, as the lean helpers see it.
#[derive(Clone, Copy)]
enum Num {
    /// A small integer.
    Small(i64),
    /// A float.
    Float(f64),
    /// A bignum of at most 127 bits.
    Wide(i128),
    /// A larger bignum: negative?
    Big(bool),
}

/// `w` as a number, reading its words once; `None` for anything else.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
unsafe fn num_of(ctx: *const Ctx<'_>, w: u64) -> Option<Num> {
    if w & layout::TAG_MASK == layout::TAG_SMALL {
        return Some(Num::Small((w as i64) >> layout::TAG_BITS));
    }
    // SAFETY: as this function's contract.
    let (base, len, at) = unsafe { space(ctx, w)? };
    // The header and one word after it (every number has one).
    if at + 1 >= len {
        return None;
    }
    // SAFETY: `at + 1` is below `len`, and `len` words at `base` are
    // readable (this function's contract).
    let (header, first) = unsafe {
        let cells = base.add(at as usize);
        (*cells, *cells.add(1))
    };
    if header == layout::FLOAT_HEADER {
        return Some(Num::Float(f64::from_bits(first)));
    }
    let negative = match header & layout::HEADER_KIND_MASK {
        layout::HEADER_POS_BIG => false,
        layout::HEADER_NEG_BIG => true,
        _ => return None,
    };
    let magnitude = match header >> layout::HEADER_KIND_BITS {
        1 => u128::from(first),
        2 if at + 2 < len => {
            // SAFETY: `at + 2` is below `len` (as above).
            let hi = unsafe { *base.add(at as usize + 2) };
            u128::from(hi) << 64 | u128::from(first)
        }
        _ => return Some(Num::Big(negative)),
    };
    Some(match i128::try_from(magnitude) {
        Ok(m) => Num::Wide(if negative { -m } else { m }),
        Err(_) => Num::Big(negative),
    })
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
    let exact = |n: Num| match n {
        Num::Small(i) if (-LIMIT..=LIMIT).contains(&i) => Some(i as f64),
        Num::Float(f) => Some(f),
        Num::Small(_) | Num::Wide(_) | Num::Big(_) => None,
    };
    // A bignum's sign (`true`: negative).
    let sign = |n: Num| match n {
        Num::Wide(i) => Some(i < 0),
        Num::Big(negative) => Some(negative),
        Num::Small(_) | Num::Float(_) => None,
    };
    // SAFETY: as this function's contract.
    let (p, q) = unsafe { (num_of(ctx, x)?, num_of(ctx, y)?) };
    let order = match (p, q) {
        (Num::Small(_), _) if sign(q).is_some() => {
            if sign(q)? {
                Greater
            } else {
                Less
            }
        }
        (_, Num::Small(_)) if sign(p).is_some() => {
            if sign(p)? {
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
    // SAFETY: as this function's contract.
    let (Some(p), Some(q)) = (unsafe { num_of(ctx, x) }, unsafe { num_of(ctx, y) }) else {
        return FAILED;
    };
    // As the interpreter's fast path: floats if either is one (or for
    // `/`), converting small integers; bignums never mix with floats here.
    let float = |n: Num| match n {
        Num::Small(i) => Some(i as f64),
        Num::Float(f) => Some(f),
        Num::Wide(_) | Num::Big(_) => None,
    };
    let words = if bif == Bif::FloatDiv || matches!(p, Num::Float(_)) || matches!(q, Num::Float(_))
    {
        let (Some(p), Some(q)) = (float(p), float(q)) else { return FAILED };
        let Some(r) = bif::float_arith(bif, p, q) else { return FAILED };
        [layout::FLOAT_HEADER, r.to_bits(), 0]
    } else {
        let wide = |n: Num| match n {
            Num::Small(i) => Some(i128::from(i)),
            Num::Wide(i) => Some(i),
            Num::Float(_) | Num::Big(_) => None,
        };
        let (Some(p), Some(q)) = (wide(p), wide(q)) else { return FAILED };
        match wide_words(bif, p, q) {
            Ok(words) => words,
            Err(word) => return word,
        }
    };
    // SAFETY: as this function's contract: the three words at `at` are
    // set aside for this op, inside the run's heap.
    unsafe {
        let heap = (*ctx).heap.cast::<u64>().add(at as usize);
        std::ptr::copy_nonoverlapping(words.as_ptr(), heap, 3);
    }
    scratch_boxed(at)
}

/// The integer result of `bif` on `p` and `q` in 128 bits: the words of a
/// bignum (`Ok`), or a word to return (`Err`: a small integer, or
/// [`FAILED`]).
#[inline(always)]
fn wide_words(bif: Bif, p: i128, q: i128) -> Result<[u64; 3], u64> {
    // A product whose operands have at most 127 significant bits together
    // fits, and needs no overflow-checked multiplication.
    let small_product = bif == Bif::Mul
        && p.unsigned_abs().leading_zeros() + q.unsigned_abs().leading_zeros() >= 129;
    let r = if small_product {
        p.wrapping_mul(q)
    } else {
        match bif::wide_arith(bif, p, q) {
            Some(r) => r,
            None => return Err(FAILED),
        }
    };
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
