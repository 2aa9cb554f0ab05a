//! Erlang numbers: small integers, bignums and floats, and the arithmetic
//! between them, with ERTS's results, limits and quirks.
//!
//! # The tower
//!
//! An operand is a small integer (its value is in the [`Word`]), a bignum
//! (limbs in a heap) or a float. Two integers give an integer of any size;
//! an integer and a float give a float, the integer converted first. Every
//! float result must be finite, else the operation fails with `badarith`.
//!
//! The small-integer paths never touch a heap or allocate: a small word
//! holds 61 bits, so sums, differences and bitwise results of two of them
//! fit an `i64`, and products fit an `i128`. Everything else goes through
//! `num-bigint`.
//!
//! # Where ERTS is not plain mathematics
//!
//! * **Bignum size.** ERTS's largest bignum has [`MAX_BIG_DIGITS`] 64-bit
//!   digits, so integer magnitudes are limited to [`MAX_INT_BITS`] bits:
//!   `1 bsl 4194239` works, `1 bsl 4194240` fails with `system_limit`. Shifts
//!   and products are checked before they are computed, so an over-limit
//!   result is never allocated.
//! * **`band` and `bxor` past the limit return `[]`** (`bxor` only before
//!   OTP 29). ERTS builds their result with `big_norm`, which signals "too
//!   big" by returning `NIL`, and unlike every other operation these did
//!   not check for it (only a debug-build assertion does). So in OTP 27
//!   `(1 bsl 4194240 - 1) bxor -1` is `[]`; OTP 29 fails with
//!   `system_limit` there ([`Change::BxorSizeLimit`]) but still returns `[]`
//!   for `band` (`bor` cannot get past the limit).
//! * **Bignum to float before OTP 29.1.** ERTS's `big_to_double` added the
//!   digits from the most significant one as `d = d * 2^64 + digit`,
//!   rounding at every step (and when converting each digit). The result
//!   can be one ulp away from the correctly rounded one. [`big_to_f64`]
//!   does the same steps for OTP 27 and rounds correctly from OTP 29 on
//!   ([`Change::RoundedBignumFloats`]). In both, a bignum from half an ulp
//!   over the largest float up (`1 bsl 1024 - 1 bsl 970`) overflows.
//! * **ERTS's small integers have 60 bits, ours 61.** Results do not depend
//!   on it (comparisons and arithmetic are exact), except where a BIF
//!   insists on a small argument: see [`is_erts_small`].

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::FromPrimitive;

use super::{BifError, Value};
use crate::release::{Change, Release};
use crate::term::{Big, Kind, TermRef, Word};

/// The most 64-bit digits an ERTS bignum has (`BIG_ARITY_MAX` on 64-bit).
pub(crate) const MAX_BIG_DIGITS: u64 = (1 << 16) - 1;

/// The most bits the magnitude of an integer may have: larger results are a
/// `system_limit` error.
pub(crate) const MAX_INT_BITS: u64 = 64 * MAX_BIG_DIGITS;

/// Is `value` a small integer in ERTS (60 bits on a 64-bit machine)?
///
/// `is_record/3` fails on a size that is a bignum in ERTS, and
/// `2^59 = 576460752303423488` is one there while it is a small word here.
pub(crate) fn is_erts_small(value: i64) -> bool {
    const ERTS_MAX_SMALL: i64 = (1 << 59) - 1;
    (-ERTS_MAX_SMALL - 1..=ERTS_MAX_SMALL).contains(&value)
}

/// An integer operand.
#[derive(Clone, Copy)]
enum Int<'a> {
    Small(i64),
    Big(Big<'a>),
}

/// A number operand.
#[derive(Clone, Copy)]
enum Num<'a> {
    Int(Int<'a>),
    Float(f64),
}

