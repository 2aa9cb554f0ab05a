//! The tests every match needs, read off the IR: a prefilter derived
//! from the program, checked on the input's elements before the byte
//! engine runs it.

use std::sync::Arc;

use super::SMALL_ARITY;
use super::ScanCode;
use crate::ir::{Cmp, Encoded, Label, Op, Program, Reg};
use crate::term::{Atom, Word};

/// A table spec's program as it runs on encoded terms (see the [module
/// documentation](super)).
#[derive(Clone, Debug)]
pub struct WireProgram {
    pub(super) program: Arc<Program>,
    /// Which of its registers hold positions in the bytes.
    pub(super) encoded: Encoded,
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
///
/// Read off the program once ([`WireProgram::lower`]), this is the only
/// prefilter: the usual path tests it on each term
/// ([`WireProgram::decide`]), and [`ScanCode`] is machine code made from
/// it ([`Needs::by_element`], [`Needs::result`]).
///
/// ```
/// use matchspec::wire::{NeedResult, NeedTest};
/// use matchspec::{CompiledSpec, Config, spec::Kind};
///
/// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default())?;
/// let needs = spec.wire().expect("a table spec").needs();
/// // A tuple of two: no test of the first element, the atom `ok` second.
/// let tests = needs.by_element().expect("by element");
/// assert!(tests[0].is_none() && matches!(tests[1], Some(NeedTest::Atom { .. })));
/// // When they hold, the match is the first element.
/// assert_eq!(needs.result(), Some(NeedResult::Element(0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Needs {
    /// The input is a tuple of this arity (`None`: no such test leads).
    pub(super) arity: Option<u32>,
    /// Tests of the input's elements.
    pub(super) elements: Vec<Need>,
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

/// What a need tests of one element of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeedTest {
    /// The element is the atom `atom`, whose [`AtomWord`] is kept here so
    /// that the check mostly reads nothing else.
    Atom {
        /// The first bytes of the atom's usual encoding.
        word: AtomWord,
        /// The atom.
        atom: Atom,
    },
    /// The element is the immediate `word` (exactly).
    Immediate {
        /// The immediate.
        word: Word,
    },
    /// `element op value`, the element an integer (and undecided by this
    /// test for any other term).
    Compare {
        /// The comparison (equalities compare the integers).
        op: Cmp,
        /// The constant.
        value: i64,
    },
}

/// The result of a clause the [`Needs`] decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeedResult {
    /// The whole input (`'$_'`).
    Input,
    /// One of its elements (below the input's arity).
    Element(u32),
}

impl Needs {
    /// The tests by element of the input, a tuple of
    /// `by_element().len()` elements (at most [`SMALL_ARITY`]), when they
    /// start with the input's arity and no element has two: then each is
    /// tested as a scan reaches its element. `None` for any other needs.
    pub fn by_element(&self) -> Option<&[Option<NeedTest>]> {
        self.by_element.as_deref()
    }

    /// What a match is when every test holds, if the clause then only
    /// reads and succeeds.
    pub fn result(&self) -> Option<NeedResult> {
        self.result
    }

