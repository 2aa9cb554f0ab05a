//! Matching on the wire: a spec's head tests decided on external term
//! format bytes, before (and mostly instead of) decoding them.
//!
//! A filter over encoded terms spends most of its time decoding terms that
//! the spec then rejects on their first test. A [`WireProgram`] is a
//! lowering of the same IR the engines run: each head op (`is_tuple`,
//! `get_element`, `is_element`, `is_word`, `is_cons`, `is_map`,
//! `is_exact_eq`) and the guard tests that need only what the head reads
//! (`type_test`, `compare` of integers or atoms) read the encoded term in
//! place. It follows the program's own jumps, so it decides what the
//! engines would decide for as long as it can:
//!
//! * every clause fails: [`Verdict::NoMatch`], and the term is never
//!   decoded;
//! * a clause matches whose result is a part of the input (a variable or
//!   `'$_'`, as a selective spec's often is): [`Verdict::Match`], and the
//!   caller decodes that part alone;
//! * otherwise, at the first op it does not lower (a guard function, a
//!   body that builds), or on a term outside the plain subset it reads (see
//!   below): [`Verdict::Decode`], and the caller decodes the term and runs
//!   it on any engine from the start.
//!
//! So a rejection or a match on the wire is the answer the engines give,
//! and everything else is the engines' answer. It is its own lowering rather
//! than a mode of the interpreter and the JIT because both engines work on
//! words in a heap: teaching each to read bytes would double every op's
//! lowering, where this one needs only the head ops, serves every engine,
//! and hands a candidate to whichever engine runs the spec.
//!
//! # Plain terms
//!
//! The wire program reads only *plain* terms: integers of up to 32 bits,
//! finite floats, atoms, `[]`, strings, lists, tuples, binaries, pids and
//! small maps with integer or ASCII atom keys (what trace messages are
//! made of), every
//! one of which decodes without error and without being normalised. On them
//! an encoding means exactly one term (checked once per term by a scan that
//! builds nothing). Any other term (a map, a bignum, a pid, a compressed
//! term, or bytes that do not decode) is [`Verdict::Decode`]: the decoder
//! then gives the term or the error, exactly as without the wire program.
//!
//! One difference remains, on purpose: a rejected term's atoms are never
//! made, so a stream of new atoms that the decoder would intern until the
//! atom table is full (and then fail) fills nothing on the wire.
//!
//! Only table specs have a wire program ([`WireProgram::lower`] gives
//! `None` for trace kinds: their input is an argument list, not a term).
//! A `CompiledSpec` lowers its own, and `Run::run_encoded` uses it on
//! every engine.
//!
//! ```
//! use matchspec::wire::Verdict;
//! use matchspec::{CompiledSpec, Config, Scratch, etf, spec::Kind, term::Term};
//!
//! let spec = CompiledSpec::compile("[{{'$1', no}, [], ['$1']}]", Kind::Table, &Config::default())?;
//! let wire = spec.wire().expect("a table spec");
//! let mut scratch = Scratch::new();
//! let ok = etf::encode(Term::parse("{7, ok}")?.as_ref())?;
//! let no = etf::encode(Term::parse("{8, no}")?.as_ref())?;
//! assert_eq!(wire.decide(&ok, &mut scratch), Verdict::NoMatch);
//! // Matched: the result, '$1', is the encoding at byte 3 (after the
//! // version byte and the tuple's header).
//! assert_eq!(wire.decide(&no, &mut scratch), Verdict::Match { result: 3 });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod code;
mod exec;
mod lower;

pub use code::{ElementTest, PlanResult, RunFraming, RunMatch, RunPassed, ScanCode, ScanPlan};
pub use lower::WireProgram;

/// The most elements of a tuple whose elements the wire program indexes
/// without allocating (and [`ScanCode`] scans).
pub const SMALL_ARITY: usize = 16;

/// What the wire program decided about one encoded term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The term is valid and no clause matches it.
    NoMatch,
    /// A clause matched, and its result is the part of the term that
    /// starts at byte `result` (byte 1: the whole term): decode only that.
    Match {
        /// Where the result's encoding starts in the term's bytes.
        result: usize,
    },
    /// Decode the term and run the spec on it: a clause may match, or the
    /// bytes are outside what the wire program reads.
    Decode,
}
