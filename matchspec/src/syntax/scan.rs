//! Number literals as `erl_scan` of each release reads them.
//!
//! The logos lexer only finds a number's first digit; [`scan_number`]
//! reads the rest by hand, since where a number ends depends on the
//! release ([`Change::NumberSyntax`]):
//!
//! * OTP 27 stops at the first character that cannot go on the number, so
//!   `1e5` is the integer `1` and the atom `e5`, `16#ffz` is `255` and `z`,
//!   and `4div 2` is an expression.
//! * OTP 29 (EEP 75) reads based floats (`16#1.8`, `2#1.1#e2`, `2#.1`) and
//!   rejects a number that runs into a name character (`a`-`z`, `A`-`Z`,
//!   `0`-`9`, `_`, `@`; `erl_scan`'s test of Latin-1 letters there is
//!   empty): `1e5`, `1_`, `1.5a` and `1.e5` are errors.
//!
//! A based float of base 10 is read as a decimal float; of any other base
//! its value is `N * B^(E - D)` in floats (`N` the integer of its digits,
//! `D` the number of its fraction digits less trailing zeros, `E` its
//! exponent), computed as `erl_scan` computes it, which is not always
//! correctly rounded. Where `erl_scan` itself fails (`16#1.8#e`, no
//! exponent digits; `2#1.0#e1024`, overflow), msc reports a syntax error.

use std::borrow::Cow;

use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::error::ParseErrorKind;
use super::token::IntLit;
use crate::release::{Change, Release};

/// A number literal's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Number {
    Int(IntLit),
    Float(f64),
}

/// The number at the start of `text` (which starts with a digit), read as
/// `release` reads it, and how many bytes it takes (on an error, the
/// number and any name characters it runs into).
pub(crate) fn scan_number(text: &str, release: Release) -> (Result<Number, ParseErrorKind>, usize) {
    let b = text.as_bytes();
    let strict = release.has(Change::NumberSyntax);
    let p = digits(b, 0, 10);
    match b.get(p) {
        Some(b'.') if b.get(p + 1).is_some_and(u8::is_ascii_digit) => fraction(text, p, strict),
        Some(b'.') if strict && b.get(p + 1).is_some_and(|&c| is_name_char(c)) => {
            run_on(text, p, true)
        }
        Some(b'#') => based(text, p, strict),
        Some(&c) if strict && is_name_char(c) => run_on(text, p, false),
        _ => (parse_digits(&text[..p], 10), p),
    }
}

/// Can `c` go on a name (OTP 29's test after a number)?
fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'@'
}

/// The value of `c` as a digit of `base`.
fn digit_value(c: u8, base: u32) -> Option<u32> {
    char::from(c).to_digit(base)
}

/// Where the digits of `base` from `from` end, with `_` allowed between two
/// digits.
fn digits(b: &[u8], from: usize, base: u32) -> usize {
    let is_digit = |at: usize| b.get(at).is_some_and(|&c| digit_value(c, base).is_some());
    let mut p = from;
    loop {
        if is_digit(p) {
            p += 1;
        } else if b.get(p) == Some(&b'_') && p > from && is_digit(p - 1) && is_digit(p + 1) {
            p += 2;
        } else {
            return p;
        }
    }
}

/// A number that runs into a name character at `at` (after a `.` there if
/// `float` and `text[at]` is one): an error spanning the name.
fn run_on(text: &str, at: usize, float: bool) -> (Result<Number, ParseErrorKind>, usize) {
    let b = text.as_bytes();
    let from = if b.get(at) == Some(&b'.') { at + 1 } else { at };
    let end = from + b[from..].iter().take_while(|&&c| is_name_char(c)).count();
    let into = text[at..end].to_owned();
    (Err(ParseErrorKind::RunOnNumber { float, into }), end)
}

/// A decimal float whose `.` is at `dot` (a digit follows it).
fn fraction(text: &str, dot: usize, strict: bool) -> (Result<Number, ParseErrorKind>, usize) {
    let b = text.as_bytes();
    let end = digits(b, dot + 1, 10);
    match b.get(end) {
        Some(b'e' | b'E') => {
            let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
            let from = end + 1 + sign;
            let after = digits(b, from, 10);
            match b.get(after) {
                Some(&c) if strict && is_name_char(c) => run_on(text, after, true),
                _ if after == from => (Err(ParseErrorKind::BadFloat), after),
                _ => (decimal_float(&text[..after]), after),
            }
        }
        Some(&c) if strict && is_name_char(c) => run_on(text, end, true),
        _ => (decimal_float(&text[..end]), end),
    }
}

/// A decimal float's value (`_` separators dropped).
fn decimal_float(text: &str) -> Result<Number, ParseErrorKind> {
    match without_separators(text).parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Number::Float(v)),
        _ => Err(ParseErrorKind::FloatOutOfRange),
    }
}

fn without_separators(text: &str) -> Cow<'_, str> {
    if text.contains('_') { Cow::Owned(text.replace('_', "")) } else { Cow::Borrowed(text) }
}

