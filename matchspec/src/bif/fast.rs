//! The fast paths of arithmetic: what engines try on bare words before
//! they go through [`call`](super::call).
//!
//! Each function answers only the cases it is sure of and returns `None`
//! for everything else, which the full path then decides (with the same
//! answer where the fast path had one: a test checks that on a grid).

use super::Bif;

/// Does `bif` have a fast path (is it one of `+ - * / div rem band bor
/// bxor`, all of arity 2)?
#[inline]
pub(crate) fn has_fast_path(bif: Bif) -> bool {
    matches!(
        bif,
        Bif::Add
            | Bif::Sub
            | Bif::Mul
            | Bif::FloatDiv
            | Bif::IntDiv
            | Bif::Rem
            | Bif::Band
            | Bif::Bor
            | Bif::Bxor
    )
}

/// `bif` on two small integers, if it is one of the integer arithmetic
/// functions and the result is a plain `i64`; whether that fits a small
/// word is the caller's question. `None` also for a zero divisor (the full
/// path raises `badarith`).
#[inline]
pub(crate) fn small_arith(bif: Bif, x: i64, y: i64) -> Option<i64> {
    match bif {
        Bif::Add => x.checked_add(y),
        Bif::Sub => x.checked_sub(y),
        Bif::Mul => x.checked_mul(y),
        Bif::IntDiv => x.checked_div(y),
        Bif::Rem => x.checked_rem(y),
        Bif::Band => Some(x & y),
        Bif::Bor => Some(x | y),
        Bif::Bxor => Some(x ^ y),
        _ => None,
    }
}

/// `bif` on two integers that fit 128 bits (small integers or small
/// bignums), if the result does too; as `small_arith` otherwise.
#[inline]
pub(crate) fn wide_arith(bif: Bif, x: i128, y: i128) -> Option<i128> {
    match bif {
        Bif::Add => x.checked_add(y),
        Bif::Sub => x.checked_sub(y),
        Bif::Mul => wide_mul(x, y),
        Bif::IntDiv => x.checked_div(y),
        Bif::Rem => x.checked_rem(y),
        Bif::Band => Some(x & y),
        Bif::Bor => Some(x | y),
        Bif::Bxor => Some(x ^ y),
        _ => None,
    }
}

/// `x * y`, if it fits 128 bits: `checked_mul`'s answer, with one or two
/// 64-bit multiplications where the operands allow (fewer instructions
/// than the general 128-bit overflow check).
#[inline(always)]
fn wide_mul(x: i128, y: i128) -> Option<i128> {
    // Operands of 64 bits make a product of at most 127: no overflow
    // check; one of 64 bits, two 64-bit products.
    match (fits_64(x), fits_64(y)) {
        (true, true) => Some(i128::from(x as i64) * i128::from(y as i64)),
        (false, true) => wide_product(x, y as i64),
        (true, false) => wide_product(y, x as i64),
        (false, false) => x.checked_mul(y),
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

/// `bif` on two numbers already converted to floats (at least one was a
/// float, or `bif` is `'/'`), if it is one of `+ - * /` and the result is
/// finite. Small integers convert with `as f64`, as ERTS converts them.
#[inline]
pub(crate) fn float_arith(bif: Bif, x: f64, y: f64) -> Option<f64> {
    let result = match bif {
        Bif::Add => x + y,
        Bif::Sub => x - y,
        Bif::Mul => x * y,
        Bif::FloatDiv => x / y,
        _ => return None,
    };
    result.is_finite().then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bif::{Env, Value, call};
    use crate::term::word::layout::{MAX_SMALL, MIN_SMALL};
    use crate::term::{Heap, Word};

    const BIFS: [Bif; 9] = [
        Bif::Add,
        Bif::Sub,
        Bif::Mul,
        Bif::FloatDiv,
        Bif::IntDiv,
        Bif::Rem,
        Bif::Band,
        Bif::Bor,
        Bif::Bxor,
    ];
    const INTS: [i64; 13] = [
        0,
        1,
        -1,
        2,
        -7,
        3,
        100,
        1 << 30,
        -(1 << 31),
        1 << 40,
        MAX_SMALL,
        MIN_SMALL,
        MAX_SMALL / 3,
    ];
    const FLOATS: [f64; 8] = [0.0, -0.0, 1.5, -2.5, 1e300, -1e-300, 3.0, f64::MAX];

    /// Every answer of the fast paths is the full path's answer.
    #[test]
    fn fast_paths_agree_with_call() {
        let mut heap = Heap::new();
        let mut numbers: Vec<(Word, f64, bool)> =
            INTS.iter().map(|&i| (heap.int(i), i as f64, false)).collect();
        numbers.extend(FLOATS.iter().map(|&f| (heap.float(f), f, true)));
        let mut checked = 0;
        for bif in BIFS {
            for &(a, x, x_float) in &numbers {
                for &(b, y, y_float) in &numbers {
                    let full = call(bif, &[heap.view(a), heap.view(b)], &Env::default());
                    let fast = match (a.as_small(), b.as_small()) {
                        (Some(p), Some(q)) if bif != Bif::FloatDiv => {
                            small_arith(bif, p, q).and_then(Word::small).map(Value::Word)
                        }
                        _ if x_float || y_float || bif == Bif::FloatDiv => {
                            float_arith(bif, x, y).map(Value::Float)
                        }
                        _ => None,
                    };
                    if let Some(fast) = fast {
                        checked += 1;
                        let same = match (&full, &fast) {
                            (Ok(Value::Float(f)), Value::Float(g)) => f.to_bits() == g.to_bits(),
                            (Ok(v), w) => v == w,
                            (Err(_), _) => false,
                        };
                        assert!(same, "{bif:?} {x} {y}: fast {fast:?}, full {full:?}");
                    }
                }
            }
        }
        assert!(checked > 2000, "only {checked} cases took a fast path");
    }

    /// Products of 128-bit integers are `checked_mul`'s.
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
        let all: Vec<i128> = wide.iter().copied().chain(narrow.iter().map(|&q| q.into())).collect();
        for &p in &wide {
            for &q in &narrow {
                assert_eq!(wide_product(p, q), p.checked_mul(i128::from(q)), "{p} * {q}");
            }
        }
        for &p in &all {
            for &q in &all {
                assert_eq!(wide_mul(p, q), p.checked_mul(q), "{p} * {q}");
            }
        }
    }
}
