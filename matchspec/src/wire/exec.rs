//! Deciding one encoded term: the input's elements indexed on the way
//! (the scan that also checks the term is plain), the needs tested on
//! them, and the byte engine run where they do not settle it.

use super::lower::{NeedResult, NeedTest, WireProgram};
use super::{SMALL_ARITY, Verdict};
use crate::Scratch;
use crate::encoded::built::{Built, Piece};
use crate::encoded::{Position, order, read};
use crate::etf::scan::{PlainIndex, small_tuple_arity, small_tuple_len};
use crate::etf::tag;
use crate::host::Host;
use crate::interp::encoded::{self as engine, Ended, OnBytes, Results};
use crate::ir::Cmp;
use crate::outcome::{Flags, Matched, Outcome};
use crate::term::{HeapSet, Word};

/// What [`WireProgram::needs_met`] found.
enum Met {
    /// A test fails: no match.
    No,
    /// Every test holds.
    Yes,
    /// Some test is not decided here: run the program from the start.
    Unknown,
}

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
                    self.decide_plain(bytes, elements, &mut scratch.plain)
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
        Some((len, self.decide_plain(bytes.get(..len)?, elements, &mut scratch.plain)))
    }

    /// [`decide`](WireProgram::decide) of anything but a small tuple of at
    /// most [`SMALL_ARITY`] elements.
    #[inline(never)]
    fn decide_other(&self, bytes: &[u8], scratch: &mut Scratch) -> Verdict {
        // Indexed where the byte engine looks for it: a `Run` is
        // remembered already.
        let plain = &mut scratch.plain;
        if plain.measure(bytes) != Some(bytes.len()) {
            plain.clear();
            return Verdict::Decode;
        }
        self.decide_needs(bytes, plain.elements_of(bytes).unwrap_or_default())
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
            Some(elements) => self.decide_plain(bytes, elements, &mut scratch.plain),
            None => self.decide(bytes, scratch),
        }
    }

    /// Decides a plain term whose top-level elements (if it is a tuple)
    /// start at `elements`; a term left to the byte engine is remembered in
    /// `plain` with its elements.
    #[inline(always)]
    fn decide_plain(&self, bytes: &[u8], elements: &[u32], plain: &mut PlainIndex) -> Verdict {
        let verdict = self.decide_needs(bytes, elements);
        if verdict == Verdict::Run {
            plain.remember(bytes, elements);
        }
        verdict
    }

    /// What the needs decide of a plain term.
    #[inline(always)]
    fn decide_needs(&self, bytes: &[u8], elements: &[u32]) -> Verdict {
        match self.needs_met(bytes, elements) {
            Met::No => Verdict::NoMatch,
            Met::Yes => match self.needs.result {
                // The clause reads nothing more that could fail.
                Some(NeedResult::Input) => Verdict::Match { result: 1 },
                Some(NeedResult::Element(index)) => match elements.get(index as usize) {
                    Some(&at) => Verdict::Match { result: at as usize },
                    None => self.run_or_decode(bytes),
                },
                None => self.run_or_decode(bytes),
            },
            Met::Unknown => self.run_or_decode(bytes),
        }
    }

    /// [`Verdict::Run`], unless the term is long for the program: the byte
    /// engine finds a list's rest by skipping its head, so a head as deep
    /// as a long program takes time of the term's length times the
    /// program's, where decoding it whole takes its length alone.
    #[inline]
    fn run_or_decode(&self, bytes: &[u8]) -> Verdict {
        /// The most bytes times ops run on bytes.
        const MOST_WORK: u64 = 1 << 26;
        let work = bytes.len() as u64 * self.program.code().len() as u64;
        if work <= MOST_WORK { Verdict::Run } else { Verdict::Decode }
    }

    /// Runs the program on the plain term `bytes` (one that
    /// [`decide`](WireProgram::decide) gave [`Verdict::Run`]) with the byte
    /// engine, leaving what it built in `scratch`: `None` if the bytes are
    /// not a plain term after all (then decode them and run the spec).
    pub(crate) fn run_plain(
        &self,
        bytes: &[u8],
        results: Results,
        scratch: &mut Scratch,
        host: &mut dyn Host,
    ) -> Option<Ended> {
        // The index `decide` made, or a scan now: the engine reads only
        // plain terms.
        let mut index = std::mem::take(&mut scratch.plain);
        if index.elements_of(bytes).is_none() && index.measure(bytes) != Some(bytes.len()) {
            index.clear();
        }
        let ended = match index.elements_of(bytes) {
            Some(elements) => {
                let run = OnBytes { program: &self.program, encoded: &self.encoded, results };
                engine::run(run, bytes, elements, scratch, host)
            }
            None => None,
        };
        scratch.plain = index;
        ended
    }

    /// The outcome of a clause that matched with `result`, a word
    /// [`run_plain`](WireProgram::run_plain) left in `scratch`.
    pub(crate) fn built<'a>(&'a self, result: Word, scratch: &'a Scratch) -> Outcome<'a> {
        Outcome::Match(Matched {
            result: self.heaps(scratch).term(result),
            flags: Flags::default(),
        })
    }

    /// The result `root` that [`run_plain`](WireProgram::run_plain) left in
    /// the bytes and `scratch`.
    pub(crate) fn built_in<'a>(
        &'a self,
        bytes: &'a [u8],
        root: Piece,
        scratch: &'a Scratch,
    ) -> Built<'a> {
        let release = self.program.release();
        Built::new(bytes, &scratch.encoded.pieces, root, self.heaps(scratch), release)
    }

    /// The heaps of what a run on bytes built.
    fn heaps<'a>(&'a self, scratch: &'a Scratch) -> HeapSet<'a> {
        HeapSet::new(&[], self.program.literals().words(), scratch.heap().words())
    }

    /// Whether the plain term passes the tests every match needs (see
    /// [`Needs`](super::lower::Needs)).
    #[inline(always)]
    fn needs_met(&self, bytes: &[u8], elements: &[u32]) -> Met {
        let Some(arity) = self.needs.arity else { return Met::Unknown };
        // The scan indexed every element of a tuple and none of anything
        // else: only an empty tuple is told apart by its tag.
        if elements.len() != arity as usize || (arity == 0 && !is_tuple(bytes, 1)) {
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
        let at = u32::try_from(at).ok()?;
        match test {
            NeedTest::Atom { atom, .. } => read::is_atom(bytes, at, atom),
            NeedTest::Immediate { word } => {
                order::eq_exact(bytes, Position::Term(at), HeapSet::new(&[], &[], &[]).term(word))
            }
            NeedTest::Compare { .. } => None,
        }
    }
}

/// The 8 bytes at `at` as a little-endian word, if there are 8.
#[inline(always)]
fn window(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..)?.first_chunk::<8>().map(|w| u64::from_le_bytes(*w))
}

/// Is the term at `at` a tuple?
#[inline]
fn is_tuple(bytes: &[u8], at: usize) -> bool {
    matches!(bytes.get(at), Some(&(tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT)))
}

/// Does `integer op value` hold of the integer at `at`? `None`: it is no
/// integer.
#[inline]
fn compare_small(bytes: &[u8], at: usize, op: Cmp, value: i64) -> Option<bool> {
    let integer = read::integer(bytes, u32::try_from(at).ok()?)?;
    Some(op.of_ordering(integer.cmp(&value)))
}
