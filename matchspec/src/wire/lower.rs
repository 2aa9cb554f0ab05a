//! IR to wire ops: one op for each IR op, so labels carry over unchanged.

use std::sync::Arc;

use super::SMALL_ARITY;
use super::ScanCode;
use super::code::ElementTest;
use crate::bif::Bif;
use crate::ir::{Cmp, Label, Op, Program, Reg};
use crate::spec::Kind;
use crate::term::Word;

/// A spec's head tests as they run on encoded terms (see the [module
/// documentation](super)).
#[derive(Clone, Debug)]
pub struct WireProgram {
    pub(super) code: Vec<WireOp>,
    pub(super) literals: Vec<Literal>,
    pub(super) registers: usize,
    /// The registers its ops write.
    pub(super) written: Vec<Reg>,
    /// Tests every match needs, checked before the program runs.
    pub(super) needs: Needs,
    /// Machine code for the scan and the needs, if made.
    pub(super) scan_code: Option<Arc<dyn ScanCode>>,
}

/// The tests the program starts with whose failure is no match at all
/// (a one-clause spec's head and guard tests on the input's elements):
/// checked first, as a list, they reject most inputs of a selective spec
/// without running the program. Pure tests joined by "and", so their order
/// does not matter. When the clause then only reads and succeeds, they
/// decide its match too.
#[derive(Clone, Debug, Default)]
pub(super) struct Needs {
    /// The input is a tuple of this arity (`None`: no such test leads).
    pub(super) arity: Option<u32>,
    /// Tests of the input's elements.
    pub(super) elements: Vec<Need>,
    /// How many ops the program starts with that are head tests among
    /// these (the reads and compares after them run again): where it goes
    /// on when every one holds.
    pub(super) resume: usize,
    /// What the clause matches with when every test holds, if nothing
    /// else can fail on the way.
    pub(super) result: Option<NeedResult>,
    /// The tests again, by element, when the input's arity is one that
    /// [`decide`](WireProgram::decide) indexes on the stack and no element
    /// has two: then each is tested as the scan reaches its element.
    pub(super) by_element: Option<Box<[Option<NeedTest>]>>,
}

/// A test of element `index` of the input.
#[derive(Clone, Copy, Debug)]
pub(super) struct Need {
    pub(super) index: u32,
    pub(super) test: NeedTest,
}

/// What a [`Need`] tests.
#[derive(Clone, Copy, Debug)]
pub(super) enum NeedTest {
    /// The element is the atom literal number `literal`, whose
    /// [`AtomWord`] is kept here so that the check mostly reads nothing
    /// else.
    Atom { word: AtomWord, literal: u32 },
    /// The element is literal number `literal`.
    Literal { literal: u32 },
    /// `element op value`, the element an integer.
    Compare { op: Cmp, value: i64 },
}

/// The result of a clause the [`Needs`] decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NeedResult {
    /// The whole input (`'$_'`).
    Input,
    /// One of its elements.
    Element(u32),
}

