//! Number literals as the grammar sees them, before they become terms.

use num_bigint::BigInt;

use super::bits::SegValue;
use super::build::Builder;
use super::token::IntLit;

/// An integer or float literal (a character literal is an integer).
pub(crate) enum NumLit {
    Int(IntLit),
    Float(f64),
}

impl NumLit {
    /// Pushes the number, negated if `negate`, onto the builder.
    pub(crate) fn push(self, b: &mut Builder<'_>, negate: bool, l: usize, r: usize) {
        match self {
            NumLit::Int(i) => b.push_int(i, negate, l, r),
            NumLit::Float(f) => b.push_float(if negate { -f } else { f }, l, r),
        }
    }

    /// The number as the value of a binary segment.
    pub(crate) fn into_segment(self, negate: bool) -> SegValue {
        match self {
            NumLit::Int(IntLit::Small(v)) => {
                let v = BigInt::from(v);
                SegValue::Int(if negate { -v } else { v })
            }
            NumLit::Int(IntLit::Big(v)) => SegValue::Int(if negate { -v } else { v }),
            NumLit::Float(f) => SegValue::Float(if negate { -f } else { f }),
        }
    }
}
