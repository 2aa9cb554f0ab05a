//! The numeric fast paths of the interpreter: arithmetic and comparisons
//! on bare words, without building terms or heap sets.
//!
//! What a number is and what the fast path computes of it is the shared
//! number path ([`crate::number`], which the JIT's lean helpers use too);
//! here is only how the interpreter finds a number's words (in whichever
//! of its three heap slices a word points into) and its shortcut for two
//! small integers. Each function answers only the cases it is sure of and
//! returns `None` for the rest, which the full path decides. Tests check on
//! a grid that every fast answer is the full path's.

use std::cmp::Ordering;

use crate::bif::{self, Bif};
use crate::ir::Cmp;
use crate::number::{self, Number, Value};
use crate::term::Word;
use crate::term::word::layout;

/// What `w` is as a number, reading boxed numbers from whichever of the
/// three spaces (input, literals, scratch heap) it points into; `None` for
/// anything else.
#[inline(always)]
pub(super) fn number_of(w: Word, spaces: [&[Word]; 3]) -> Option<Number> {
    Number::of(w, |w| {
        let bits = w.to_bits();
        let cells = spaces[((bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK).min(2) as usize];
        cells.get((bits >> layout::OFFSET_SHIFT) as usize..).unwrap_or(&[])
    })
}

/// `bif` (one with [`bif::has_fast_path`]) on `x` and `y`, numbers read
/// from `spaces` (see [`number_of`]), or `None` for the full path.
#[inline(always)]
pub(super) fn arith(bif: Bif, x: Word, y: Word, spaces: [&[Word]; 3]) -> Option<Value> {
    // Two small integers: the common case, in 64 bits.
    if let (Some(p), Some(q)) = (x.as_small(), y.as_small())
        && bif != Bif::FloatDiv
        && let Some(r) = bif::small_arith(bif, p, q)
    {
        return Some(Value::Int(r.into()));
    }
    number::arith(bif, number_of(x, spaces)?, number_of(y, spaces)?)
}

/// The order of `x` and `y` for the comparisons other than `=:=` and `=/=`
/// (which tell `1` from `1.0`), when both are numbers and it is cheap to
/// know (numbers read from `spaces`, see [`number_of`]); `None`: ask the
/// full comparison.
#[inline(always)]
pub(super) fn order(op: Cmp, x: Word, y: Word, spaces: [&[Word]; 3]) -> Option<Ordering> {
    if matches!(op, Cmp::ExactEq | Cmp::ExactNe) {
        return None;
    }
    number::order(number_of(x, spaces)?, number_of(y, spaces)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bif::{Env, call};
    use crate::syntax::parse_terms_into;
    use crate::term::Heap;

    const NUMBERS: &str = "0. 1. -1. 7. -7. 3. 100. 1152921504606846975. -1152921504606846976. \
        1152921504606846976. -1152921504606846977. 36893488147419103232. -36893488147419103232. \
        170141183460469231731687303715884105727. -170141183460469231731687303715884105727. \
        170141183460469231731687303715884105728. 340282366920938463463374607431768211456. \
        -340282366920938463463374607431768211457. 0.0. -0.0. 1.0. -1.0. 7.5. 1.0e19. -1.0e19. \
        1.7976931348623157e308. 1152921504606846976.0. 9007199254740993. 9007199254740992.0. \
        18446744073709551615. 18446744073709551616. -18446744073709551616. \
        -170141183460469231731687303715884105728. 340282366920938463463374607431768211455. \
        -340282366920938463463374607431768211455.";

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
                    let Some(value) = arith(bif, x, y, [cells, &[], &[]]) else {
                        continue;
                    };
                    fast += 1;
                    let full = call(bif, &[heap.view(x), heap.view(y)], &Env::default());
                    let int = match value {
                        Value::Int(i) => Some(i),
                        Value::Big { negative, magnitude } => {
                            let m = i128::try_from(magnitude).expect("below 2^127");
                            Some(if negative { -m } else { m })
                        }
                        Value::Float(_) => None,
                    };
                    let same = match (&full, value, int) {
                        (Ok(bif::Value::Float(f)), Value::Float(g), _) => {
                            f.to_bits() == g.to_bits()
                        }
                        (Ok(bif::Value::Word(w)), _, Some(i)) => {
                            w.as_small() == i64::try_from(i).ok()
                        }
                        (Ok(bif::Value::Int128(j)), _, Some(i)) => *j == i,
                        (Ok(bif::Value::Int(j)), _, Some(i)) => *j == i.into(),
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
                    if let Some(ord) = order(op, x, y, [cells, &[], &[]]) {
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