/// `t` as a number, or `None`.
#[inline]
fn num(t: TermRef<'_>) -> Option<Num<'_>> {
    if let Some(i) = t.word().as_small() {
        return Some(Num::Int(Int::Small(i)));
    }
    if !t.word().is_boxed() {
        return None;
    }
    match t.kind() {
        Kind::Big(b) => Some(Num::Int(Int::Big(b))),
        Kind::Float(f) => Some(Num::Float(f)),
        _ => None,
    }
}

/// `t` as an integer, or `None`.
#[inline]
fn int_arg(t: TermRef<'_>) -> Option<Int<'_>> {
    match num(t)? {
        Num::Int(i) => Some(i),
        Num::Float(_) => None,
    }
}

// ---- Building results ----------------------------------------------------------

/// The integer `i`: a small word when it fits.
#[inline]
pub(crate) fn int(i: i64) -> Value {
    match Word::small(i) {
        Some(w) => Value::Word(w),
        None => Value::Int(BigInt::from(i)),
    }
}

/// The integer `i` (unsigned).
#[inline]
pub(crate) fn uint(i: u64) -> Value {
    match i64::try_from(i) {
        Ok(i) => int(i),
        Err(_) => Value::Int(BigInt::from(i)),
    }
}

#[inline]
fn int128(i: i128) -> Value {
    match i64::try_from(i) {
        Ok(i) => int(i),
        Err(_) => Value::Int128(i),
    }
}

/// An integer operand that fits 128 bits, read without allocating.
#[inline]
fn to_i128(n: Int<'_>) -> Option<i128> {
    match n {
        Int::Small(i) => Some(i.into()),
        Int::Big(b) => {
            let mut limbs = b.limbs();
            if limbs.len() > 2 {
                return None;
            }
            let lo = u128::from(limbs.next().unwrap_or(0));
            let hi = u128::from(limbs.next().unwrap_or(0));
            let magnitude = i128::try_from((hi << 64) | lo).ok()?;
            Some(if b.is_negative() { -magnitude } else { magnitude })
        }
    }
}

/// `op` on two integers that fit 128 bits, when the result does too (the
/// fast path of bignum arithmetic: no allocation).
#[inline]
fn int128_op(x: Int<'_>, y: Int<'_>, op: fn(i128, i128) -> Option<i128>) -> Option<Value> {
    Some(int128(op(to_i128(x)?, to_i128(y)?)?))
}

/// `b` as a small word if it fits, else as a bignum value (unchecked size).
fn normalize(b: BigInt) -> Value {
    match i64::try_from(&b) {
        Ok(i) => int(i),
        Err(_) => Value::Int(b),
    }
}

/// A new integer result: `system_limit` if ERTS could not hold it.
fn checked(b: BigInt) -> Result<Value, BifError> {
    if b.bits() > MAX_INT_BITS { Err(BifError::SystemLimit) } else { Ok(normalize(b)) }
}

/// A float result: `badarith` unless finite.
#[inline]
fn float(f: f64) -> Result<Value, BifError> {
    if f.is_finite() { Ok(Value::Float(f)) } else { Err(BifError::Badarith) }
}

// ---- Conversions -----------------------------------------------------------------

/// The value of a bignum.
fn big_value(b: Big<'_>) -> BigInt {
    // `BigUint::new` takes 32-bit digits: splitting the limbs is one pass and
    // one allocation, where `Big::to_bigint` goes through a byte vector.
    let mut digits = Vec::with_capacity(2 * b.limbs().len());
    for limb in b.limbs() {
        digits.push(limb as u32);
        digits.push((limb >> 32) as u32);
    }
    let sign = if b.is_negative() { Sign::Minus } else { Sign::Plus };
    BigInt::from_biguint(sign, BigUint::new(digits))
}

/// The value of an integer operand.
fn to_big(n: Int<'_>) -> BigInt {
    match n {
        Int::Small(i) => BigInt::from(i),
        Int::Big(b) => big_value(b),
    }
}

/// Number of bits in the magnitude of an integer operand (0 for zero).
fn int_bits(n: Int<'_>) -> u64 {
    match n {
        Int::Small(i) => u64::from(64 - i.unsigned_abs().leading_zeros()),
        Int::Big(b) => {
            let limbs = b.limbs();
            let len = limbs.len() as u64;
            match limbs.last() {
                Some(top) if top != 0 => (len - 1) * 64 + u64::from(64 - top.leading_zeros()),
                // Bignums are normalised (no zero top limb); fall back to
                // counting for anything else.
                _ => big_value(b).bits(),
            }
        }
    }
}

fn is_zero(n: Int<'_>) -> bool {
    match n {
        Int::Small(i) => i == 0,
        Int::Big(b) => b.limbs().all(|l| l == 0),
    }
}

fn is_negative(n: Int<'_>) -> bool {
    match n {
        Int::Small(i) => i < 0,
        Int::Big(b) => b.is_negative(),
    }
}

/// A bignum as ERTS's `big_to_double` of `release` converts it, or `None`
/// where that overflows. See the [module documentation](self) for why this
/// is not always `BigInt::to_f64`.
pub(crate) fn big_to_f64(b: Big<'_>, release: Release) -> Option<f64> {
    if release.has(Change::RoundedBignumFloats) {
        // Correctly rounded (num-bigint rounds half to even with a sticky
        // bit); past the largest float it is an infinity.
        let d = num_traits::ToPrimitive::to_f64(&big_value(b))?;
        return d.is_finite().then_some(d);
    }
    const DIGIT_BASE: f64 = 18_446_744_073_709_551_616.0; // 2^64
    let mut d = 0.0f64;
    for digit in b.limbs().rev() {
        // Two roundings, as in C: the digit to a double, then the sum.
        d = d * DIGIT_BASE + digit as f64;
        if !d.is_finite() {
            return None;
        }
    }
    Some(if b.is_negative() { -d } else { d })
}

/// An operand as a float operand of arithmetic; `badarith` if it is a
/// bignum too large to convert.
#[inline]
fn to_f64(n: Num<'_>, release: Release) -> Result<f64, BifError> {
    match n {
        Num::Int(Int::Small(i)) => Ok(i as f64),
        Num::Int(Int::Big(b)) => big_to_f64(b, release).ok_or(BifError::Badarith),
        Num::Float(f) => Ok(f),
    }
}

/// An integral float as an integer (ERTS's `double_to_integer`, exact).
fn float_to_int(f: f64) -> Result<Value, BifError> {
    // Every float of magnitude below 2^63 converts to an i64 exactly.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.abs() < LIMIT {
        return Ok(int(f as i64));
    }
    // Finite floats always convert; a NaN or infinity cannot be a term.
    BigInt::from_f64(f).map(normalize).ok_or(BifError::Badarg)
}

// ---- Arithmetic ----------------------------------------------------------------------

/// The shared shape of `+`, `-` and `*`: integers exactly, anything with a
/// float in floats.
fn mixed(
    a: TermRef<'_>,
    b: TermRef<'_>,
    release: Release,
    ints: impl FnOnce(Int<'_>, Int<'_>) -> Result<Value, BifError>,
    floats: impl FnOnce(f64, f64) -> f64,
) -> Result<Value, BifError> {
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Err(BifError::Badarith);
    };
    match (x, y) {
        (Num::Int(x), Num::Int(y)) => ints(x, y),
        _ => float(floats(to_f64(x, release)?, to_f64(y, release)?)),
    }
}

