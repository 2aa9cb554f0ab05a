//! The lean helpers: plain functions over the words of the input and the
//! run's heap, for comparisons of numbers other than small integers and
//! for lookups in small maps (and, in `arith.rs`, for arithmetic on such
//! numbers). They compute exactly what the interpreter's fast paths
//! compute, and hand anything else to the frame helpers ([`abi::call`],
//! [`abi::compare`]).
//!
//! They cannot panic (no indexing, no allocation; an `extern "C"`
//! function that did would abort, never unwind), touch no frame and no
//! host, and write only their op's heap words: they run even after a
//! helper's panic, harmlessly. Every read is bounds-checked against the
//! lengths in the [`Ctx`], which every helper that may build refreshes.

use std::cmp::Ordering;
use std::ffi::c_void;

use matchspec::bif::Bif;
use matchspec::ir::Cmp;
use matchspec::term::word::layout;
use matchspec::term::{Atom, Word};

use crate::abi::{self, CMPS, Ctx, FAILED, Words};

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
pub(crate) unsafe fn boxed(ctx: *const Ctx<'_>, w: u64, more: u64) -> Option<(u64, *const u64)> {
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
pub(crate) unsafe fn number_cells(ctx: *const Ctx<'_>, w: u64) -> Option<(*const u64, u64)> {
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
pub(crate) enum Key {
    /// A small integer's value.
    Small(i64),
    /// A float's value.
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
    // SAFETY: as this function's contract.
    let order = unsafe { key_cmp(key_of(ctx, x)?, key_of(ctx, y)?)? };
    match CMPS.get(op as usize)? {
        Cmp::Lt => Some(order == Ordering::Less),
        Cmp::Le => Some(order != Ordering::Greater),
        Cmp::Gt => Some(order == Ordering::Greater),
        Cmp::Ge => Some(order != Ordering::Less),
        Cmp::Eq => Some(order.is_eq()),
        Cmp::Ne => Some(order.is_ne()),
        Cmp::ExactEq | Cmp::ExactNe => None,
    }
}

/// The order of numbers `p` and `q` (as `==` sees them), if their keys
/// decide it with a machine comparison: two small integers; a small
/// integer against a bignum, which lies beyond every small integer (its
/// sign decides); floats and small integers a float holds exactly
/// (within ±2^53).
#[inline(always)]
pub(crate) fn key_cmp(p: Key, q: Key) -> Option<Ordering> {
    const LIMIT: i64 = 1 << 53;
    // A float, or a small integer a float holds exactly.
    let exact = |k: Key| match k {
        Key::Small(i) if (-LIMIT..=LIMIT).contains(&i) => Some(i as f64),
        Key::Float(f) => Some(f),
        Key::Small(_) | Key::Big(_) => None,
    };
    let below = |negative: bool| if negative { Ordering::Less } else { Ordering::Greater };
    match (p, q) {
        (Key::Small(a), Key::Small(b)) => Some(a.cmp(&b)),
        (Key::Small(_), Key::Big(negative)) => Some(below(negative).reverse()),
        (Key::Big(negative), Key::Small(_)) => Some(below(negative)),
        _ => exact(p)?.partial_cmp(&exact(q)?),
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
