//! The number fast path every engine shares: numbers read from the words
//! of a heap, and the arithmetic and comparisons that need no term.
//!
//! An engine finds a number's words (the interpreter in its heap slices,
//! the JIT's lean helpers through the pointers they are given, checking
//! every bound first); everything after that is here, written once:
//! [`Number::decode`] reads a number from its header and the words after
//! it, [`arith`] computes `+ - * / div rem band bor bxor` of two numbers,
//! [`order`] compares them, [`Value::encode`] gives a result's words.
//! Each answers only the cases it is sure of (small integers, bignums that
//! fit 128 bits, floats mixed with small integers) and returns `None` for
//! the rest, which the full path (`bif::call`, `Cmp::holds`) decides.
//! Tests check on a grid that every fast answer is the full path's
//! (`interp/fast.rs`).

use std::cmp::Ordering;

use crate::bif::{self, Bif};
use crate::term::word::layout;
use crate::term::{Heap, Word, compare_int_float_i64};

/// A number read from a word (and, for a boxed one, from its cells).
#[derive(Clone, Copy, Debug)]
pub enum Number {
    /// A small integer.
    Small(i64),
    /// A bignum of one or two limbs, as it is stored: its sign and its
    /// magnitude, which lies beyond the small integers' (and below 2^128).
    Big {
        /// Is it negative?
        negative: bool,
        /// Its magnitude.
        magnitude: u128,
    },
    /// A float.
    Float(f64),
    /// A larger bignum, known only by its sign (it lies beyond every
    /// 128-bit integer).
    Huge {
        /// Is it negative?
        negative: bool,
    },
}

impl Number {
    /// What `w` is as a number, `cells` giving the cells a boxed `w`
    /// points at (its header, then at least the words after it that lie
    /// in its space; none if they cannot be read); `None` for anything
    /// else.
    #[inline(always)]
    pub fn of<'a>(w: Word, cells: impl FnOnce(Word) -> &'a [Word]) -> Option<Number> {
        if let Some(i) = w.as_small() {
            return Some(Number::Small(i));
        }
        if !w.is_boxed() {
            return None;
        }
        Number::decode(cells(w))
    }

    /// The number whose header is `cells[0]`, the words after it following
    /// (as many as lie in its space, or at least as many as it has); `None`
    /// if it is not a number or its words are not all there.
    #[inline(always)]
    pub fn decode(cells: &[Word]) -> Option<Number> {
        let (header, after) = cells.split_first()?;
        let header = header.to_bits();
        if header == layout::FLOAT_HEADER {
            return after.first().map(|w| Number::Float(f64::from_bits(w.to_bits())));
        }
        // The usual bignum, of one or two limbs, positive or negative, with
        // a word after the first limb: its header less a positive one-limb
        // bignum's is 0, 1, `ONE` or `ONE + 1`, and the second limb is
        // read without a branch.
        const ONE: u64 = 1 << layout::HEADER_KIND_BITS;
        let k = header.wrapping_sub(ONE | layout::HEADER_POS_BIG);
        if k & !(ONE | 1) == 0
            && let [lo, next, ..] = after
        {
            // With one limb, the word after it is not the bignum's.
            let hi = next.to_bits() & (k >> layout::HEADER_KIND_BITS).wrapping_neg();
            let magnitude = u128::from(hi) << 64 | u128::from(lo.to_bits());
            return Some(Number::Big { negative: k & 1 != 0, magnitude });
        }
        let negative = match header & layout::HEADER_KIND_MASK {
            layout::HEADER_POS_BIG => false,
            layout::HEADER_NEG_BIG => true,
            _ => return None,
        };
        Some(match after.get(..(header >> layout::HEADER_KIND_BITS) as usize)? {
            [lo] => Number::Big { negative, magnitude: u128::from(lo.to_bits()) },
            [lo, hi] => Number::Big {
                negative,
                magnitude: u128::from(hi.to_bits()) << 64 | u128::from(lo.to_bits()),
            },
            _ => Number::Huge { negative },
        })
    }

    /// The integer `negative` and `magnitude` make (beyond the small
    /// integers or not).
    #[inline(always)]
    fn int(negative: bool, magnitude: u128) -> Number {
        // Up to `MAX_SMALL`, and one more below zero.
        if magnitude <= layout::MAX_SMALL as u128 + u128::from(negative) {
            let value = magnitude as i64;
            Number::Small(if negative { value.wrapping_neg() } else { value })
        } else {
            Number::Big { negative, magnitude }
        }
    }

    /// As an integer of 128 bits, if it is one.
    #[inline(always)]
    fn wide(self) -> Option<i128> {
        match self {
            Number::Small(i) => Some(i.into()),
            Number::Big { negative, magnitude } => {
                let m = i128::try_from(magnitude).ok()?;
                Some(if negative { -m } else { m })
            }
            Number::Float(_) | Number::Huge { .. } => None,
        }
    }

    /// As a float: a float, or a small integer converted (`as f64`, as
    /// ERTS converts it). Bignums as floats round as ERTS rounds them:
    /// the full path's.
    #[inline(always)]
    fn float(self) -> Option<f64> {
        match self {
            Number::Small(i) => Some(i as f64),
            Number::Float(f) => Some(f),
            Number::Big { .. } | Number::Huge { .. } => None,
        }
    }
}