/// `'+'/2`.
pub(crate) fn add(a: TermRef<'_>, b: TermRef<'_>, release: Release) -> Result<Value, BifError> {
    if let (Some(x), Some(y)) = (a.word().as_small(), b.word().as_small()) {
        // Two 61-bit values: the sum fits an i64.
        return Ok(int(x + y));
    }
    mixed(
        a,
        b,
        release,
        |x, y| {
            int128_op(x, y, i128::checked_add).map_or_else(|| checked(to_big(x) + to_big(y)), Ok)
        },
        |x, y| x + y,
    )
}

/// `'-'/2`.
pub(crate) fn sub(a: TermRef<'_>, b: TermRef<'_>, release: Release) -> Result<Value, BifError> {
    if let (Some(x), Some(y)) = (a.word().as_small(), b.word().as_small()) {
        return Ok(int(x - y));
    }
    mixed(
        a,
        b,
        release,
        |x, y| {
            int128_op(x, y, i128::checked_sub).map_or_else(|| checked(to_big(x) - to_big(y)), Ok)
        },
        |x, y| x - y,
    )
}

/// `'*'/2`.
pub(crate) fn mul(a: TermRef<'_>, b: TermRef<'_>, release: Release) -> Result<Value, BifError> {
    if let (Some(x), Some(y)) = (a.word().as_small(), b.word().as_small()) {
        return Ok(int128(i128::from(x) * i128::from(y)));
    }
    mixed(
        a,
        b,
        release,
        |x, y| {
            if is_zero(x) || is_zero(y) {
                return Ok(int(0));
            }
            if let Some(product) = int128_op(x, y, i128::checked_mul) {
                return Ok(product);
            }
            // A product has at least bits(x) + bits(y) - 1 bits: refuse
            // before multiplying numbers whose product cannot be held.
            if int_bits(x) + int_bits(y) - 1 > MAX_INT_BITS {
                return Err(BifError::SystemLimit);
            }
            checked(to_big(x) * to_big(y))
        },
        |x, y| x * y,
    )
}

