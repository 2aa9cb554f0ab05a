//! The numeric fast paths of the interpreter: arithmetic and comparisons
//! on bare words, without building terms or heap sets.
//!
//! Each function answers only the cases it is sure of (small integers,
//! bignums that fit 128 bits, floats mixed with small integers) and returns
//! `None` for the rest, which the full path decides. Tests check on a grid
//! that every fast answer is the full path's.

use std::cmp::Ordering;

use crate::bif::{self, Bif};
use crate::ir::Cmp;
use crate::term::word::layout;
use crate::term::{Heap, Word, compare_int_float_i64};

/// A number read from a word.
#[derive(Clone, Copy, Debug)]
pub(super) enum Number {
    /// A small integer.
    Small(i64),
    /// A bignum that fits 128 bits.
    Wide(i128),
    /// A float.
    Float(f64),
    /// A larger bignum, known only by its sign (it lies beyond every
    /// 128-bit integer).
    Huge { negative: bool },
}

/// What `w` is as a number, reading boxed numbers from whichever of the
/// three spaces (input, literals, scratch heap) it points into; `None` for
/// anything else.
#[inline(always)]
pub(super) fn number_of(w: Word, spaces: [&[Word]; 3]) -> Option<Number> {
    if let Some(i) = w.as_small() {
        return Some(Number::Small(i));
    }
    if !w.is_boxed() {
        return None;
    }
    let bits = w.to_bits();
    let cells = spaces[((bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK).min(2) as usize];
    let at = (bits >> layout::OFFSET_SHIFT) as usize;
    let header = cells.get(at)?.to_bits();
    if header == layout::FLOAT_HEADER {
        return cells.get(at + 1).map(|w| Number::Float(f64::from_bits(w.to_bits())));
    }
    let negative = match header & layout::HEADER_KIND_MASK {
        layout::HEADER_POS_BIG => false,
        layout::HEADER_NEG_BIG => true,
        _ => return None,
    };
    let limbs = cells.get(at + 1..at + 1 + (header >> layout::HEADER_KIND_BITS) as usize)?;
    let magnitude = match limbs {
        [lo] => Some(u128::from(lo.to_bits())),
        [lo, hi] => Some(u128::from(hi.to_bits()) << 64 | u128::from(lo.to_bits())),
        _ => None,
    };
    Some(match magnitude.and_then(|m| i128::try_from(m).ok()) {
        Some(m) => Number::Wide(if negative { -m } else { m }),
        None => Number::Huge { negative },
    })
}

/// A result of [`arith`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Value {
    /// An integer.
    Int(i128),
    /// A (finite) float.
    Float(f64),
}

impl Value {
    /// Places the value: a small word if it fits, else on `heap`.
    #[inline(always)]
    pub(super) fn build(self, heap: &mut Heap) -> Word {
        match self {
            Value::Int(i) => match i64::try_from(i).ok().and_then(Word::small) {
                Some(w) => w,
                None => heap.int128(i),
            },
            Value::Float(f) => heap.float(f),
        }
    }
}

/// `bif` (one with [`bif::has_fast_path`]) on `x` and `y`, or `None` for
/// the full path.
#[inline(always)]
pub(super) fn arith(
    bif: Bif,
    x: Word,
    y: Word,
    number_of: impl Fn(Word) -> Option<Number>,
) -> Option<Value> {
    // Two small integers: the common case, in 64 bits.
    if let (Some(p), Some(q)) = (x.as_small(), y.as_small())
        && bif != Bif::FloatDiv
        && let Some(r) = bif::small_arith(bif, p, q)
    {
        return Some(Value::Int(r.into()));
    }
    let (a, b) = (number_of(x)?, number_of(y)?);
    match (a, b) {
        (Number::Small(_) | Number::Wide(_), Number::Small(_) | Number::Wide(_))
            if bif != Bif::FloatDiv =>
        {
            bif::wide_arith(bif, wide(a)?, wide(b)?).map(Value::Int)
        }
        (Number::Small(_) | Number::Float(_), Number::Small(_) | Number::Float(_)) => {
            bif::float_arith(bif, float(a)?, float(b)?).map(Value::Float)
        }
        // Bignums as floats round as ERTS rounds them: the full path.
        _ => None,
    }
}

fn wide(n: Number) -> Option<i128> {
    match n {
        Number::Small(i) => Some(i.into()),
        Number::Wide(i) => Some(i),
        Number::Float(_) | Number::Huge { .. } => None,
    }
}

fn float(n: Number) -> Option<f64> {
    match n {
        Number::Small(i) => Some(i as f64),
        Number::Float(f) => Some(f),
        Number::Wide(_) | Number::Huge { .. } => None,
    }
}