/// A result of [`arith`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// An integer by its sign and magnitude (below 2^127; it may be a
    /// small integer): what a bignum and a small integer make.
    Big {
        /// Is it negative?
        negative: bool,
        /// Its magnitude.
        magnitude: u128,
    },
    /// A (finite) float.
    Float(f64),
}

/// A [`Value`] as a term: see [`Value::encode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoded {
    /// A small integer's word.
    Small(Word),
    /// The header and payload of a float or of a bignum of one or two
    /// limbs (a word left over is 0), as [`Heap::float`] and
    /// [`Heap::int128`] build them.
    Boxed([Word; 3]),
}

impl Value {
    /// The value as a number, to compare with [`order`].
    #[inline(always)]
    pub fn number(self) -> Number {
        match self {
            Value::Int(i) => Number::int(i < 0, i.unsigned_abs()),
            Value::Big { negative, magnitude } => Number::int(negative, magnitude),
            Value::Float(f) => Number::Float(f),
        }
    }

    /// The value's words.
    #[inline(always)]
    pub fn encode(self) -> Encoded {
        let (negative, magnitude) = match self {
            Value::Int(i) => (i < 0, i.unsigned_abs()),
            Value::Big { negative, magnitude } => (negative, magnitude),
            Value::Float(f) => {
                return Encoded::Boxed([
                    Word::from_bits(layout::FLOAT_HEADER),
                    Word::from_bits(f.to_bits()),
                    Word::from_bits(0),
                ]);
            }
        };
        let (lo, hi) = (magnitude as u64, (magnitude >> 64) as u64);
        let kind = if negative { layout::HEADER_NEG_BIG } else { layout::HEADER_POS_BIG };
        let limbs: u64 = if hi == 0 {
            // Up to `MAX_SMALL`, and one more below zero.
            if lo <= layout::MAX_SMALL as u64 + u64::from(negative) {
                let value = if negative { (lo as i64).wrapping_neg() } else { lo as i64 };
                return Encoded::Small(Word::from_bits((value << layout::TAG_BITS) as u64));
            }
            1
        } else {
            2
        };
        Encoded::Boxed([
            Word::from_bits(limbs << layout::HEADER_KIND_BITS | kind),
            Word::from_bits(lo),
            Word::from_bits(hi),
        ])
    }

    /// Places the value: a small word if it fits, else on `heap`.
    #[inline(always)]
    pub(crate) fn build(self, heap: &mut Heap) -> Word {
        match self {
            Value::Int(i) => match i64::try_from(i).ok().and_then(Word::small) {
                Some(w) => w,
                None => heap.int128(i),
            },
            Value::Big { negative, magnitude } => {
                heap.big_from_parts(negative, &[magnitude as u64, (magnitude >> 64) as u64])
            }
            Value::Float(f) => heap.float(f),
        }
    }
}