/// `'/'/2`: always a float.
pub(crate) fn float_div(
    a: TermRef<'_>,
    b: TermRef<'_>,
    release: Release,
) -> Result<Value, BifError> {
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Err(BifError::Badarith);
    };
    // Division by zero gives an infinity or NaN, which `float` refuses.
    float(to_f64(x, release)? / to_f64(y, release)?)
}

/// The shared shape of `div` and `rem`: integers only, truncating, and a
/// zero divisor is `badarith`.
fn int_div_rem(
    a: TermRef<'_>,
    b: TermRef<'_>,
    small: fn(i64, i64) -> Option<i64>,
    big: fn(BigInt, BigInt) -> BigInt,
) -> Result<Value, BifError> {
    let (Some(x), Some(y)) = (int_arg(a), int_arg(b)) else {
        return Err(BifError::Badarith);
    };
    if is_zero(y) {
        return Err(BifError::Badarith);
    }
    match (x, y) {
        // With 61-bit operands only a zero divisor makes these `None`, and
        // that was refused above.
        (Int::Small(x), Int::Small(y)) => small(x, y).map(int).ok_or(BifError::Badarith),
        _ => checked(big(to_big(x), to_big(y))),
    }
}

/// `'div'/2`.
pub(crate) fn int_div(a: TermRef<'_>, b: TermRef<'_>) -> Result<Value, BifError> {
    int_div_rem(a, b, i64::checked_div, |x, y| x / y)
}

/// `'rem'/2`: the sign of the dividend.
pub(crate) fn rem(a: TermRef<'_>, b: TermRef<'_>) -> Result<Value, BifError> {
    int_div_rem(a, b, i64::checked_rem, |x, y| x % y)
}

/// What a bitwise function gives for a result over the size limit.
#[derive(Clone, Copy)]
enum OverLimit {
    /// `big_norm`'s marker, `[]` (see the module documentation).
    Nil,
    /// A `system_limit` failure.
    SystemLimit,
}

/// The shared shape of `band`, `bor` and `bxor` (two's complement).
fn bitwise(
    a: TermRef<'_>,
    b: TermRef<'_>,
    over_limit: OverLimit,
    small: fn(i64, i64) -> i64,
    big: fn(BigInt, BigInt) -> BigInt,
) -> Result<Value, BifError> {
    if let (Some(x), Some(y)) = (a.word().as_small(), b.word().as_small()) {
        return Ok(int(small(x, y)));
    }
    let (Some(x), Some(y)) = (int_arg(a), int_arg(b)) else {
        return Err(BifError::Badarith);
    };
    let r = big(to_big(x), to_big(y));
    if r.bits() > MAX_INT_BITS {
        return match over_limit {
            OverLimit::Nil => Ok(Value::Word(Word::NIL)),
            OverLimit::SystemLimit => Err(BifError::SystemLimit),
        };
    }
    Ok(normalize(r))
}