impl Needs {
    /// The tests at the start of `code` that fail to no match.
    fn of(code: &[WireOp], literals: &[Literal], registers: usize) -> Needs {
        let fails_to_no_match = |mut label: Label| {
            // Follow a few jumps: a clause's failure may jump to the end.
            for _ in 0..4 {
                match code.get(label.index()) {
                    Some(WireOp::NoMatch) => return true,
                    Some(&WireOp::Jump { target }) => label = target,
                    _ => return false,
                }
            }
            false
        };
        // Which part of the input each register holds, as far as read.
        let mut holds: Vec<Option<NeedResult>> = vec![None; registers.max(1)];
        holds[Reg::INPUT.index()] = Some(NeedResult::Input);
        let held =
            |holds: &[Option<NeedResult>], reg: Reg| holds.get(reg.index()).copied().flatten();
        let mut needs = Needs::default();
        let mut tests_only = true;
        for op in code {
            let test = matches!(op, WireOp::IsTuple { .. } | WireOp::IsElement { .. });
            // A read: the register it writes, and the part of the input it
            // then holds.
            let read = match *op {
                WireOp::IsTuple { src: Reg::INPUT, arity, fail }
                    if needs.arity.is_none() && fails_to_no_match(fail) =>
                {
                    needs.arity = Some(arity);
                    None
                }
                WireOp::IsElement { src: Reg::INPUT, index, literal, fail }
                    if needs.arity.is_some() && fails_to_no_match(fail) =>
                {
                    let test = match literals.get(literal as usize) {
                        Some(&Literal::Atom { word: Some(word), .. }) => {
                            NeedTest::Atom { word, literal }
                        }
                        _ => NeedTest::Literal { literal },
                    };
                    needs.elements.push(Need { index, test });
                    None
                }
                WireOp::CompareSmall { op, src, value, fail }
                    if needs.arity.is_some() && fails_to_no_match(fail) =>
                {
                    let Some(NeedResult::Element(index)) = held(&holds, src) else { break };
                    needs.elements.push(Need { index, test: NeedTest::Compare { op, value } });
                    None
                }
                // Reads that change no test's input.
                WireOp::GetInputElement { index, dst }
                    if dst != Reg::INPUT && needs.arity.is_some() =>
                {
                    Some((dst, Some(NeedResult::Element(index))))
                }
                WireOp::Move { src, dst } if dst != Reg::INPUT => Some((dst, held(&holds, src))),
                WireOp::GetElement { dst, .. } if dst != Reg::INPUT => Some((dst, None)),
                WireOp::Succeed { src } if needs.arity.is_some() => {
                    needs.result = held(&holds, src);
                    break;
                }
                _ => break,
            };
            if let Some((dst, part)) = read {
                let Some(slot) = holds.get_mut(dst.index()) else { break };
                *slot = part;
            }
            tests_only &= test;
            if tests_only {
                needs.resume += 1;
            }
        }
        needs.by_element = needs.arity.and_then(|arity| by_element(&needs.elements, arity));
        needs
    }
}

/// `needs` by element of a tuple of `arity` elements, if that is at most
/// [`SMALL_ARITY`] and no element has two.
fn by_element(needs: &[Need], arity: u32) -> Option<Box<[Option<NeedTest>]>> {
    let arity = usize::try_from(arity).ok().filter(|&arity| arity <= SMALL_ARITY)?;
    let mut tests = vec![None; arity];
    for need in needs {
        let slot = tests.get_mut(need.index as usize)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(need.test);
    }
    Some(tests.into())
}

/// One op: a head test or read of the IR, on byte offsets; anything it
/// does not lower is [`WireOp::Decode`].
#[derive(Clone, Copy, Debug)]
pub(super) enum WireOp {
    IsTuple {
        src: Reg,
        arity: u32,
        fail: Label,
    },
    GetElement {
        src: Reg,
        index: u32,
        dst: Reg,
    },
    /// [`WireOp::GetElement`] of the input, whose elements are indexed.
    GetInputElement {
        index: u32,
        dst: Reg,
    },
    /// Element `index` of the tuple in `src` is literal `literal`.
    IsElement {
        src: Reg,
        index: u32,
        literal: u32,
        fail: Label,
    },
    /// `src` is literal `literal` (exactly, `=:=`).
    IsLiteral {
        src: Reg,
        literal: u32,
        fail: Label,
    },
    IsCons {
        src: Reg,
        fail: Label,
    },
    /// A plain term is never a map.
    IsMap {
        src: Reg,
        fail: Label,
    },
    /// Decided only when the bytes are equal; else decode.
    IsExactEq {
        a: Reg,
        b: Reg,
    },
    /// `src op literal`, the literal not an integer.
    CompareLiteral {
        op: Cmp,
        src: Reg,
        literal: u32,
        fail: Label,
    },
    /// `src op value`: [`WireOp::CompareLiteral`] of an integer.
    CompareSmall {
        op: Cmp,
        src: Reg,
        value: i64,
        fail: Label,
    },
    /// `a op b`, both read from the input.
    Compare {
        op: Cmp,
        a: Reg,
        b: Reg,
        fail: Label,
    },
    TypeTest {
        test: Bif,
        src: Reg,
        expect: bool,
        fail: Label,
    },
    Move {
        src: Reg,
        dst: Reg,
    },
    Jump {
        target: Label,
    },
    /// A clause matched; its result is the term in `src`, read from the
    /// input.
    Succeed {
        src: Reg,
    },
    NoMatch,
    /// Beyond what the wire decides: decode and run the spec.
    Decode,
}

