//! The lean helpers: plain functions over the words of the input and the
//! run's heap, for comparisons of numbers other than small integers and
//! for lookups in small maps (and, in `arith.rs`, for arithmetic on such
//! numbers). For numbers they only find the words: what a number is and
//! what to compute of it is the number path the interpreter takes too
//! ([`number`], matchspec's, which answers from words it is given), so
//! they compute exactly what the interpreter's fast paths compute; they
//! hand anything else to the frame helpers ([`abi::call`],
//! [`abi::compare`]).
//!
//! They cannot panic (no indexing, no allocation, nor does the number
//! path; an `extern "C"` function that did would abort, never unwind),
//! touch no frame and no host, and write only their op's heap words: they
//! run even after a helper's panic, harmlessly. Every read is
//! bounds-checked against the lengths in the [`Ctx`], which every helper
//! that may build refreshes: the number path reads slices no longer than
//! the words there.

use std::cmp::Ordering;
use std::ffi::c_void;

use matchspec::bif::Bif;
use matchspec::engine_internals::number::{self, Number};
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

/// What `w` is as a number ([`Number::of`], the number path the
/// interpreter takes): a small integer, or a number in the input or the
/// run's heap, read from its cells there (up to the end of its space);
/// `None` for anything else (literals included).
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
pub(crate) unsafe fn number_of(ctx: *const Ctx<'_>, w: u64) -> Option<Number> {
    Number::of(Word::from_bits(w), |_| {
        // SAFETY: as this function's contract.
        let Some((base, len, at)) = (unsafe { space(ctx, w) }) else { return &[] };
        if at >= len {
            return &[];
        }
        // SAFETY: the `len - at` words from `at` on are readable (this
        // function's contract; a `Word` is a `u64`), and nothing writes
        // them while the number is read.
        unsafe { std::slice::from_raw_parts(base.add(at as usize).cast(), (len - at) as usize) }
    })
}

/// The number the boxed term `w` is, if it is a float or a bignum of
/// one or two limbs in the input or the run's heap with two words after
/// its header ([`Number::decode`] of those three words): what the
/// arithmetic helpers try first, with one bounds check.
///
/// # Safety
///
/// As [`space`].
#[inline(always)]
pub(crate) unsafe fn boxed_number(ctx: *const Ctx<'_>, w: u64) -> Option<Number> {
    // SAFETY: as this function's contract; `boxed` checked that the header
    // and the two words after it are inside.
    let (_, cells) = unsafe { boxed(ctx, w, 2)? };
    // SAFETY: as above (a `Word` is a `u64`); nothing writes them while
    // the number is read.
    Number::decode(unsafe { &*cells.cast::<[Word; 3]>() })
}

/// `msc_num_compare(ctx, op, x, y)`: [`abi::compare`], deciding itself
/// the comparisons but `=:=` and `=/=` of numbers in the input or the
/// run's heap whose order the number path decides ([`number::order`]:
/// any two but a bignum and a float, or two bignums of more than two
/// limbs).
///
/// # Safety
///
/// As [`space`] and [`abi::compare`].
pub(crate) unsafe extern "C" fn num_compare(ctx: *mut c_void, op: u64, x: u64, y: u64) -> u64 {
    // SAFETY: as this function's contract.
    match unsafe { number_of(ctx.cast_const().cast(), x) } {
        // SAFETY: as this function's contract.
        Some(a) => unsafe { compare_number(ctx, op, a, x, y) },
        // Anything else on at once, with nothing to save.
        // SAFETY: as this function's contract.
        None => unsafe { abi::compare(ctx, op, x, y) },
    }
}

/// [`num_compare`] once `x` is known to be the number `a`.
///
/// # Safety
///
/// As [`num_compare`].
#[inline(never)]
unsafe fn compare_number(ctx: *mut c_void, op: u64, a: Number, x: u64, y: u64) -> u64 {
    // SAFETY: as this function's contract.
    if let Some(b) = unsafe { number_of(ctx.cast_const().cast(), y) }
        && let Some(order) = number::order(a, b)
    {
        match CMPS.get(op as usize) {
            Some(Cmp::Lt) => return u64::from(order == Ordering::Less),
            Some(Cmp::Le) => return u64::from(order != Ordering::Greater),
            Some(Cmp::Gt) => return u64::from(order == Ordering::Greater),
            Some(Cmp::Ge) => return u64::from(order != Ordering::Less),
            Some(Cmp::Eq) => return u64::from(order.is_eq()),
            Some(Cmp::Ne) => return u64::from(order.is_ne()),
            Some(Cmp::ExactEq | Cmp::ExactNe) | None => {}
        }
    }
    // SAFETY: as this function's contract.
    unsafe { abi::compare(ctx, op, x, y) }
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

/// `msc_map_value(ctx, map, key)`: the value, or [`FAILED`]. An immediate
/// key in a map of at most 8 keys is looked up without a frame (see
/// [`small_map_value`]).
///
/// # Safety
///
/// As [`abi::map_value`].
pub(crate) unsafe extern "C" fn map_value(ctx: *mut c_void, map: u64, key: u64) -> u64 {
    // SAFETY: as this function's contract (a live `Ctx`).
    if let Some(found) = unsafe { small_map_value(ctx.cast_const().cast(), key, map) } {
        return found.unwrap_or(FAILED);
    }
    // SAFETY: as this function's contract.
    unsafe { abi::map_value(ctx, map, key) }
}
