//! Running a wire program on the bytes of one term.
//!
//! Registers hold the byte offset of the subterm they stand for. Every read
//! is bounds-checked and gives `None` on a surprise, which is
//! [`Verdict::Decode`]: never a wrong answer, never a panic.

use std::cmp::Ordering;

use super::lower::{Literal, NeedResult, NeedTest, WireOp, WireProgram};
use super::{SMALL_ARITY, Verdict};
use crate::Scratch;
use crate::bif::Bif;
use crate::etf::scan::{
    PlainIndex, atom_at, is_utf8_tag, plain_len_indexed, skip, small_tuple_arity, small_tuple_len,
    u16_at, u32_at,
};
use crate::etf::tag;
use crate::ir::{Cmp, Reg};

/// What [`WireProgram::needs_met`] found.
enum Met {
    /// A test fails: no match.
    No,
    /// Every test holds.
    Yes,
    /// Some test is not decided here: run the program from the start.
    Unknown,
}

/// A register no op has written.
const UNSET: u32 = u32::MAX;

impl WireProgram {
    /// Decides what the spec does with the term encoded in `bytes` (one
    /// whole term, version byte first), as far as it can without decoding.
    #[inline]
    pub fn decide(&self, bytes: &[u8], scratch: &mut Scratch) -> Verdict {
        // What `decide_first` does, written out: through a call to it, an
        // event took some 5% more instructions (callgrind).
        let mut small = [0; SMALL_ARITY];
        match small_tuple_arity(bytes).and_then(|arity| small.get_mut(..arity)) {
            Some(elements) => match small_tuple_len(bytes, elements) {
                Some(len) if len == bytes.len() => {
                    self.decide_plain(bytes, elements, &mut scratch.wire)
                }
                _ => Verdict::Decode,
            },
            None => self.decide_other(bytes, scratch),
        }
    }

    /// [`decide`](WireProgram::decide) for the term at the start of
    /// `bytes`, where more may follow (a stream of concatenated terms):
    /// its length and the verdict, when it is a plain small tuple of at
    /// most 16 elements. `None` says nothing about the term:
    /// measure it ([`etf::term_len_indexed`]) and decide it the usual way.
    ///
    /// ```
    /// use matchspec::wire::Verdict;
    /// use matchspec::{CompiledSpec, Config, Scratch, etf, spec::Kind, term::Term};
    ///
    /// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default())?;
    /// let first = etf::encode(Term::parse("{7, no}")?.as_ref())?;
    /// let mut stream = first.clone();
    /// stream.extend(etf::encode(Term::parse("{8, ok}")?.as_ref())?);
    /// let wire = spec.wire().expect("a table spec");
    /// let decided = wire.decide_first(&stream, &mut Scratch::new());
    /// assert_eq!(decided, Some((first.len(), Verdict::NoMatch)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`etf::term_len_indexed`]: crate::etf::term_len_indexed
    #[inline]
    pub fn decide_first(&self, bytes: &[u8], scratch: &mut Scratch) -> Option<(usize, Verdict)> {
        // The usual input, a small tuple of a few elements, is indexed on
        // the stack (as in `decide`).
        let mut small = [0; SMALL_ARITY];
        let elements = small_tuple_arity(bytes).and_then(|arity| small.get_mut(..arity))?;
        let len = small_tuple_len(bytes, elements)?;
        Some((len, self.decide_plain(bytes.get(..len)?, elements, &mut scratch.wire)))
    }

    /// [`decide`](WireProgram::decide) of anything but a small tuple of at
    /// most [`SMALL_ARITY`] elements.
    #[inline(never)]
    fn decide_other(&self, bytes: &[u8], scratch: &mut Scratch) -> Verdict {
        let elements = &mut scratch.wire_elements;
        if plain_len_indexed(bytes, elements) != Some(bytes.len()) {
            return Verdict::Decode;
        }
        self.decide_plain(bytes, elements, &mut scratch.wire)
    }

    /// [`decide`](WireProgram::decide) for a term a stream reader measured
    /// and indexed already ([`etf::term_len_indexed`]): the same verdict,
    /// without scanning the term again (unless `index` is not of `bytes`).
    ///
    /// [`etf::term_len_indexed`]: crate::etf::term_len_indexed
    #[inline]
    pub fn decide_indexed(
        &self,
        bytes: &[u8],
        index: &PlainIndex,
        scratch: &mut Scratch,
    ) -> Verdict {
        match index.elements_of(bytes) {
            Some(elements) => self.decide_plain(bytes, elements, &mut scratch.wire),
            None => self.decide(bytes, scratch),
        }
    }

