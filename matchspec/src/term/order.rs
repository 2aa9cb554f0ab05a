//! Erlang's term order, exact equality and a hash consistent with it.
//!
//! Two orders are defined, both total and both walking the terms with an
//! explicit stack so that depth never matters:
//!
//! * [`TermRef::cmp_term`] is Erlang's order, the one `<`, `==` and sorting
//!   use: numbers compare by value (`1 == 1.0`, `0.0 == -0.0`), then
//!   number < atom < reference < fun < port < pid < tuple < map < nil < list
//!   < bitstring.
//! * [`TermRef::cmp_exact`] refines it so that only exactly equal terms
//!   (`=:=`) compare equal: an integer sorts before a float, and `-0.0`
//!   before `0.0`. It is the order of map keys, and the [`Ord`] of
//!   [`TermRef`], consistent with its [`Eq`] (`=:=`) and [`Hash`].
//!
//! Map comparison follows Erlang: size first, then the keys in ascending
//! order (compared exactly), then the values in key order.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use num_bigint::BigInt;
use num_traits::FromPrimitive;

use super::TermRef;
use super::view::{Big, Kind};
use super::word::Word;

/// Which of the two orders a comparison uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Erlang's term order (`==`).
    Term,
    /// The exact order (`=:=`).
    Exact,
}

impl<'a> TermRef<'a> {
    /// Erlang's order of two numbers (`None` if either is not a number): the
    /// fast path of arithmetic comparisons, without [`cmp_term`](Self::cmp_term)'s
    /// walk.
    #[inline]
    pub fn cmp_numbers(&self, other: &TermRef<'_>) -> Option<Ordering> {
        let (x, y) = (self.kind(), other.kind());
        match (x, y) {
            (
                Kind::Small(_) | Kind::Big(_) | Kind::Float(_),
                Kind::Small(_) | Kind::Big(_) | Kind::Float(_),
            ) => Some(compare_numbers(x, y, Mode::Term)),
            _ => None,
        }
    }

    /// Erlang's term order; `Equal` means `==`.
    ///
    /// ```
    /// use matchspec::term::Term;
    /// use std::cmp::Ordering;
    /// let (one, one_f) = (Term::parse("1").unwrap(), Term::parse("1.0").unwrap());
    /// assert_eq!(one.as_ref().cmp_term(&one_f.as_ref()), Ordering::Equal);
    /// let (n, a) = (Term::parse("99999999999999999999").unwrap(), Term::parse("a").unwrap());
    /// assert_eq!(n.as_ref().cmp_term(&a.as_ref()), Ordering::Less);
    /// ```
    pub fn cmp_term(&self, other: &TermRef<'_>) -> Ordering {
        compare(*self, *other, Mode::Term)
    }

    /// The exact order: [`cmp_term`](Self::cmp_term) with integers before
    /// floats and `-0.0` before `0.0`, so `Equal` means `=:=`.
    pub fn cmp_exact(&self, other: &TermRef<'_>) -> Ordering {
        compare(*self, *other, Mode::Exact)
    }

    /// `==`: equal by value (`1 == 1.0`).
    pub fn eq_term(&self, other: &TermRef<'_>) -> bool {
        self.cmp_term(other) == Ordering::Equal
    }

    /// `=:=`: exactly equal (`1 =/= 1.0`, `0.0 =/= -0.0`).
    pub fn eq_exact(&self, other: &TermRef<'_>) -> bool {
        // Same word in the same heaps is the same term; this catches all
        // immediates and shared subterms without walking them.
        if self.word() == other.word() && (self.word().is_immediate() || same_heaps(self, other)) {
            return true;
        }
        self.cmp_exact(other) == Ordering::Equal
    }
}

fn same_heaps(a: &TermRef<'_>, b: &TermRef<'_>) -> bool {
    let (sa, _) = a.word().target();
    std::ptr::eq(a.heaps().space(sa), b.heaps().space(sa))
}

impl PartialEq for TermRef<'_> {
    /// Exact equality, `=:=`.
    fn eq(&self, other: &Self) -> bool {
        self.eq_exact(other)
    }
}

impl Eq for TermRef<'_> {}

impl PartialOrd for TermRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TermRef<'_> {
    /// The exact order, [`TermRef::cmp_exact`].
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_exact(other)
    }
}

fn compare(a: TermRef<'_>, b: TermRef<'_>, mode: Mode) -> Ordering {
    let mut stack: Vec<(Word, Word, Mode)> = Vec::new();
    let (mut x, mut y, mut mode) = (a.word(), b.word(), mode);
    loop {
        let ord = if x == y && x.is_immediate() {
            Ordering::Equal
        } else {
            compare_one(a.with_word(x), b.with_word(y), mode, &mut stack)
        };
        if ord != Ordering::Equal {
            return ord;
        }
        match stack.pop() {
            Some(next) => (x, y, mode) = next,
            None => return Ordering::Equal,
        }
    }
}

