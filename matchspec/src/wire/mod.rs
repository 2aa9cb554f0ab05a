//! Matching on the wire: a table spec run on external term format bytes,
//! before (and mostly instead of) decoding them.
//!
//! A filter over encoded terms spends most of its time decoding terms that
//! the spec then rejects on their first test. A [`WireProgram`] runs the
//! spec's own program on the bytes: [`decide`](WireProgram::decide) scans
//! the term once (finding where it ends and where the input's elements
//! start, and checking that it is *plain*, see [`encoded`](crate::encoded))
//! and tests on the elements the tests every match needs (a prefilter read
//! off the program: most terms a selective spec sees fail one). Then:
//!
//! * every clause fails: [`Verdict::NoMatch`], and the term is never
//!   decoded;
//! * the needs hold and the clause then only reads its result, a part of
//!   the input: [`Verdict::Match`], and the caller decodes that part alone;
//! * otherwise, for a plain term: [`Verdict::Run`], and
//!   `Run::run_verdict` (a layer above) runs the program on the
//!   bytes with the byte engine (`interp::encoded`), which decodes only the
//!   parts an op needs as words;
//! * for any other term: [`Verdict::Decode`], and the caller decodes the
//!   term and runs it on any engine: the decoder then gives the term or
//!   its error, exactly as without the wire program.
//!
//! So every answer is the one decoding first gives. One difference remains,
//! on purpose: a rejected term's atoms are never made, so a stream of new
//! atoms that the decoder would intern until the atom table is full (and
//! then fail) fills nothing on the wire.
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

pub use code::{Layout, RunMatch, RunPassed, ScanCode};
pub use lower::{AtomWord, NeedResult, NeedTest, Needs, WireProgram};

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
    /// The term is plain and the tests every match needs do not settle
    /// it: run the program on its bytes (`Run::run_verdict` does, a
    /// layer above).
    Run,
    /// Decode the term and run the spec on it: the bytes are not a plain
    /// term (see [`encoded`](crate::encoded)).
    Decode,
}