    /// Decides a plain term whose top-level elements (if it is a tuple)
    /// start at `elements`.
    #[inline(always)]
    fn decide_plain(&self, bytes: &[u8], elements: &[u32], registers: &mut Vec<u32>) -> Verdict {
        let start = match self.needs_met(bytes, elements) {
            Met::No => return Verdict::NoMatch,
            Met::Yes => match self.needs.result {
                // The clause reads nothing more that could fail.
                Some(NeedResult::Input) => return Verdict::Match { result: 1 },
                Some(NeedResult::Element(index)) => match elements.get(index as usize) {
                    Some(&at) => return Verdict::Match { result: at as usize },
                    None => 0,
                },
                // The leading tests hold: the program goes on after them.
                None => self.needs.resume,
            },
            Met::Unknown => 0,
        };
        self.run_from(bytes, elements, registers, start)
    }

    /// Runs the program from op `start` (out of line: the needs decide
    /// most terms without it).
    #[inline(never)]
    fn run_from(
        &self,
        bytes: &[u8],
        elements: &[u32],
        registers: &mut Vec<u32>,
        start: usize,
    ) -> Verdict {
        // Registers hold offsets below `UNSET`.
        if bytes.len() >= UNSET as usize {
            return Verdict::Decode;
        }
        self.exec(bytes, elements, registers, start).unwrap_or(Verdict::Decode)
    }

    /// Whether the plain term passes the tests every match needs (see
    /// [`Needs`](super::lower::Needs)).
    #[inline(always)]
    fn needs_met(&self, bytes: &[u8], elements: &[u32]) -> Met {
        let Some(arity) = self.needs.arity else { return Met::Unknown };
        // The scan indexed every element of a tuple and none of anything
        // else: only an empty tuple is told apart by its tag.
        if elements.len() != arity as usize || (arity == 0 && tuple(bytes, 1).is_none()) {
            return Met::No;
        }
        let mut met = Met::Yes;
        for need in &self.needs.elements {
            let at = elements.get(need.index as usize).map(|&at| at as usize);
            let quick = match (at, need.test) {
                (Some(at), NeedTest::Atom { word, .. }) => {
                    window(bytes, at).and_then(|w| word.test(w))
                }
                (Some(at), NeedTest::Compare { op, value }) => compare_small(bytes, at, op, value),
                _ => None,
            };
            match quick.or_else(|| self.need_holds(bytes, at?, need.test)) {
                Some(true) => {}
                Some(false) => return Met::No,
                None => met = Met::Unknown,
            }
        }
        met
    }

    /// Whether a need holds of the element at `at`, when its quick test
    /// (in [`needs_met`](WireProgram::needs_met)) did not say.
    #[cold]
    #[inline(never)]
    fn need_holds(&self, bytes: &[u8], at: usize, test: NeedTest) -> Option<bool> {
        match test {
            NeedTest::Atom { literal, .. } | NeedTest::Literal { literal } => {
                self.is_literal(bytes, at, literal)
            }
            NeedTest::Compare { .. } => None,
        }
    }