/// The order of `x` and `y` for the comparisons other than `=:=` and `=/=`
/// (which tell `1` from `1.0`), when both are numbers and it is cheap to
/// know; `None`: ask the full comparison.
#[inline(always)]
pub(super) fn order(
    op: Cmp,
    x: Word,
    y: Word,
    number_of: impl Fn(Word) -> Option<Number>,
) -> Option<Ordering> {
    use Ordering::{Greater, Less};
    if matches!(op, Cmp::ExactEq | Cmp::ExactNe) {
        return None;
    }
    Some(match (number_of(x)?, number_of(y)?) {
        (Number::Small(p), Number::Small(q)) => p.cmp(&q),
        (a @ (Number::Small(_) | Number::Wide(_)), b @ (Number::Small(_) | Number::Wide(_))) => {
            wide(a)?.cmp(&wide(b)?)
        }
        (Number::Small(i), Number::Float(f)) => compare_int_float_i64(i, f),
        (Number::Float(f), Number::Small(i)) => compare_int_float_i64(i, f).reverse(),
        // Floats are never NaN.
        (Number::Float(p), Number::Float(q)) => p.partial_cmp(&q)?,
        (Number::Small(_) | Number::Wide(_), Number::Huge { negative }) => {
            if negative {
                Greater
            } else {
                Less
            }
        }
        (Number::Huge { negative }, Number::Small(_) | Number::Wide(_)) => {
            if negative {
                Less
            } else {
                Greater
            }
        }
        (Number::Float(_), Number::Wide(_) | Number::Huge { .. })
        | (Number::Wide(_) | Number::Huge { .. }, Number::Float(_))
        | (Number::Huge { .. }, Number::Huge { .. }) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bif::{Env, call};
    use crate::syntax::parse_terms_into;

    const NUMBERS: &str = "0. 1. -1. 7. -7. 3. 100. 1152921504606846975. -1152921504606846976. \
        1152921504606846976. -1152921504606846977. 36893488147419103232. -36893488147419103232. \
        170141183460469231731687303715884105727. -170141183460469231731687303715884105727. \
        170141183460469231731687303715884105728. 340282366920938463463374607431768211456. \
        -340282366920938463463374607431768211457. 0.0. -0.0. 1.0. -1.0. 7.5. 1.0e19. -1.0e19. \
        1.7976931348623157e308. 1152921504606846976.0. 9007199254740993. 9007199254740992.0.";

    fn numbers(heap: &mut Heap) -> Vec<Word> {
        let mut words = parse_terms_into(NUMBERS, heap).expect("parses");
        words.extend(parse_terms_into("a. {}. [1].", heap).expect("parses"));
        words
    }

    /// Every fast arithmetic answer is the full path's.
    #[test]
    fn arith_agrees_with_call() {
        let mut heap = Heap::new();
        let words = numbers(&mut heap);
        let bifs = [
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
        let mut fast = 0;
        for bif in bifs {
            assert!(bif::has_fast_path(bif));
            for &x in &words {
                for &y in &words {
                    let cells = heap.words();
                    let Some(value) = arith(bif, x, y, |w| number_of(w, [cells, &[], &[]])) else {
                        continue;
                    };
                    fast += 1;
                    let full = call(bif, &[heap.view(x), heap.view(y)], &Env::default());
                    let same = match (&full, value) {
                        (Ok(bif::Value::Float(f)), Value::Float(g)) => f.to_bits() == g.to_bits(),
                        (Ok(bif::Value::Word(w)), Value::Int(i)) => {
                            w.as_small() == i64::try_from(i).ok()
                        }
                        (Ok(bif::Value::Int128(j)), Value::Int(i)) => *j == i,
                        (Ok(bif::Value::Int(j)), Value::Int(i)) => *j == i.into(),
                        _ => false,
                    };
                    assert!(
                        same,
                        "{bif:?} {} {}: fast {value:?}, full {full:?}",
                        heap.view(x),
                        heap.view(y)
                    );
                }
            }
        }
        assert!(fast > 3000, "{fast}");
    }

    /// The comparison fast path answers as the full term comparison does.
    #[test]
    fn order_agrees_with_the_term_order() {
        let mut heap = Heap::new();
        let words = numbers(&mut heap);
        let ops =
            [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne, Cmp::ExactEq, Cmp::ExactNe];
        let cells = heap.words();
        let mut fast = 0;
        for &x in &words {
            for &y in &words {
                for op in ops {
                    if let Some(ord) = order(op, x, y, |w| number_of(w, [cells, &[], &[]])) {
                        fast += 1;
                        let full = op.holds(heap.view(x), heap.view(y));
                        assert_eq!(
                            op.of_ordering(ord),
                            full,
                            "{} {op:?} {}",
                            heap.view(x),
                            heap.view(y)
                        );
                    }
                }
            }
        }
        assert!(fast > 3000, "{fast}");
    }
}
