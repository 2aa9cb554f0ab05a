//! The implementations of the guard functions.
//!
//! Each arm of [`call`] is the ERTS function of the same name in
//! `guard_tab` (`erl_db_util.c`), with the same results and the same
//! failures. Arithmetic lives in [`num`](super::num); everything else is
//! here. Nothing walks a term recursively: `length/1` is a loop, the
//! comparisons use the iterative term order of [`crate::term`].

use std::cmp::Ordering;

use super::num;
use super::{Bif, BifError, Env, Value};
use crate::release::Change;
use crate::term::{Atom, Kind, TermRef, Word, compare_int_float_i64};

/// Evaluates `bif` on `args` (exactly `bif.arity()` of them; any other
/// number is `badarg`).
///
/// Results that already exist (an argument, part of one, an immediate) come
/// back as [`Value::Word`], valid wherever the arguments are; new numbers
/// and binaries come back as values for the caller to build.
///
/// `get_tcw/0` returns `env.tcw`; `set_tcw/1` and `set_tcw_fake/1` check
/// their argument and return `env.tcw` (the old value): storing the new one
/// is the caller's job, since only `set_tcw` changes anything.
///
/// ```
/// use matchspec::bif::{self, Bif, Env, Value};
/// use matchspec::term::{Term, Word};
///
/// let (a, b) = (Term::from(40), Term::from(2));
/// let sum = bif::call(Bif::Add, &[a.as_ref(), b.as_ref()], &Env::default());
/// assert_eq!(sum, Ok(Value::Word(Word::small(42).unwrap())));
///
/// let atom = Term::parse("a").unwrap();
/// assert!(bif::call(Bif::Add, &[a.as_ref(), atom.as_ref()], &Env::default()).is_err());
/// ```
pub fn call(bif: Bif, args: &[TermRef<'_>], env: &Env) -> Result<Value, BifError> {
    match bif {
        Bif::IsAtom => test(one(args)?.word().as_atom().is_some()),
        Bif::IsFloat => test(matches!(boxed_kind(one(args)?), Some(Kind::Float(_)))),
        Bif::IsInteger => test(is_integer(one(args)?)),
        Bif::IsList => {
            let w = one(args)?.word();
            test(w.is_nil() || w.is_cons())
        }
        Bif::IsNumber => {
            let a = one(args)?;
            test(is_integer(a) || matches!(boxed_kind(a), Some(Kind::Float(_))))
        }
        Bif::IsPid => test(matches!(boxed_kind(one(args)?), Some(Kind::Pid(_)))),
        Bif::IsPort => test(matches!(boxed_kind(one(args)?), Some(Kind::Port(_)))),
        Bif::IsReference => test(matches!(boxed_kind(one(args)?), Some(Kind::Ref(_)))),
        Bif::IsTuple => test(matches!(boxed_kind(one(args)?), Some(Kind::Tuple(_)))),
        Bif::IsMap => test(matches!(boxed_kind(one(args)?), Some(Kind::Map(_)))),
        Bif::IsBinary => {
            test(matches!(boxed_kind(one(args)?), Some(Kind::Bits(b)) if b.is_binary()))
        }
        Bif::IsBitstring => test(matches!(boxed_kind(one(args)?), Some(Kind::Bits(_)))),
        Bif::IsBoolean => test(one(args)?.as_atom().is_some_and(Atom::is_boolean)),
        Bif::IsFunction1 => test(fun_arity(one(args)?).is_some()),
        Bif::IsFunction2 => {
            let (f, arity) = two(args)?;
            is_function(f, arity)
        }
        Bif::IsRecord => {
            let (x, tag, size) = three(args)?;
            is_record(x, tag, size, env)
        }
        Bif::IsIntegerRange => {
            let (x, low, high) = three(args)?;
            is_integer_range(x, low, high)
        }
        Bif::Abs => num::abs(one(args)?),
        Bif::Element => {
            let (index, tuple) = two(args)?;
            element(index, tuple)
        }
        Bif::Hd => match one(args)?.as_cons() {
            Some(cons) => Ok(Value::Word(cons.head().word())),
            None => Err(BifError::Badarg),
        },
        Bif::Tl => match one(args)?.as_cons() {
            Some(cons) => Ok(Value::Word(cons.tail().word())),
            None => Err(BifError::Badarg),
        },
        // ERTS's `db_length_1`: proper lists only, counted in one loop.
        Bif::Length => match one(args)?.list_len() {
            Some(n) => Ok(num::uint(n as u64)),
            None => Err(BifError::Badarg),
        },
        // `max` and `min` return the first argument when the two are `==`.
        Bif::Max => {
            let (a, b) = two(args)?;
            Ok(Value::Word(if compare(a, b) == Ordering::Less { b.word() } else { a.word() }))
        }
        Bif::Min => {
            let (a, b) = two(args)?;
            Ok(Value::Word(if compare(a, b) == Ordering::Greater { b.word() } else { a.word() }))
        }
        // An identifier of this node (`nonode@nohost`, creation 0) is on
        // whatever the node is called now, as ERTS's internal ones are.
        Bif::Node1 => {
            let node_of = |node, creation| {
                if node == Atom::NONODE && creation == 0 { env.node } else { node }
            };
            match boxed_kind(one(args)?) {
                Some(Kind::Pid(p)) => Ok(atom(node_of(p.node, p.creation))),
                Some(Kind::Port(p)) => Ok(atom(node_of(p.node, p.creation))),
                Some(Kind::Ref(r)) => Ok(atom(node_of(r.node, r.creation))),
                _ => Err(BifError::Badarg),
            }
        }
        Bif::Node0 => {
            none(args)?;
            Ok(atom(env.node))
        }
        Bif::Round => num::to_int(one(args)?, f64::round),
        Bif::Trunc => num::to_int(one(args)?, f64::trunc),
        Bif::Ceil => num::to_int(one(args)?, f64::ceil),
        Bif::Floor => num::to_int(one(args)?, f64::floor),
        Bif::Float => num::to_float(one(args)?, env.release),
        // A tuple's arity or a bitstring's whole bytes (trailing bits do not
        // count, unlike `byte_size/1`).
        Bif::Size => match boxed_kind(one(args)?) {
            Some(Kind::Tuple(t)) => Ok(num::uint(t.len() as u64)),
            Some(Kind::Bits(b)) => Ok(num::uint(b.bit_len() / 8)),
            _ => Err(BifError::Badarg),
        },
        Bif::MapSize => match boxed_kind(one(args)?) {
            Some(Kind::Map(m)) => Ok(num::uint(m.len() as u64)),
            _ => Err(BifError::Badmap),
        },
        Bif::MapGet => {
            let (key, map) = two(args)?;
            let Some(Kind::Map(map)) = boxed_kind(map) else {
                return Err(BifError::Badmap);
            };
            map.get(key).map(|v| Value::Word(v.word())).ok_or(BifError::Badkey)
        }
        Bif::IsMapKey => {
            let (key, map) = two(args)?;
            let Some(Kind::Map(map)) = boxed_kind(map) else {
                return Err(BifError::Badmap);
            };
            test(map.get(key).is_some())
        }
        Bif::BitSize => match boxed_kind(one(args)?) {
            Some(Kind::Bits(b)) => Ok(num::uint(b.bit_len())),
            _ => Err(BifError::Badarg),
        },
        Bif::ByteSize => match boxed_kind(one(args)?) {
            Some(Kind::Bits(b)) => Ok(num::uint(b.byte_len() as u64)),
            _ => Err(BifError::Badarg),
        },
        Bif::TupleSize => match boxed_kind(one(args)?) {
            Some(Kind::Tuple(t)) => Ok(num::uint(t.len() as u64)),
            _ => Err(BifError::Badarg),
        },
        Bif::BinaryPart2 => {
            let (bin, part) = two(args)?;
            match boxed_kind(part) {
                Some(Kind::Tuple(t)) if t.len() == 2 => match (t.get(0), t.get(1)) {
                    (Some(pos), Some(len)) => binary_part(bin, pos, len),
                    _ => Err(BifError::Badarg),
                },
                _ => Err(BifError::Badarg),
            }
        }
        Bif::BinaryPart3 => {
            let (bin, pos, len) = three(args)?;
            binary_part(bin, pos, len)
        }
        Bif::Plus1 => num::plus(one(args)?),
        Bif::Minus1 => num::neg(one(args)?),
        Bif::Add => {
            let (a, b) = two(args)?;
            num::add(a, b, env.release)
        }
        Bif::Sub => {
            let (a, b) = two(args)?;
            num::sub(a, b, env.release)
        }
        Bif::Mul => {
            let (a, b) = two(args)?;
            num::mul(a, b, env.release)
        }
        Bif::FloatDiv => {
            let (a, b) = two(args)?;
            num::float_div(a, b, env.release)
        }
        Bif::IntDiv => {
            let (a, b) = two(args)?;
            num::int_div(a, b)
        }
        Bif::Rem => {
            let (a, b) = two(args)?;
            num::rem(a, b)
        }
        Bif::Band => {
            let (a, b) = two(args)?;
            num::band(a, b)
        }
        Bif::Bor => {
            let (a, b) = two(args)?;
            num::bor(a, b)
        }
        Bif::Bxor => {
            let (a, b) = two(args)?;
            num::bxor(a, b, env.release)
        }
        Bif::Bnot => num::bnot(one(args)?),
        Bif::Bsl => {
            let (a, b) = two(args)?;
            num::shift(a, b, false)
        }
        Bif::Bsr => {
            let (a, b) = two(args)?;
            num::shift(a, b, true)
        }
        Bif::Gt => compare_with(args, Ordering::is_gt),
        Bif::Ge => compare_with(args, Ordering::is_ge),
        Bif::Lt => compare_with(args, Ordering::is_lt),
        Bif::Le => compare_with(args, Ordering::is_le),
        Bif::Eq => compare_with(args, Ordering::is_eq),
        Bif::Ne => compare_with(args, Ordering::is_ne),
        Bif::ExactEq => {
            let (a, b) = two(args)?;
            test(exact_eq(a, b))
        }
        Bif::ExactNe => {
            let (a, b) = two(args)?;
            test(!exact_eq(a, b))
        }
        Bif::Not => match one(args)?.as_atom() {
            Some(Atom::TRUE) => test(false),
            Some(Atom::FALSE) => test(true),
            _ => Err(BifError::Badarg),
        },
        Bif::Xor => {
            let (a, b) = two(args)?;
            match (boolean(a), boolean(b)) {
                (Some(a), Some(b)) => test(a != b),
                _ => Err(BifError::Badarg),
            }
        }
        Bif::GetTcw => {
            none(args)?;
            Ok(num::uint(env.tcw.into()))
        }
        // Both check that the new word is a 32-bit unsigned integer and
        // return the old one; see the function's documentation.
        Bif::SetTcw | Bif::SetTcwFake => match one(args)?.word().as_small() {
            Some(v) if u32::try_from(v).is_ok() => Ok(num::uint(env.tcw.into())),
            // Bignums are all above 2^32, and nothing else is an integer.
            _ => Err(BifError::Badarg),
        },
    }
}

// ---- Arguments and results ------------------------------------------------------

// The callers pass `bif.arity()` arguments; a wrong count is the caller's
// bug, answered with `badarg` rather than a panic.

#[inline]
fn none(args: &[TermRef<'_>]) -> Result<(), BifError> {
    if args.is_empty() { Ok(()) } else { Err(BifError::Badarg) }
}

#[inline]
fn one<'a>(args: &[TermRef<'a>]) -> Result<TermRef<'a>, BifError> {
    match args {
        [a] => Ok(*a),
        _ => Err(BifError::Badarg),
    }
}