    /// Runs the program on a plain term whose top-level elements (if it is
    /// a tuple) start at `elements`, from op `start`.
    fn exec(
        &self,
        bytes: &[u8],
        elements: &[u32],
        registers: &mut Vec<u32>,
        start: usize,
    ) -> Option<Verdict> {
        if registers.len() < self.registers.max(1) {
            registers.resize(self.registers.max(1), UNSET);
        }
        // Only these hold offsets, so only these may hold an earlier term's.
        for reg in &self.written {
            registers[reg.index()] = UNSET;
        }
        registers[Reg::INPUT.index()] = 1;
        let at = |registers: &[u32], reg: Reg| {
            registers.get(reg.index()).copied().filter(|&at| at != UNSET).map(|at| at as usize)
        };
        let mut pc = start;
        loop {
            let op = *self.code.get(pc)?;
            pc += 1;
            let failed = match op {
                WireOp::IsTuple { src, arity, fail } => {
                    (tuple(bytes, at(registers, src)?).map(|(n, _)| n) != Some(arity))
                        .then_some(fail)
                }
                WireOp::GetElement { src, index, dst } => {
                    let element = element(bytes, elements, at(registers, src)?, index)?;
                    *registers.get_mut(dst.index())? = element as u32;
                    None
                }
                WireOp::GetInputElement { index, dst } => {
                    let element = *elements.get(index as usize)?;
                    *registers.get_mut(dst.index())? = element;
                    None
                }
                WireOp::CompareSmall { op, src, value, fail } => {
                    (!compare_small(bytes, at(registers, src)?, op, value)?).then_some(fail)
                }
                WireOp::IsElement { src, index, literal, fail } => {
                    let element = element(bytes, elements, at(registers, src)?, index)?;
                    (!self.is_literal(bytes, element, literal)?).then_some(fail)
                }
                WireOp::IsLiteral { src, literal, fail } => {
                    (!self.is_literal(bytes, at(registers, src)?, literal)?).then_some(fail)
                }
                WireOp::IsCons { src, fail } => {
                    let at = at(registers, src)?;
                    let cons = match *bytes.get(at)? {
                        tag::LIST_EXT => true,
                        tag::STRING_EXT => u16_at(bytes, at + 1)? > 0,
                        _ => false,
                    };
                    (!cons).then_some(fail)
                }
                WireOp::IsMap { src, fail } => {
                    // Only an empty map needs no keys: else decode to look.
                    let at = at(registers, src)?;
                    match *bytes.get(at)? {
                        tag::MAP_EXT => return None,
                        _ => Some(fail),
                    }
                }
                WireOp::IsExactEq { a, b } => {
                    let (a, b) = (at(registers, a)?, at(registers, b)?);
                    // Equal bytes are equal terms; different bytes may
                    // still be (a Latin-1 and a UTF-8 atom): decode.
                    let same = bytes.get(a..skip(bytes, a)?)? == bytes.get(b..skip(bytes, b)?)?;
                    if !same {
                        return None;
                    }
                    None // equal: fall through
                }
                WireOp::CompareLiteral { op, src, literal, fail } => {
                    let at = at(registers, src)?;
                    // (An integer is a `CompareSmall`.)
                    let holds = match self.literals.get(literal as usize)? {
                        literal @ Literal::Atom { .. } if is_equality(op) => {
                            let equal = is_atom_literal(bytes, at, literal)?;
                            holds(op, if equal { Ordering::Equal } else { Ordering::Less })
                        }
                        _ => return None,
                    };
                    (!holds).then_some(fail)
                }
                WireOp::Compare { op, a, b, fail } => {
                    let a = integer(bytes, at(registers, a)?)?;
                    let b = integer(bytes, at(registers, b)?)?;
                    (!holds(op, a.cmp(&b))).then_some(fail)
                }
                WireOp::TypeTest { test, src, expect, fail } => {
                    (type_test(bytes, at(registers, src)?, test)? != expect).then_some(fail)
                }
                WireOp::Move { src, dst } => {
                    let value = *registers.get(src.index())?;
                    *registers.get_mut(dst.index())? = value;
                    None
                }
                WireOp::Jump { target } => Some(target),
                WireOp::Succeed { src } => {
                    return Some(Verdict::Match { result: at(registers, src)? });
                }
                WireOp::NoMatch => return Some(Verdict::NoMatch),
                WireOp::Decode => return Some(Verdict::Decode),
            };
            if let Some(label) = failed {
                pc = label.index();
            }
        }
    }

    /// Is the term at `at` literal number `literal`? `None`: not decided.
    #[inline(always)]
    fn is_literal(&self, bytes: &[u8], at: usize, literal: u32) -> Option<bool> {
        let tag = *bytes.get(at)?;
        match self.literals.get(literal as usize)? {
            &Literal::Small(value) => Some(
                matches!(tag, tag::SMALL_INTEGER_EXT | tag::INTEGER_EXT)
                    && integer(bytes, at)? == value,
            ),
            literal @ Literal::Atom { word, .. } => {
                let quick = word.zip(window(bytes, at)).and_then(|(word, w)| word.test(w));
                quick.or_else(|| is_atom_literal(bytes, at, literal))
            }
            Literal::Nil => Some(match tag {
                tag::NIL_EXT => true,
                tag::STRING_EXT => u16_at(bytes, at + 1)? == 0,
                _ => false,
            }),
            Literal::Other => None,
        }
    }
}

/// The 8 bytes at `at` as a little-endian word, if there are 8.
#[inline(always)]
fn window(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..)?.first_chunk::<8>().map(|w| u64::from_le_bytes(*w))
}