/// `'band'/2`.
pub(crate) fn band(a: TermRef<'_>, b: TermRef<'_>) -> Result<Value, BifError> {
    bitwise(a, b, OverLimit::Nil, |x, y| x & y, |x, y| x & y)
}

/// `'bor'/2`.
pub(crate) fn bor(a: TermRef<'_>, b: TermRef<'_>) -> Result<Value, BifError> {
    bitwise(a, b, OverLimit::Nil, |x, y| x | y, |x, y| x | y)
}

/// `'bxor'/2`.
pub(crate) fn bxor(a: TermRef<'_>, b: TermRef<'_>, release: Release) -> Result<Value, BifError> {
    let over_limit =
        if release.has(Change::BxorSizeLimit) { OverLimit::SystemLimit } else { OverLimit::Nil };
    bitwise(a, b, over_limit, |x, y| x ^ y, |x, y| x ^ y)
}

/// `'bnot'/1`.
pub(crate) fn bnot(a: TermRef<'_>) -> Result<Value, BifError> {
    match int_arg(a) {
        Some(Int::Small(x)) => Ok(int(!x)),
        Some(x) => checked(-to_big(x) - 1),
        None => Err(BifError::Badarith),
    }
}

/// A shift count: how far left (negative: right).
enum Shift {
    /// A count that fits an `i64`.
    By(i64),
    /// A bignum count, positive: every non-zero result is too large.
    HugeLeft,
    /// A bignum count, negative: every result is 0 or -1.
    HugeRight,
}

/// `'bsl'/2` (`right` false) and `'bsr'/2` (`right` true): `a * 2^n`
/// rounded down, for any integer `n`.
pub(crate) fn shift(a: TermRef<'_>, b: TermRef<'_>, right: bool) -> Result<Value, BifError> {
    let (Some(x), Some(n)) = (int_arg(a), int_arg(b)) else {
        return Err(BifError::Badarith);
    };
    let count = match n {
        // Small counts have 61 bits, so negating cannot overflow.
        Int::Small(n) => Shift::By(if right { -n } else { n }),
        Int::Big(n) if n.is_negative() != right => Shift::HugeRight,
        Int::Big(_) => Shift::HugeLeft,
    };
    if let (Int::Small(x), Shift::By(n)) = (x, &count) {
        let n = *n;
        if n <= 0 {
            // An arithmetic shift rounds down, as Erlang does.
            return Ok(int(x >> n.unsigned_abs().min(63)));
        }
        if n < 64 {
            // |x| < 2^60 and n < 64, so the shifted value fits an i128.
            return Ok(int128(i128::from(x) << n));
        }
    }
    if is_zero(x) {
        return Ok(int(0));
    }
    let negative = is_negative(x);
    let bits = int_bits(x);
    match count {
        Shift::HugeLeft => Err(BifError::SystemLimit),
        Shift::HugeRight => Ok(int(if negative { -1 } else { 0 })),
        Shift::By(n) if n > 0 => {
            // The result has exactly bits + n bits; refuse before shifting.
            let n = n.unsigned_abs();
            if bits.saturating_add(n) > MAX_INT_BITS {
                return Err(BifError::SystemLimit);
            }
            // n <= MAX_INT_BITS, so it fits a usize.
            checked(to_big(x) << n as usize)
        }
        Shift::By(n) => {
            let n = n.unsigned_abs();
            if n >= bits {
                return Ok(int(if negative { -1 } else { 0 }));
            }
            // n < bits, and bits fits in memory, so n fits a usize.
            Ok(normalize(to_big(x) >> n as usize))
        }
    }
}

/// `'-'/1`.
pub(crate) fn neg(a: TermRef<'_>) -> Result<Value, BifError> {
    match num(a) {
        // A 61-bit value negates within an i64.
        Some(Num::Int(Int::Small(x))) => Ok(int(-x)),
        Some(Num::Int(x)) => checked(-to_big(x)),
        Some(Num::Float(f)) => Ok(Value::Float(-f)),
        None => Err(BifError::Badarith),
    }
}