#[inline]
fn two<'a>(args: &[TermRef<'a>]) -> Result<(TermRef<'a>, TermRef<'a>), BifError> {
    match args {
        [a, b] => Ok((*a, *b)),
        _ => Err(BifError::Badarg),
    }
}

#[inline]
fn three<'a>(args: &[TermRef<'a>]) -> Result<(TermRef<'a>, TermRef<'a>, TermRef<'a>), BifError> {
    match args {
        [a, b, c] => Ok((*a, *b, *c)),
        _ => Err(BifError::Badarg),
    }
}

#[inline]
fn test(b: bool) -> Result<Value, BifError> {
    Ok(atom(if b { Atom::TRUE } else { Atom::FALSE }))
}

#[inline]
fn atom(a: Atom) -> Value {
    Value::Word(Word::atom(a))
}

/// The kind of a boxed term, without decoding immediates.
#[inline]
fn boxed_kind(t: TermRef<'_>) -> Option<Kind<'_>> {
    if t.word().is_boxed() { Some(t.kind()) } else { None }
}

#[inline]
fn is_integer(t: TermRef<'_>) -> bool {
    t.word().is_small() || matches!(boxed_kind(t), Some(Kind::Big(_)))
}

fn boolean(t: TermRef<'_>) -> Option<bool> {
    match t.as_atom()? {
        Atom::TRUE => Some(true),
        Atom::FALSE => Some(false),
        _ => None,
    }
}

fn fun_arity(t: TermRef<'_>) -> Option<u8> {
    match boxed_kind(t)? {
        Kind::Export(e) => Some(e.arity),
        Kind::Closure(c) => Some(c.arity()),
        _ => None,
    }
}

// ---- Comparisons ------------------------------------------------------------------

/// A term as far as the fast paths of the comparisons care.
enum Fast {
    Small(i64),
    Float(f64),
    Other,
}

#[inline]
fn fast(t: TermRef<'_>) -> Fast {
    if let Some(i) = t.word().as_small() {
        return Fast::Small(i);
    }
    match boxed_kind(t) {
        Some(Kind::Float(f)) => Fast::Float(f),
        _ => Fast::Other,
    }
}

/// Erlang's term order, with small integers and floats compared in place
/// (the general order walks terms with a stack).
#[inline]
fn compare(a: TermRef<'_>, b: TermRef<'_>) -> Ordering {
    match (fast(a), fast(b)) {
        (Fast::Small(x), Fast::Small(y)) => x.cmp(&y),
        // Floats are never NaN; `-0.0 == 0.0` here, as in Erlang.
        (Fast::Float(x), Fast::Float(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Fast::Small(x), Fast::Float(y)) => compare_int_float_i64(x, y),
        (Fast::Float(x), Fast::Small(y)) => compare_int_float_i64(y, x).reverse(),
        _ => a.cmp_term(&b),
    }
}

/// `=:=`: immediates by their words, floats by their bits (so `0.0 =/= -0.0`).
#[inline]
fn exact_eq(a: TermRef<'_>, b: TermRef<'_>) -> bool {
    if a.word().is_immediate() && b.word().is_immediate() {
        return a.word() == b.word();
    }
    match (fast(a), fast(b)) {
        (Fast::Float(x), Fast::Float(y)) => x.to_bits() == y.to_bits(),
        (Fast::Small(_), Fast::Float(_)) | (Fast::Float(_), Fast::Small(_)) => false,
        _ => a.eq_exact(&b),
    }
}

#[inline]
fn compare_with(args: &[TermRef<'_>], holds: fn(Ordering) -> bool) -> Result<Value, BifError> {
    let (a, b) = two(args)?;
    test(holds(compare(a, b)))
}

// ---- The others ----------------------------------------------------------------------

/// `element/2`: a small index from 1 to the arity.
fn element(index: TermRef<'_>, tuple: TermRef<'_>) -> Result<Value, BifError> {
    let (Some(i), Some(Kind::Tuple(t))) = (index.word().as_small(), boxed_kind(tuple)) else {
        return Err(BifError::Badarg);
    };
    let i = usize::try_from(i).ok().and_then(|i| i.checked_sub(1)).ok_or(BifError::Badarg)?;
    t.get(i).map(|e| Value::Word(e.word())).ok_or(BifError::Badarg)
}

/// `is_function/2`. The arity is checked first: a negative or non-integer
/// arity is `badarg` whatever the first argument; a positive bignum is
/// allowed but matches no fun.
fn is_function(f: TermRef<'_>, arity: TermRef<'_>) -> Result<Value, BifError> {
    let wanted = match arity.kind() {
        Kind::Small(n) => Some(u64::try_from(n).map_err(|_| BifError::Badarg)?),
        Kind::Big(b) if !b.is_negative() => None,
        _ => return Err(BifError::Badarg),
    };
    test(fun_arity(f).is_some_and(|a| Some(u64::from(a)) == wanted))
}

/// `is_record/3`: the tag must be an atom and the size an ERTS small
/// integer, else `badarg` (from OTP 29 on an atom size is `false`:
/// [`Change::IsRecordAtomSize`]); then `X` must be a tuple of that size
/// whose first element is the tag.
fn is_record(
    x: TermRef<'_>,
    tag: TermRef<'_>,
    size: TermRef<'_>,
    env: &Env,
) -> Result<Value, BifError> {
    if tag.as_atom().is_some()
        && size.as_atom().is_some()
        && env.release.has(Change::IsRecordAtomSize)
    {
        return test(false);
    }
    let (Some(_), Some(size)) = (tag.as_atom(), size.word().as_small()) else {
        return Err(BifError::Badarg);
    };
    if !num::is_erts_small(size) {
        return Err(BifError::Badarg);
    }
    let Some(Kind::Tuple(t)) = boxed_kind(x) else { return test(false) };
    // An empty tuple has no first element to be the tag.
    test(t.len() as u64 == size as u64 && t.words().first() == Some(&tag.word()))
}

/// `is_integer/3`: both bounds must be integers, else `badarg`; then is
/// `X` an integer from `low` to `high`?
fn is_integer_range(
    x: TermRef<'_>,
    low: TermRef<'_>,
    high: TermRef<'_>,
) -> Result<Value, BifError> {
    if !is_integer(low) || !is_integer(high) {
        return Err(BifError::Badarg);
    }
    test(
        is_integer(x)
            && compare(low, x) != Ordering::Greater
            && compare(x, high) != Ordering::Greater,
    )
}

/// `binary_part/3` (and `/2` after unpacking `{Pos, Len}`): `Len` bytes from
/// byte `Pos`, or the `-Len` bytes before it. Anything out of range, a
/// bitstring that is not a binary, or a non-integer is `badarg`.
fn binary_part(bin: TermRef<'_>, pos: TermRef<'_>, len: TermRef<'_>) -> Result<Value, BifError> {
    let Some(Kind::Bits(bits)) = boxed_kind(bin) else {
        return Err(BifError::Badarg);
    };
    // A bignum position or length is at least 2^60 in magnitude, out of
    // range for any binary, so only small ones need a closer look.
    let (Some(pos), Some(len)) = (pos.word().as_small(), len.word().as_small()) else {
        return Err(BifError::Badarg);
    };
    // In i128 nothing overflows; every out-of-range case is one badarg.
    let (pos, len) = (i128::from(pos), i128::from(len));
    let (start, end) = if len < 0 { (pos + len, pos) } else { (pos, pos + len) };
    if !bits.is_binary() || start < 0 || end > bits.byte_len() as i128 {
        return Err(BifError::Badarg);
    }
    // Both are within the binary's length, a usize.
    let (start, end) = (start as usize, end as usize);
    if start == 0 && end == bits.byte_len() {
        return Ok(Value::Word(bin.word()));
    }
    bits.bytes().get(start..end).map(|b| Value::Binary(b.to_vec())).ok_or(BifError::Badarg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::{ClosureParts, Heap, Term};

    fn env() -> Env {
        Env { node: Atom::new("n@h"), tcw: 7, release: crate::Release::default() }
    }

    /// Calls `bif` on the elements of the list `args` (Erlang text) and
    /// checks the result against `expected`: a term, or `error:Reason`.
    #[track_caller]
    fn check(bif: Bif, args: &str, expected: &str) {
        let (mut heap, list) = Term::parse(args).expect("args parse").into_parts();
        let words: Vec<Word> = heap
            .view(list)
            .proper_list()
            .expect("args are a list")
            .iter()
            .map(|t| t.word())
            .collect();
        let result = {
            let views: Vec<TermRef<'_>> = words.iter().map(|&w| heap.view(w)).collect();
            call(bif, &views, &env())
        };
        let got = match result {
            Ok(value) => {
                let w = value.build(&mut heap).expect("finite");
                heap.view(w).to_string()
            }
            Err(e) => format!("error:{e}"),
        };
        assert_eq!(got, expected, "{}{args}", bif.name());
    }

    #[test]
    fn arithmetic_edges() {
        for (bif, args, expected) in [
            (Bif::Add, "[1152921504606846975, 1]", "1152921504606846976"),
            (Bif::Sub, "[-1152921504606846976, 1]", "-1152921504606846977"),
            (
                Bif::Mul,
                "[1152921504606846975, 1152921504606846975]",
                "1329227995784915870597964051066650625",
            ),
            (Bif::Add, "[1, 2.5]", "3.5"),
            (Bif::Add, "[0, -0.0]", "0.0"),
            (Bif::Mul, "[0, -1.0]", "-0.0"),
            (Bif::Mul, "[0, a]", "error:badarith"),
            (Bif::Mul, "[1.0e308, 10]", "error:badarith"),
            (Bif::FloatDiv, "[1, 0]", "error:badarith"),
            (Bif::FloatDiv, "[0, -1]", "-0.0"),
            (Bif::FloatDiv, "[0.0, 0.0]", "error:badarith"),
            (Bif::IntDiv, "[-7, 2]", "-3"),
            (Bif::Rem, "[-7, 2]", "-1"),
            (Bif::IntDiv, "[-1152921504606846976, -1]", "1152921504606846976"),
            (Bif::IntDiv, "[7, 0]", "error:badarith"),
            (Bif::IntDiv, "[7.0, 1]", "error:badarith"),
            (Bif::Minus1, "[-1152921504606846976]", "1152921504606846976"),
            (Bif::Minus1, "[0.0]", "-0.0"),
            (Bif::Plus1, "[a]", "error:badarith"),
            (Bif::Abs, "[-0.0]", "0.0"),
            (Bif::Abs, "[a]", "error:badarg"),
            (Bif::Float, "[a]", "error:badarg"),
            (Bif::Round, "[-2.5]", "-3"),
            (Bif::Round, "[0.49999999999999994]", "0"),
            (Bif::Trunc, "[-0.5]", "0"),
            (Bif::Floor, "[-0.5]", "-1"),
            (Bif::Ceil, "[1.0e20]", "100000000000000000000"),
        ] {
            check(bif, args, expected);
        }
    }

    #[test]
    fn bitwise_and_shifts() {
        for (bif, args, expected) in [
            (Bif::Band, "[-1, 18446744073709551616]", "18446744073709551616"),
            (Bif::Bor, "[-18446744073709551616, 1]", "-18446744073709551615"),
            (Bif::Bxor, "[-1, 18446744073709551615]", "-18446744073709551616"),
            (Bif::Bnot, "[18446744073709551615]", "-18446744073709551616"),
            (Bif::Bnot, "[1.0]", "error:badarith"),
            (Bif::Bsl, "[1, 64]", "18446744073709551616"),
            (Bif::Bsl, "[-5, -1]", "-3"),
            (Bif::Bsr, "[-5, 1]", "-3"),
            (Bif::Bsr, "[-18446744073709551617, 64]", "-2"),
            (Bif::Bsr, "[-1, 1000000]", "-1"),
            (Bif::Bsr, "[1, 18446744073709551616]", "0"),
            (Bif::Bsr, "[-1, 18446744073709551616]", "-1"),
            (Bif::Bsl, "[0, 18446744073709551616]", "0"),
            (Bif::Bsl, "[1, 18446744073709551616]", "error:system_limit"),
            (Bif::Bsr, "[1, -18446744073709551616]", "error:system_limit"),
            (Bif::Bsl, "[1, 4194240]", "error:system_limit"),
            (Bif::Bsl, "[-1, 4194240]", "error:system_limit"),
            (Bif::Bsl, "[1, 1152921504606846975]", "error:system_limit"),
            (Bif::Bsl, "[1.0, 1]", "error:badarith"),
            (Bif::Bsl, "[1, 1.0]", "error:badarith"),
        ] {
            check(bif, args, expected);
        }
    }

    #[test]
    fn type_tests_and_structure() {
        for (bif, args, expected) in [
            (Bif::IsBinary, "[<<1:3>>]", "false"),
            (Bif::IsBitstring, "[<<1:3>>]", "true"),
            (Bif::IsList, "[[a | b]]", "true"),
            (Bif::IsBoolean, "[true]", "true"),
            (Bif::IsFunction2, "[fun lists:map/2, 2]", "true"),
            (Bif::IsFunction2, "[a, -1]", "error:badarg"),
            (Bif::IsFunction2, "[a, 99999999999999999999]", "false"),
            (Bif::IsRecord, "[{a, 1}, a, 2]", "true"),
            (Bif::IsRecord, "[{}, a, 0]", "false"),
            (Bif::IsRecord, "[{a, 1}, a, 576460752303423488]", "error:badarg"),
            (Bif::IsRecord, "[{a, 1}, \"a\", 2]", "error:badarg"),
            (Bif::Element, "[2, {a, b}]", "b"),
            (Bif::Element, "[3, {a, b}]", "error:badarg"),
            (Bif::Element, "[0, {a, b}]", "error:badarg"),
            (Bif::Hd, "[[a | b]]", "a"),
            (Bif::Tl, "[[a | b]]", "b"),
            (Bif::Hd, "[[]]", "error:badarg"),
            (Bif::Length, "[[a, b | c]]", "error:badarg"),
            (Bif::Length, "[\"abc\"]", "3"),
            (Bif::Size, "[<<1, 2, 3:5>>]", "2"),
            (Bif::ByteSize, "[<<1, 2, 3:5>>]", "3"),
            (Bif::BitSize, "[<<1, 2, 3:5>>]", "21"),
            (Bif::MapSize, "[a]", "error:badmap"),
            (Bif::MapGet, "[1, #{1.0 => a}]", "error:badkey"),
            (Bif::MapGet, "[1, #{1 => a}]", "a"),
            (Bif::MapGet, "[1, a]", "error:badmap"),
            (Bif::IsMapKey, "[1.0, #{1.0 => a}]", "true"),
            (Bif::BinaryPart3, "[<<1, 2, 3>>, 3, -2]", "<<2,3>>"),
            (Bif::BinaryPart3, "[<<1, 2, 3>>, 0, 3]", "<<1,2,3>>"),
            (Bif::BinaryPart3, "[<<1, 2, 3>>, 2, 2]", "error:badarg"),
            (Bif::BinaryPart3, "[<<1, 2, 3:5>>, 0, 1]", "error:badarg"),
            (Bif::BinaryPart2, "[<<1, 2, 3>>, {1, 1}]", "<<2>>"),
            (Bif::Node1, "[#Ref<'x@y'.1.2.3.4>]", "x@y"),
            (Bif::Node1, "[a]", "error:badarg"),
            (Bif::Node1, "[<0.80.0>]", "n@h"),
            (Bif::Node1, "[#Port<0.3>]", "n@h"),
            (Bif::Node1, "[#Pid<'x@y'.1.80.0>]", "x@y"),
            (Bif::Node0, "[]", "n@h"),
            (Bif::Not, "[1]", "error:badarg"),
            (Bif::Xor, "[true, false]", "true"),
            (Bif::Max, "[1, 1.0]", "1"),
            (Bif::Min, "[1.0, 1]", "1.0"),
            (Bif::Eq, "[-0.0, 0.0]", "true"),
            (Bif::ExactEq, "[-0.0, 0.0]", "false"),
            (Bif::GetTcw, "[]", "7"),
            (Bif::SetTcw, "[4294967295]", "7"),
            (Bif::SetTcwFake, "[4294967296]", "error:badarg"),
            (Bif::SetTcw, "[-1]", "error:badarg"),
        ] {
            check(bif, args, expected);
        }
    }

    #[test]
    fn wrong_argument_counts_are_badarg() {
        let t = Term::from(1);
        for bif in crate::bif::TABLE.iter().map(|e| e.bif) {
            let args = vec![t.as_ref(); bif.arity() + 1];
            assert_eq!(call(bif, &args, &env()), Err(BifError::Badarg), "{}", bif.name());
        }
    }

    #[test]
    fn parts_of_arguments_are_their_words() {
        let t = Term::parse("{[x | y], #{k => v}, 99999999999999999999, 2.5}").expect("parses");
        let tuple = t.as_ref().as_tuple().expect("tuple");
        let [list, map, big, float] = [0, 1, 2, 3].map(|i| tuple.get(i).expect("element"));
        let word = |bif, args: &[TermRef<'_>]| match call(bif, args, &env()) {
            Ok(Value::Word(w)) => w,
            other => panic!("{}: {other:?}", bif.name()),
        };
        let one = Term::from(1);
        let key = Term::parse("k").expect("parses");
        let cons = list.as_cons().expect("cons");
        assert_eq!(word(Bif::Element, &[one.as_ref(), t.as_ref()]), list.word());
        assert_eq!(word(Bif::Hd, &[list]), cons.head().word());
        assert_eq!(word(Bif::Tl, &[list]), cons.tail().word());
        assert_eq!(word(Bif::MapGet, &[key.as_ref(), map]), Word::atom(Atom::new("v")));
        assert_eq!(word(Bif::Max, &[big, float]), big.word());
        assert_eq!(word(Bif::Abs, &[big]), big.word());
        assert_eq!(word(Bif::Trunc, &[big]), big.word());
        assert_eq!(word(Bif::Plus1, &[float]), float.word());
        assert_eq!(word(Bif::Float, &[float]), float.word());
    }

    #[test]
    fn results_in_the_small_range_are_words() {
        // 2^60 - 1 is small here (61-bit words) though a bignum in ERTS.
        let (a, b) = (Term::from((1i64 << 60) - 2), Term::from(1));
        let sum = call(Bif::Add, &[a.as_ref(), b.as_ref()], &env());
        assert_eq!(sum, Ok(Value::Word(Word::small((1 << 60) - 1).expect("small"))));
        let sum = call(Bif::Add, &[sum_term(&sum).as_ref(), b.as_ref()], &env());
        assert_eq!(sum, Ok(Value::Int(num_bigint::BigInt::from(1i64 << 60))));
        // A bignum result that shrinks back into range.
        let big = Term::parse("18446744073709551616").expect("parses");
        let q = call(Bif::IntDiv, &[big.as_ref(), big.as_ref()], &env());
        assert_eq!(q, Ok(Value::Word(Word::small(1).expect("small"))));
    }

    fn sum_term(v: &Result<Value, BifError>) -> Term {
        let mut heap = Heap::new();
        let w = v.as_ref().ok().and_then(|v| v.build(&mut heap)).expect("a value");
        Term::from_parts(heap, w)
    }

    #[test]
    fn closures_are_functions() {
        let mut heap = Heap::new();
        let pid = heap.pid(Atom::NONODE, 80, 0, 0);
        let fun = heap.closure(&ClosureParts {
            arity: 3,
            uniq: [0; 16],
            index: 0,
            module: Atom::new("m"),
            old_index: 0,
            old_uniq: 0,
            pid,
            free: &[],
        });
        let (three, two) = (heap.int(3), heap.int(2));
        let [fun, three, two] = [fun, three, two].map(|w| heap.view(w));
        let yes = Ok(Value::Word(Word::atom(Atom::TRUE)));
        let no = Ok(Value::Word(Word::atom(Atom::FALSE)));
        assert_eq!(call(Bif::IsFunction1, &[fun], &env()), yes);
        assert_eq!(call(Bif::IsFunction2, &[fun, three], &env()), yes);
        assert_eq!(call(Bif::IsFunction2, &[fun, two], &env()), no);
    }

    #[test]
    fn long_and_deep_lists() {
        const N: usize = 1_000_000;
        let mut heap = Heap::new();
        let elements = vec![Word::NIL; N];
        let long = heap.list(&elements);
        let mut deep = Word::NIL;
        for _ in 0..N {
            deep = heap.cons(deep, Word::NIL);
        }
        let mut deep2 = Word::NIL;
        for _ in 0..N {
            deep2 = heap.cons(deep2, Word::NIL);
        }
        let [long, deep, deep2] = [long, deep, deep2].map(|w| heap.view(w));
        let n = Word::small(N as i64).expect("small");
        assert_eq!(call(Bif::Length, &[long], &env()), Ok(Value::Word(n)));
        let yes = Ok(Value::Word(Word::atom(Atom::TRUE)));
        assert_eq!(call(Bif::Eq, &[deep, deep2], &env()), yes);
        assert_eq!(call(Bif::ExactEq, &[deep, deep2], &env()), yes);
        assert_eq!(call(Bif::Le, &[deep, deep2], &env()), yes);
    }

    #[test]
    fn the_bignum_limit_is_checked_before_allocating() {
        // 2^4194239 fits (65535 digits); doubling it would not, and a
        // product of two such numbers is refused without multiplying.
        let half = Term::parse("1").expect("parses");
        let max_shift = Term::from(4_194_239);
        let top = call(Bif::Bsl, &[half.as_ref(), max_shift.as_ref()], &env());
        let top = sum_term(&top);
        let two = Term::from(2);
        for bif in [Bif::Mul, Bif::Bsl] {
            let args = [top.as_ref(), if bif == Bif::Mul { top.as_ref() } else { two.as_ref() }];
            assert_eq!(call(bif, &args, &env()), Err(BifError::SystemLimit), "{}", bif.name());
        }
        assert_eq!(
            call(Bif::Mul, &[top.as_ref(), two.as_ref()], &env()),
            Err(BifError::SystemLimit)
        );
        let minus_one = Term::from(-1);
        let sum = call(Bif::Add, &[top.as_ref(), minus_one.as_ref()], &env());
        assert!(matches!(sum, Ok(Value::Int(_))));
    }
}