/// Compares the top level of `x` and `y`; pushes pairs of children still to
/// compare (the pair to compare first is pushed last).
fn compare_one<'a, 'b>(
    x: TermRef<'a>,
    y: TermRef<'b>,
    mode: Mode,
    stack: &mut Vec<(Word, Word, Mode)>,
) -> Ordering {
    let (kx, ky) = (x.kind(), y.kind());
    let type_ord = x.type_order().cmp(&y.type_order());
    if type_ord != Ordering::Equal {
        return type_ord;
    }
    match (kx, ky) {
        (Kind::Small(_) | Kind::Big(_) | Kind::Float(_), _) => compare_numbers(kx, ky, mode),
        (Kind::Atom(p), Kind::Atom(q)) => {
            if p == q {
                Ordering::Equal
            } else {
                p.name().cmp(q.name())
            }
        }
        (Kind::Tuple(p), Kind::Tuple(q)) => p.len().cmp(&q.len()).then_with(|| {
            for (&e, &f) in p.words().iter().zip(q.words()).rev() {
                stack.push((e, f, mode));
            }
            Ordering::Equal
        }),
        (Kind::Cons(p), Kind::Cons(q)) => {
            stack.push((p.tail().word(), q.tail().word(), mode));
            stack.push((p.head().word(), q.head().word(), mode));
            Ordering::Equal
        }
        (Kind::Nil, Kind::Nil) => Ordering::Equal,
        (Kind::Map(p), Kind::Map(q)) => p.len().cmp(&q.len()).then_with(|| {
            for (&e, &f) in p.value_words().iter().zip(q.value_words()).rev() {
                stack.push((e, f, mode));
            }
            for (&e, &f) in p.key_words().iter().zip(q.key_words()).rev() {
                stack.push((e, f, Mode::Exact));
            }
            Ordering::Equal
        }),
        (Kind::Bits(p), Kind::Bits(q)) => {
            p.bytes().cmp(q.bytes()).then(p.bit_len().cmp(&q.bit_len()))
        }
        (Kind::Ref(p), Kind::Ref(q)) => p
            .node
            .name()
            .cmp(q.node.name())
            .then(p.creation.cmp(&q.creation))
            .then_with(|| compare_ref_ids(&significant_ids(p), &significant_ids(q))),
        (Kind::Port(p), Kind::Port(q)) => {
            p.node.name().cmp(q.node.name()).then(p.creation.cmp(&q.creation)).then(p.id.cmp(&q.id))
        }
        (Kind::Pid(p), Kind::Pid(q)) => p
            .serial
            .cmp(&q.serial)
            .then(p.id.cmp(&q.id))
            .then_with(|| p.node.name().cmp(q.node.name()))
            .then(p.creation.cmp(&q.creation)),
        (Kind::Export(p), Kind::Export(q)) => p
            .module
            .name()
            .cmp(q.module.name())
            .then_with(|| p.function.name().cmp(q.function.name()))
            .then(p.arity.cmp(&q.arity)),
        // Local funs sort before external ones.
        (Kind::Closure(_), Kind::Export(_)) => Ordering::Less,
        (Kind::Export(_), Kind::Closure(_)) => Ordering::Greater,
        (Kind::Closure(p), Kind::Closure(q)) => p
            .module()
            .name()
            .cmp(q.module().name())
            .then(p.index().cmp(&q.index()))
            .then(p.old_uniq().cmp(&q.old_uniq()))
            .then(p.free().len().cmp(&q.free().len()))
            .then_with(|| {
                for (e, f) in p.free().zip(q.free()).rev() {
                    stack.push((e.word(), f.word(), mode));
                }
                stack.push((p.pid().word(), q.pid().word(), mode));
                Ordering::Equal
            }),
        // Same type order but different kinds only happens for numbers and
        // funs, handled above.
        _ => Ordering::Equal,
    }
}