/// `'+'/1`: any number, unchanged.
pub(crate) fn plus(a: TermRef<'_>) -> Result<Value, BifError> {
    match num(a) {
        Some(_) => Ok(Value::Word(a.word())),
        None => Err(BifError::Badarith),
    }
}

/// `abs/1`.
pub(crate) fn abs(a: TermRef<'_>) -> Result<Value, BifError> {
    match num(a) {
        Some(Num::Int(Int::Small(x))) => Ok(int(x.abs())),
        Some(Num::Int(Int::Big(b))) if !b.is_negative() => Ok(Value::Word(a.word())),
        Some(Num::Int(x)) => checked(-to_big(x)),
        // ERTS takes fabs of anything `<= 0.0`, which turns -0.0 into 0.0.
        Some(Num::Float(f)) if f <= 0.0 => Ok(Value::Float(f.abs())),
        Some(Num::Float(_)) => Ok(Value::Word(a.word())),
        None => Err(BifError::Badarg),
    }
}

/// `float/1`: `badarg` for a bignum too large for a float.
pub(crate) fn to_float(a: TermRef<'_>, release: Release) -> Result<Value, BifError> {
    match num(a) {
        Some(Num::Int(Int::Small(x))) => Ok(Value::Float(x as f64)),
        Some(Num::Int(Int::Big(b))) => {
            big_to_f64(b, release).map(Value::Float).ok_or(BifError::Badarg)
        }
        Some(Num::Float(_)) => Ok(Value::Word(a.word())),
        None => Err(BifError::Badarg),
    }
}

/// `trunc/1`, `round/1`, `ceil/1` and `floor/1`: an integer unchanged, a
/// float through `op` to the integer it is.
pub(crate) fn to_int(a: TermRef<'_>, op: fn(f64) -> f64) -> Result<Value, BifError> {
    match num(a) {
        Some(Num::Float(f)) => float_to_int(op(f)),
        Some(Num::Int(_)) => Ok(Value::Word(a.word())),
        None => Err(BifError::Badarg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Heap;

    #[track_caller]
    fn check_to_f64(release: Release, value: BigInt, expected: Option<f64>) {
        let mut heap = Heap::new();
        let w = heap.bigint(&value);
        let Kind::Big(b) = heap.view(w).kind() else { panic!("{value} is not a bignum") };
        assert_eq!(big_to_f64(b, release), expected, "{value} in {release}");
    }

    #[test]
    fn big_to_f64_rounds_like_erts() {
        use Release::{Otp27, Otp29};
        let p2 = |n: u32| BigInt::from(1) << n;
        // Correctly rounded this is 2^116 + 2^64; OTP 27 rounds the low
        // digit up to 2^63 first, and then the tie goes to even.
        check_to_f64(Otp27, p2(116) + p2(64) + p2(63) - 1, Some(8.307674973655728e34));
        check_to_f64(Otp29, p2(116) + p2(64) + p2(63) - 1, Some(8.307674973655726e34));
        for release in Release::ALL {
            check_to_f64(release, p2(100), Some(1.2676506002282294e30));
            check_to_f64(release, -p2(100), Some(-1.2676506002282294e30));
            check_to_f64(release, p2(1023), Some(8.98846567431158e307));
            check_to_f64(release, p2(1024), None);
        }
        for release in Release::ALL {
            // The largest float itself, and half an ulp over it (a tie,
            // rounded to the even infinity).
            check_to_f64(release, p2(1024) - p2(971), Some(f64::MAX));
            check_to_f64(release, p2(1024) - p2(970), None);
        }
    }

    #[test]
    fn erts_small_range() {
        for (value, small) in [
            (0, true),
            ((1 << 59) - 1, true),
            (1 << 59, false),
            (-(1 << 59), true),
            (-(1 << 59) - 1, false),
        ] {
            assert_eq!(is_erts_small(value), small, "{value}");
        }
    }
}