/// `bif` (one with a fast path: `+ - * / div rem band bor bxor`) on `a`
/// and `b`: in 128 bits if both are integers that fit (but for `/`), as
/// floats if both are floats or small integers (at least one a float, or
/// for `/`) and the result is finite; `None` for the full path (a result
/// that does not fit, a zero divisor, a bignum mixed with a float).
#[inline(always)]
pub fn arith(bif: Bif, a: Number, b: Number) -> Option<Value> {
    match (a, b) {
        (Number::Big { negative, magnitude }, Number::Small(s))
            if matches!(bif, Bif::Add | Bif::Sub | Bif::Mul) =>
        {
            big_small(bif, negative, magnitude, s)
        }
        (Number::Small(_) | Number::Big { .. }, Number::Small(_) | Number::Big { .. })
            if bif != Bif::FloatDiv =>
        {
            bif::wide_arith(bif, a.wide()?, b.wide()?).map(Value::Int)
        }
        (Number::Small(_) | Number::Float(_), Number::Small(_) | Number::Float(_)) => {
            bif::float_arith(bif, a.float()?, b.float()?).map(Value::Float)
        }
        // Bignums as floats round as ERTS rounds them: the full path.
        _ => None,
    }
}

/// `+`, `-` or `*` (`bif`) on a bignum (`negative`, `magnitude`) and the
/// small integer `s`, if the magnitudes stay below 2^127, worked on as a
/// bignum is stored (no conversion to and from two's complement). A small integer is smaller than any bignum, so a
/// sum or difference keeps the bignum's sign, and its magnitude is the
/// bignum's plus or minus the small integer; a product's magnitude is the
/// product of the magnitudes.
#[inline(always)]
fn big_small(bif: Bif, negative: bool, magnitude: u128, s: i64) -> Option<Value> {
    let (negative, magnitude) = match bif {
        // A negative factor turns the sign round.
        Bif::Mul => {
            let negative = negative ^ (s < 0);
            (negative, magnitude_product(magnitude, s.unsigned_abs())?)
        }
        _ => {
            // What the small integer adds to the magnitude (at most 2^60
            // either way): the magnitude, beyond 2^60, stays positive.
            let toward = if bif == Bif::Sub { s.wrapping_neg() } else { s };
            let toward = if negative { toward.wrapping_neg() } else { toward };
            let sum = magnitude.wrapping_add(toward as i128 as u128);
            // Below 2^127 before and after (so nothing wraps around), as
            // for two 128-bit integers.
            if (magnitude | sum) >> 127 != 0 {
                return None;
            }
            (negative, sum)
        }
    };
    Some(Value::Big { negative, magnitude })
}

/// `a * b`, if below 2^127: two 64-bit products.
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