/// A based number whose `#` is at `hash`.
fn based(text: &str, hash: usize, strict: bool) -> (Result<Number, ParseErrorKind>, usize) {
    let b = text.as_bytes();
    let base = match without_separators(&text[..hash]).parse::<u32>() {
        Ok(base) if (2..=36).contains(&base) => base,
        Ok(base) => return (Err(ParseErrorKind::BadBase(base)), name_end(b, hash + 1)),
        Err(_) => return (Err(ParseErrorKind::BadBase(u32::MAX)), name_end(b, hash + 1)),
    };
    let start = hash + 1;
    let end = digits(b, start, base);
    if strict {
        match b.get(end) {
            Some(b'.') if b.get(end + 1).is_some_and(|&c| digit_value(c, base).is_some()) => {
                return based_fraction(text, base, start, end);
            }
            Some(b'.') if b.get(end + 1).is_some_and(|&c| is_name_char(c)) => {
                return run_on(text, end, true);
            }
            Some(&c) if is_name_char(c) => return run_on(text, end, false),
            _ => {}
        }
    }
    if end == start {
        return (Err(ParseErrorKind::MissingDigits), end);
    }
    (parse_digits(&text[start..end], base), end)
}

/// The end of the name characters from `at`.
fn name_end(b: &[u8], at: usize) -> usize {
    at + b[at..].iter().take_while(|&&c| is_name_char(c)).count()
}

/// OTP 29's based float: digits from `start`, its `.` at `dot`.
fn based_fraction(
    text: &str,
    base: u32,
    start: usize,
    dot: usize,
) -> (Result<Number, ParseErrorKind>, usize) {
    let b = text.as_bytes();
    let end = digits(b, dot + 1, base);
    let (exponent, after) = match b.get(end) {
        Some(b'#') if matches!(b.get(end + 1), Some(b'e' | b'E')) => {
            let sign = usize::from(matches!(b.get(end + 2), Some(b'+' | b'-')));
            let after = digits(b, end + 2 + sign, 10);
            (Some(&text[end + 2..after]), after)
        }
        Some(&c) if is_name_char(c) => return run_on(text, end, true),
        _ => (None, end),
    };
    let (int, frac) = (&text[start..dot], &text[dot + 1..end]);
    (based_float(base, int, frac, exponent), after)
}

/// The value of a based float: `int.frac`, exponent `exponent` (a sign and
/// decimal digits, perhaps none).
fn based_float(
    base: u32,
    int: &str,
    frac: &str,
    exponent: Option<&str>,
) -> Result<Number, ParseErrorKind> {
    let (int, frac) = (without_separators(int), without_separators(frac));
    if base == 10 {
        // Read as the decimal float `int.frac[eExp]`, which needs digits
        // before the `.` and in the exponent.
        let has_digits = |s: &str| s.bytes().any(|c| c.is_ascii_digit());
        if int.is_empty() || exponent.is_some_and(|e| !has_digits(e)) {
            return Err(ParseErrorKind::BadFloat);
        }
        let exponent = exponent.map(|e| format!("e{}", without_separators(e))).unwrap_or_default();
        return decimal_float(&format!("{int}.{frac}{exponent}"));
    }
    let exponent = match exponent {
        None => BigInt::from(0),
        Some(e) => without_separators(e)
            .parse::<BigInt>()
            .map_err(|_| ParseErrorKind::MissingExponentDigits)?,
    };
    // Trailing zeros of the fraction (but its first digit) and leading
    // zeros of the integer part (but its last) do not count.
    let frac = match frac.trim_end_matches('0') {
        "" => &frac[..1],
        trimmed => trimmed,
    };
    let int = match int.trim_start_matches('0') {
        "" => &int[int.len().saturating_sub(1)..],
        trimmed => trimmed,
    };
    let n = BigInt::parse_bytes(format!("{int}{frac}").as_bytes(), base)
        .ok_or(ParseErrorKind::BadDigit)?;
    let power = (exponent - BigInt::from(frac.len())).to_f64().unwrap_or(f64::INFINITY);
    let scale = f64::from(base).powf(power);
    let n = n.to_f64().unwrap_or(f64::INFINITY);
    let value = n * scale;
    if power.is_finite() && scale.is_finite() && n.is_finite() && value.is_finite() {
        Ok(Number::Float(value))
    } else {
        Err(ParseErrorKind::FloatOutOfRange)
    }
}

/// An integer of `base` from its digits (with `_` separators).
pub(crate) fn parse_digits(text: &str, base: u32) -> Result<Number, ParseErrorKind> {
    let digits = without_separators(text);
    if let Ok(v) = i64::from_str_radix(&digits, base) {
        return Ok(Number::Int(IntLit::Small(v)));
    }
    BigInt::parse_bytes(digits.as_bytes(), base)
        .map(|v| Number::Int(IntLit::Big(v)))
        .ok_or(ParseErrorKind::BadDigit)
}