    /// The tests at the start of `program` that fail to no match.
    fn of(program: &Program) -> Needs {
        let code = program.code();
        let fails_to_no_match = |mut label: Label| {
            // Follow a few jumps: a clause's failure may jump to the end.
            for _ in 0..4 {
                match code.get(label.index()) {
                    Some(Op::NoMatch) => return true,
                    Some(&Op::Jump { target }) => label = target,
                    _ => return false,
                }
            }
            false
        };
        let constants =
            program.first_constant()..program.first_constant() + program.constants().len();
        let small_constant = |reg: Reg| {
            constants
                .contains(&reg.index())
                .then(|| program.constants()[reg.index() - constants.start].as_small())
                .flatten()
        };
        // Which part of the input each register holds, as far as read.
        let mut holds: Vec<Option<NeedResult>> = vec![None; program.registers().max(1)];
        holds[Reg::INPUT.index()] = Some(NeedResult::Input);
        let held =
            |holds: &[Option<NeedResult>], reg: Reg| holds.get(reg.index()).copied().flatten();
        let mut needs = Needs::default();
        for op in code {
            // A read: the register it writes, and the part of the input it
            // then holds.
            let read = match *op {
                Op::IsTuple { src: Reg::INPUT, arity, fail }
                    if needs.arity.is_none() && fails_to_no_match(fail) =>
                {
                    needs.arity = Some(arity);
                    None
                }
                Op::IsElement { src: Reg::INPUT, index, word, fail }
                    if needs.arity.is_some() && fails_to_no_match(fail) =>
                {
                    let test = match word.as_atom() {
                        Some(atom) => match AtomWord::of_atom(atom) {
                            Some(atom_word) => NeedTest::Atom { word: atom_word, atom },
                            None => NeedTest::Immediate { word },
                        },
                        None => NeedTest::Immediate { word },
                    };
                    needs.elements.push(Need { index, test });
                    None
                }
                Op::Compare { op, a, b, fail }
                    if needs.arity.is_some() && fails_to_no_match(fail) =>
                {
                    let (op, src, value) = match (small_constant(a), small_constant(b)) {
                        (None, Some(value)) => (op, a, value),
                        (Some(value), None) => (op.swapped(), b, value),
                        _ => break,
                    };
                    let Some(NeedResult::Element(index)) = held(&holds, src) else { break };
                    needs.elements.push(Need { index, test: NeedTest::Compare { op, value } });
                    None
                }
                Op::GetElement { src: Reg::INPUT, index, dst }
                    if dst != Reg::INPUT && needs.arity.is_some() =>
                {
                    Some((dst, Some(NeedResult::Element(index))))
                }
                Op::Move { src, dst } if dst != Reg::INPUT => Some((dst, held(&holds, src))),
                Op::GetElement { dst, .. } if dst != Reg::INPUT => Some((dst, None)),
                Op::Succeed { result } if needs.arity.is_some() => {
                    needs.result = held(&holds, result);
                    break;
                }
                _ => break,
            };
            if let Some((dst, part)) = read {
                let Some(slot) = holds.get_mut(dst.index()) else { break };
                *slot = part;
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

/// The first 8 bytes of an atom's usual encoding (`SMALL_ATOM_UTF8_EXT`,
/// length, name) as a little-endian word, and the mask of those that are
/// its: most atoms in the input are decided by one compare of a word read
/// where they start ([`AtomWord::test`] says how; an engine's lowering
/// does the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomWord {
    /// The encoding's first 8 bytes (zeros past its end), little-endian.
    pub head: u64,
    /// The bytes of `head` that are the encoding's.
    pub mask: u64,
    /// The encoding fits the word: equal words are the atom.
    pub whole: bool,
}

impl AtomWord {
    /// The word of `atom`'s usual encoding, if its name fits it
    /// (`SMALL_ATOM_UTF8_EXT`: at most 255 bytes).
    fn of_atom(atom: Atom) -> Option<AtomWord> {
        let name = atom.name();
        let len = u8::try_from(name.len()).ok()?;
        Some(AtomWord::of(
            &[&[crate::etf::tag::SMALL_ATOM_UTF8_EXT, len], name.as_bytes()].concat(),
        ))
    }

    fn of(encoded: &[u8]) -> AtomWord {
        let mut first = [0; 8];
        let known = encoded.len().min(8);
        first[..known].copy_from_slice(&encoded[..known]);
        let mask = if known == 8 { u64::MAX } else { (1 << (8 * known)) - 1 };
        AtomWord { head: u64::from_le_bytes(first), mask, whole: encoded.len() <= 8 }
    }

    /// Is the plain term whose encoding starts with the 8 bytes `window`
    /// (little-endian) this atom? `None`: not decided by them.
    #[inline(always)]
    pub fn test(self, window: u64) -> Option<bool> {
        if (window ^ self.head) & self.mask != 0 {
            // In the usual encoding too, a different atom; in another
            // (Latin-1, a long length field) the same name may follow.
            return (window as u8 == crate::etf::tag::SMALL_ATOM_UTF8_EXT).then_some(false);
        }
        self.whole.then_some(true)
    }
}

impl WireProgram {
    /// The program of a table spec as it runs on encoded terms; `None` for
    /// trace kinds, whose input is an argument list, not a term.
    pub fn lower(program: &Arc<Program>) -> Option<WireProgram> {
        let encoded = Encoded::of(program).ok()?;
        let needs = Needs::of(program);
        Some(WireProgram { program: Arc::clone(program), encoded, needs, scan_code: None })
    }

    /// The program it runs.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Which of the program's registers hold parts of the input.
    pub fn encoded(&self) -> &Encoded {
        &self.encoded
    }

    /// The tests every match needs.
    pub fn needs(&self) -> &Needs {
        &self.needs
    }
}