/// The order of `a` and `b` as `==` sees them (not `=:=`, which tells `1`
/// from `1.0`), when it is cheap to know; `None`: ask the full comparison.
#[inline(always)]
pub fn order(a: Number, b: Number) -> Option<Ordering> {
    use Ordering::{Greater, Less};
    // A bignum lies beyond every small integer, a larger one beyond every
    // bignum of two limbs: its sign decides.
    let beyond = |negative: bool| if negative { Less } else { Greater };
    Some(match (a, b) {
        (Number::Small(p), Number::Small(q)) => p.cmp(&q),
        (Number::Small(_), Number::Big { negative, .. } | Number::Huge { negative })
        | (Number::Big { .. }, Number::Huge { negative }) => beyond(negative).reverse(),
        (Number::Big { negative, .. } | Number::Huge { negative }, Number::Small(_))
        | (Number::Huge { negative }, Number::Big { .. }) => beyond(negative),
        (Number::Big { negative: p, magnitude: m }, Number::Big { negative: q, magnitude: n }) => {
            match (p, q) {
                (false, false) => m.cmp(&n),
                (true, true) => n.cmp(&m),
                (true, false) => Less,
                (false, true) => Greater,
            }
        }
        (Number::Small(i), Number::Float(f)) => compare_int_float_i64(i, f),
        (Number::Float(f), Number::Small(i)) => compare_int_float_i64(i, f).reverse(),
        // Floats are never NaN.
        (Number::Float(p), Number::Float(q)) => p.partial_cmp(&q)?,
        (Number::Float(_), Number::Big { .. } | Number::Huge { .. })
        | (Number::Big { .. } | Number::Huge { .. }, Number::Float(_))
        | (Number::Huge { .. }, Number::Huge { .. }) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::word::layout::{MAX_SMALL, MIN_SMALL};

    /// The integer of a [`Value`].
    fn int(value: Value) -> Option<i128> {
        match value {
            Value::Int(i) => Some(i),
            Value::Big { negative, magnitude } => {
                let m = i128::try_from(magnitude).ok()?;
                Some(if negative { -m } else { m })
            }
            Value::Float(_) => None,
        }
    }

    /// Encoded values are the words the heap builds for them, and read
    /// back as the number [`Value::number`] says.
    #[test]
    fn encode_is_the_heaps_layout() {
        let mut ints = vec![0i128, 1, -1, i128::MAX, i128::MIN + 1];
        for k in 0..127 {
            ints.extend([1i128 << k, (1i128 << k) - 1, -(1i128 << k), 1 - (1i128 << k)]);
        }
        let floats = [0.0, -0.0, 1.5, -2.5e300, f64::MAX, f64::MIN_POSITIVE];
        let values = ints.iter().flat_map(|&i| {
            [Value::Int(i), Value::Big { negative: i < 0, magnitude: i.unsigned_abs() }]
        });
        for value in values.chain(floats.map(Value::Float)) {
            let mut heap = Heap::new();
            let word = value.build(&mut heap);
            match value.encode() {
                Encoded::Small(w) => {
                    assert_eq!(w, word, "{value:?}");
                    assert!(heap.is_empty(), "{value:?}");
                }
                Encoded::Boxed(words) => {
                    let n = heap.words().len();
                    assert_eq!(heap.words(), &words[..n], "{value:?}");
                    assert!(words[n..].iter().all(|w| w.to_bits() == 0), "{value:?}");
                    assert!(word.is_boxed());
                }
            }
            let read = Number::of(word, |_| heap.words()).expect("a number");
            assert_eq!(order(read, value.number()), Some(Ordering::Equal), "{value:?}");
            assert_eq!(read.wide(), int(value), "{value:?}");
        }
    }

    /// A bignum and a small integer make the exact sum, difference or
    /// product, unless a magnitude reaches 2^127.
    #[test]
    fn big_small_is_exact() {
        use num_bigint::BigInt;
        let mut magnitudes = vec![u128::MAX, 1 << 127, (1 << 127) - 1, 1 << 64, (1 << 64) - 1];
        for k in 60..128 {
            magnitudes.extend([1u128 << k, (1u128 << k) + 1, (1u128 << k) - 1]);
        }
        let mut smalls = vec![0, 1, -1, 2, -2, 3, MAX_SMALL, MIN_SMALL, MAX_SMALL / 3];
        for k in 0..60 {
            smalls.extend([1i64 << k, -(1i64 << k)]);
        }
        let limit = BigInt::from(1u128 << 127);
        let mut fast = 0;
        for &magnitude in &magnitudes {
            for negative in [false, true] {
                if magnitude <= MAX_SMALL as u128 + u128::from(negative) {
                    continue;
                }
                let x = if negative { -BigInt::from(magnitude) } else { BigInt::from(magnitude) };
                for &s in &smalls {
                    for bif in [Bif::Add, Bif::Sub, Bif::Mul] {
                        let exact = match bif {
                            Bif::Add => &x + s,
                            Bif::Sub => &x - s,
                            _ => &x * s,
                        };
                        let what = format!("{x} {bif:?} {s}");
                        match big_small(bif, negative, magnitude, s) {
                            Some(value) => {
                                fast += 1;
                                assert_eq!(int(value).map(BigInt::from), Some(exact), "{what}");
                            }
                            None => assert!(
                                exact.magnitude() >= limit.magnitude()
                                    || BigInt::from(magnitude) >= limit,
                                "{what}"
                            ),
                        }
                    }
                }
            }
        }
        assert!(fast > 30_000, "{fast}");
    }

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
}