/// A constant the wire compares with, in the forms the wire writes it.
#[derive(Clone, Debug)]
pub(super) enum Literal {
    Small(i64),
    /// An atom's name in UTF-8, and in Latin-1 if every character fits.
    Atom {
        utf8: Box<[u8]>,
        latin1: Option<Box<[u8]>>,
        /// The start of how `term_to_binary/1` writes it
        /// (`SMALL_ATOM_UTF8_EXT`, the length and the name) as one word
        /// (`None`: a name too long for that encoding).
        word: Option<AtomWord>,
    },
    Nil,
    /// Anything else: the wire does not decide against it.
    Other,
}

impl Literal {
    fn of(word: Word) -> Literal {
        if let Some(value) = word.as_small() {
            return Literal::Small(value);
        }
        if word.is_nil() {
            return Literal::Nil;
        }
        match word.as_atom() {
            Some(atom) => {
                let name = atom.name();
                let latin1 = name.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                let word = u8::try_from(name.len()).ok().map(|len| {
                    AtomWord::of(
                        &[&[crate::etf::tag::SMALL_ATOM_UTF8_EXT, len], name.as_bytes()].concat(),
                    )
                });
                Literal::Atom { utf8: name.as_bytes().into(), latin1, word }
            }
            None => Literal::Other,
        }
    }
}

/// The first 8 bytes of an atom's usual encoding (`SMALL_ATOM_UTF8_EXT`,
/// length, name) as a little-endian word, and the mask of those that are
/// its: most atoms in the input are decided by one compare of a word read
/// where they start.
#[derive(Clone, Copy, Debug)]
pub(super) struct AtomWord {
    head: u64,
    mask: u64,
    /// The encoding fits the word: equal words are the atom.
    whole: bool,
}

impl NeedTest {
    /// The test as [`ScanCode`] is told to make it.
    pub(super) fn public(self) -> ElementTest {
        match self {
            NeedTest::Atom { word, .. } => {
                ElementTest::Atom { head: word.head, mask: word.mask, whole: word.whole }
            }
            NeedTest::Compare { op, value } => ElementTest::Compare { op, value },
            NeedTest::Literal { .. } => ElementTest::Other,
        }
    }
}

impl AtomWord {
    fn of(encoded: &[u8]) -> AtomWord {
        let mut first = [0; 8];
        let known = encoded.len().min(8);
        first[..known].copy_from_slice(&encoded[..known]);
        let mask = if known == 8 { u64::MAX } else { (1 << (8 * known)) - 1 };
        AtomWord { head: u64::from_le_bytes(first), mask, whole: encoded.len() <= 8 }
    }

    /// Is the plain term whose encoding starts with the 8 bytes `window`
    /// this atom? `None`: not decided by them.
    #[inline(always)]
    pub(super) fn test(self, window: u64) -> Option<bool> {
        if (window ^ self.head) & self.mask != 0 {
            // In the usual encoding too, a different atom; in another
            // (Latin-1, a long length field) the same name may follow.
            return (window as u8 == crate::etf::tag::SMALL_ATOM_UTF8_EXT).then_some(false);
        }
        self.whole.then_some(true)
    }
}