/// The arity of the tuple at `at` and where its first element starts, or
/// `None` if it is not a tuple.
#[inline]
fn tuple(bytes: &[u8], at: usize) -> Option<(u32, usize)> {
    match *bytes.get(at)? {
        tag::SMALL_TUPLE_EXT => Some((u32::from(*bytes.get(at + 1)?), at + 2)),
        tag::LARGE_TUPLE_EXT => Some((u32_at(bytes, at + 1)?, at + 5)),
        _ => None,
    }
}

/// Where element `index` of the tuple at `at` (whose arity was tested)
/// starts: looked up for the input itself (at byte 1), skipped to below.
fn element(bytes: &[u8], elements: &[u32], at: usize, index: u32) -> Option<usize> {
    if at == 1 && !elements.is_empty() {
        return elements.get(index as usize).map(|&pos| pos as usize);
    }
    let (_, mut pos) = tuple(bytes, at)?;
    for _ in 0..index {
        pos = skip(bytes, pos)?;
    }
    Some(pos)
}

/// The integer at `at`, if it is one.
#[inline]
fn integer(bytes: &[u8], at: usize) -> Option<i64> {
    match *bytes.get(at)? {
        tag::SMALL_INTEGER_EXT => Some(i64::from(*bytes.get(at + 1)?)),
        tag::INTEGER_EXT => Some(i64::from(u32_at(bytes, at + 1)? as i32)),
        _ => None,
    }
}

/// Does `integer op value` hold of the integer at `at`? `None`: it is no
/// integer.
#[inline]
fn compare_small(bytes: &[u8], at: usize, op: Cmp, value: i64) -> Option<bool> {
    Some(holds(op, integer(bytes, at)?.cmp(&value)))
}

/// Is the term at `at` the atom `literal` (a [`Literal::Atom`])?
#[inline]
fn is_atom_literal(bytes: &[u8], at: usize, literal: &Literal) -> Option<bool> {
    let Literal::Atom { utf8, latin1, .. } = literal else { return None };
    let tag = *bytes.get(at)?;
    let Some((_, text)) = atom_at(bytes, at) else {
        return Some(false);
    };
    let name = if is_utf8_tag(tag) { &**utf8 } else { latin1.as_deref().unwrap_or(&[]) };
    Some(same_bytes(text, name) && (is_utf8_tag(tag) || latin1.is_some()))
}

/// `a == b`, without a call to `memcmp` for the short names atoms have.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// What the type test `test` says of the plain term at `at`.
fn type_test(bytes: &[u8], at: usize, test: Bif) -> Option<bool> {
    let tag = *bytes.get(at)?;
    let atom = matches!(
        tag,
        tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT
    );
    let integer = matches!(tag, tag::SMALL_INTEGER_EXT | tag::INTEGER_EXT);
    Some(match test {
        Bif::IsAtom => atom,
        Bif::IsBoolean => atom && matches!(atom_at(bytes, at)?.1, b"true" | b"false"),
        Bif::IsInteger => integer,
        Bif::IsFloat => tag == tag::NEW_FLOAT_EXT,
        Bif::IsNumber => integer || tag == tag::NEW_FLOAT_EXT,
        Bif::IsList => matches!(tag, tag::NIL_EXT | tag::STRING_EXT | tag::LIST_EXT),
        Bif::IsTuple => matches!(tag, tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT),
        Bif::IsBinary | Bif::IsBitstring => tag == tag::BINARY_EXT,
        Bif::IsPid => matches!(tag, tag::NEW_PID_EXT | tag::PID_EXT),
        Bif::IsMap => tag == tag::MAP_EXT,
        Bif::IsPort | Bif::IsReference | Bif::IsFunction1 => false,
        _ => return None,
    })
}

/// Does `op` hold of two terms that compare as `ordering`?
#[inline]
fn holds(op: Cmp, ordering: Ordering) -> bool {
    match op {
        Cmp::Lt => ordering.is_lt(),
        Cmp::Le => ordering.is_le(),
        Cmp::Gt => ordering.is_gt(),
        Cmp::Ge => ordering.is_ge(),
        Cmp::Eq | Cmp::ExactEq => ordering.is_eq(),
        Cmp::Ne | Cmp::ExactNe => ordering.is_ne(),
    }
}

/// Is `op` one of the (in)equalities, the only comparisons of atoms the
/// wire decides?
fn is_equality(op: Cmp) -> bool {
    matches!(op, Cmp::Eq | Cmp::Ne | Cmp::ExactEq | Cmp::ExactNe)
}