fn compare_numbers(x: Kind<'_>, y: Kind<'_>, mode: Mode) -> Ordering {
    match (x, y) {
        (Kind::Small(p), Kind::Small(q)) => p.cmp(&q),
        (Kind::Small(_), Kind::Big(q)) => {
            if q.is_negative() {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Kind::Big(p), Kind::Small(_)) => {
            if p.is_negative() {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Kind::Big(p), Kind::Big(q)) => compare_bigs(p, q),
        (Kind::Float(p), Kind::Float(q)) => match mode {
            Mode::Term => p.partial_cmp(&q).unwrap_or(Ordering::Equal),
            // total_cmp puts -0.0 before 0.0 and agrees otherwise (no NaNs).
            Mode::Exact => p.total_cmp(&q),
        },
        (Kind::Small(_) | Kind::Big(_), Kind::Float(_)) if mode == Mode::Exact => Ordering::Less,
        (Kind::Float(_), Kind::Small(_) | Kind::Big(_)) if mode == Mode::Exact => Ordering::Greater,
        (Kind::Small(i), Kind::Float(f)) => compare_int_float(&Int::Small(i), f),
        (Kind::Big(i), Kind::Float(f)) => compare_int_float(&Int::Big(i.to_bigint()), f),
        (Kind::Float(f), Kind::Small(i)) => compare_int_float(&Int::Small(i), f).reverse(),
        (Kind::Float(f), Kind::Big(i)) => compare_int_float(&Int::Big(i.to_bigint()), f).reverse(),
        _ => Ordering::Equal,
    }
}

/// The id words of a reference without high-order zero words, which do not
/// count: ERTS compares the words as one number.
fn significant_ids(r: super::view::Ref<'_>) -> Vec<u32> {
    let mut ids: Vec<u32> = r.ids().collect();
    while ids.last() == Some(&0) {
        ids.pop();
    }
    ids
}

fn compare_ref_ids(p: &[u32], q: &[u32]) -> Ordering {
    p.len().cmp(&q.len()).then_with(|| p.iter().rev().cmp(q.iter().rev()))
}

fn compare_bigs(p: Big<'_>, q: Big<'_>) -> Ordering {
    match (p.is_negative(), q.is_negative()) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (negative, _) => {
            let magnitude = p
                .limbs()
                .len()
                .cmp(&q.limbs().len())
                .then_with(|| p.limbs().rev().cmp(q.limbs().rev()));
            if negative { magnitude.reverse() } else { magnitude }
        }
    }
}

enum Int {
    Small(i64),
    Big(BigInt),
}

/// Compares an integer with a float by their exact mathematical values (what
/// Erlang's rule of converting the less precise operand amounts to).
pub(crate) fn compare_int_float_i64(i: i64, f: f64) -> Ordering {
    compare_int_float(&Int::Small(i), f)
}

fn compare_int_float(i: &Int, f: f64) -> Ordering {
    // 2^63 as a float; every float strictly inside ±2^63 truncates to an i64 exactly.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let t = f.trunc();
    let int_cmp = match i {
        Int::Small(i) if t.abs() < LIMIT => i.cmp(&(t as i64)),
        Int::Small(_) => {
            if t > 0.0 {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        Int::Big(b) => match BigInt::from_f64(t) {
            Some(t) => b.cmp(&t),
            None => Ordering::Equal,
        },
    };
    // Equal integer parts: the fraction decides.
    int_cmp.then_with(|| {
        if f > t {
            Ordering::Less
        } else if f < t {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    })
}

impl Hash for TermRef<'_> {
    /// A hash consistent with `=:=`: exactly equal terms hash alike wherever
    /// they live.
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut stack = vec![self.word()];
        while let Some(word) = stack.pop() {
            let t = self.with_word(word);
            let kind = t.kind();
            std::mem::discriminant(&kind).hash(state);
            match kind {
                Kind::Small(v) => v.hash(state),
                Kind::Big(b) => {
                    b.is_negative().hash(state);
                    b.limbs().for_each(|l| l.hash(state));
                }
                Kind::Float(f) => f.to_bits().hash(state),
                Kind::Atom(a) => a.hash(state),
                Kind::Nil => {}
                Kind::Cons(c) => {
                    stack.push(c.tail().word());
                    stack.push(c.head().word());
                }
                Kind::Tuple(tuple) => {
                    tuple.len().hash(state);
                    stack.extend(tuple.words().iter().rev());
                }
                Kind::Map(m) => {
                    m.len().hash(state);
                    stack.extend(m.value_words().iter().rev());
                    stack.extend(m.key_words().iter().rev());
                }
                Kind::Bits(b) => {
                    b.bit_len().hash(state);
                    b.bytes().hash(state);
                }
                Kind::Pid(p) => p.hash(state),
                Kind::Port(p) => p.hash(state),
                Kind::Ref(r) => {
                    r.node.hash(state);
                    r.creation.hash(state);
                    significant_ids(r).hash(state);
                }
                Kind::Export(e) => e.hash(state),
                Kind::Closure(c) => {
                    (c.module(), c.index(), c.old_index(), c.old_uniq(), c.uniq(), c.arity())
                        .hash(state);
                    stack.push(c.pid().word());
                    stack.extend(c.free().map(|v| v.word()));
                }
            }
        }
    }
}