impl WireProgram {
    /// The wire program of `program`, if it is a table spec's.
    pub fn lower(program: &Program) -> Option<WireProgram> {
        if program.kind() != Kind::Table {
            return None;
        }
        let constants =
            program.first_constant()..program.first_constant() + program.constants().len();
        let mut literals = Vec::new();
        let mut literal = |word: Word| {
            literals.push(Literal::of(word));
            (literals.len() - 1) as u32
        };
        let constant = |reg: Reg| {
            constants
                .contains(&reg.index())
                .then(|| program.constants()[reg.index() - constants.start])
        };
        let code: Vec<WireOp> = program
            .code()
            .iter()
            .map(|&op| match op {
                Op::IsTuple { src, arity, fail } => WireOp::IsTuple { src, arity, fail },
                Op::GetElement { src: Reg::INPUT, index, dst } => {
                    WireOp::GetInputElement { index, dst }
                }
                Op::GetElement { src, index, dst } => WireOp::GetElement { src, index, dst },
                Op::IsElement { src, index, word, fail } => {
                    WireOp::IsElement { src, index, literal: literal(word), fail }
                }
                Op::IsWord { src, word, fail } => {
                    WireOp::IsLiteral { src, literal: literal(word), fail }
                }
                Op::IsCons { src, fail } => WireOp::IsCons { src, fail },
                Op::IsMap { src, fail, .. } => WireOp::IsMap { src, fail },
                Op::IsExactEq { a, b, fail } => match (constant(a), constant(b)) {
                    (None, None) => WireOp::IsExactEq { a, b },
                    (None, Some(word)) => compare_with(Cmp::ExactEq, a, word, fail, &mut literal),
                    (Some(word), None) => compare_with(Cmp::ExactEq, b, word, fail, &mut literal),
                    (Some(_), Some(_)) => WireOp::Decode,
                },
                Op::Compare { op, a, b, fail } => match (constant(a), constant(b)) {
                    (None, None) => WireOp::Compare { op, a, b, fail },
                    (None, Some(word)) => compare_with(op, a, word, fail, &mut literal),
                    (Some(word), None) => compare_with(op.swapped(), b, word, fail, &mut literal),
                    (Some(_), Some(_)) => WireOp::Decode,
                },
                Op::TypeTest { test, src, expect, fail } if constant(src).is_none() => {
                    WireOp::TypeTest { test, src, expect, fail }
                }
                Op::Move { src, dst } if constant(src).is_none() => WireOp::Move { src, dst },
                Op::Jump { target } => WireOp::Jump { target },
                Op::Succeed { result } if constant(result).is_none() => {
                    WireOp::Succeed { src: result }
                }
                Op::NoMatch => WireOp::NoMatch,
                _ => WireOp::Decode,
            })
            .collect();
        let mut written: Vec<Reg> = code
            .iter()
            .filter_map(|op| match *op {
                WireOp::GetElement { dst, .. }
                | WireOp::GetInputElement { dst, .. }
                | WireOp::Move { dst, .. } => Some(dst),
                _ => None,
            })
            .collect();
        written.sort_unstable();
        written.dedup();
        let needs = Needs::of(&code, &literals, program.registers());
        Some(WireProgram {
            code,
            literals,
            registers: program.registers(),
            written,
            needs,
            scan_code: None,
        })
    }
}

/// `src op word`: an integer carried in the op, anything else a literal
/// of the table (`literal` adds one).
fn compare_with(
    op: Cmp,
    src: Reg,
    word: Word,
    fail: Label,
    literal: &mut impl FnMut(Word) -> u32,
) -> WireOp {
    match word.as_small() {
        Some(value) => WireOp::CompareSmall { op, src, value, fail },
        None => WireOp::CompareLiteral { op, src, literal: literal(word), fail },
    }
}
