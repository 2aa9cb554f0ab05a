//! [`Run`]: the one run API. Every engine implements it, the interpreter
//! here (`CompiledSpec`), the JIT's machine code in
//! `matchspec-jit`, the engine choice in the `msc` facade; callers written
//! against it run on any of them.
//!
//! An engine supplies two methods: one input ([`Run::run`]) and a batch
//! ([`Run::run_batch`]). [`Run::run_each`] and [`Run::run_matching`] are
//! written once, here, over the batch.

use crate::encoded::built::{Built, EncodedOutcome};
use crate::etf::{self, DecodeError};
use crate::host::Host;
use crate::interp::encoded::{Ended, Results};
use crate::outcome::{EvalError, Flags, Matched, Outcome};
use crate::scratch::Scratch;
use crate::term::{Heap, TermRef, Word};
use crate::wire::{Verdict, WireProgram};

/// A batch run: inputs, terms of one heap, and which of their outcomes
/// to hand over.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'h> {
    /// The heap the inputs live in.
    pub heap: &'h Heap,
    /// The inputs, words of `heap` (for trace kinds, argument lists).
    pub inputs: &'h [Word],
    /// Which outcomes the engine hands over.
    pub report: Report,
}

impl<'h> Batch<'h> {
    /// The inputs `inputs`, terms of `heap`, reporting every outcome.
    pub fn new(heap: &'h Heap, inputs: &'h [Word]) -> Batch<'h> {
        Batch { heap, inputs, report: Report::Every }
    }

    /// The same inputs, reporting the outcomes `report` says.
    pub fn with_report(self, report: Report) -> Batch<'h> {
        Batch { report, ..self }
    }
}

/// Which outcomes of a batch an engine hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Every input's, in order.
    Every,
    /// Only the matches, and the inputs that cannot run at all: what a
    /// filter wants, as `ets:select/2` returns only the matches. Engines
    /// may skip the no-matches without a call back at all.
    Matching,
}

/// Runs a compiled spec: the API every engine implements.
///
/// Outcomes are lent to the caller (copy one to keep it): an engine that
/// hands over many results of one run then writes only what changes
/// between them. Trace actions go to `host`; a spec run on its own answers
/// as the process calling `erlang:match_spec_test/3` would with
/// [`TestHost`](crate::TestHost).
///
/// ```
/// use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, spec::Kind};
/// use matchspec::run::Batch;
/// use matchspec::syntax::parse_terms_into;
/// use matchspec::term::Heap;
///
/// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default()).unwrap();
/// let mut heap = Heap::new();
/// let rows = parse_terms_into("{a, ok}. {b, error}. {c, ok}.", &mut heap).unwrap();
/// let mut kept = Vec::new();
/// spec.run_matching(Batch::new(&heap, &rows), &mut Scratch::new(), &mut TestHost::default(), |i, outcome| {
///     if let Ok(outcome) = outcome && let Some(result) = outcome.result() {
///         kept.push((i, result.to_string()));
///     }
/// });
/// assert_eq!(kept, [(0, "a".to_string()), (2, "c".to_string())]);
/// ```
pub trait Run {
    /// Runs the spec on `input` (for trace kinds, the argument list).
    fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError>;

    /// Runs the spec on each input of `batch` in order, handing the
    /// outcomes the batch's [`Report`] asks for to `each` (with the
    /// input's index) before the next input runs: what a filter does,
    /// without the cost of starting a run per input.
    fn run_batch<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>);

    /// The spec's head tests on encoded terms, if it has them (table
    /// specs): what [`run_encoded`](Run::run_encoded) decides on the wire.
    fn wire_program(&self) -> Option<&WireProgram>;

    /// Runs the spec on one term in the external term format (`bytes`,
    /// version byte first, nothing after it), deciding on the bytes
    /// themselves where the wire program can (see [`wire`](crate::wire)):
    /// a term every clause's head rejects is never decoded, and of a match
    /// whose result is a part of the term only that part is. Otherwise the
    /// term is decoded into `heap` (added to what it holds: clear it
    /// between terms) and run. The answers are those of decoding first,
    /// always; a term that does not decode is the decoder's error.
    ///
    /// ```
    /// use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, etf, spec::Kind, term::{Heap, Term}};
    ///
    /// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default())?;
    /// let (mut heap, mut scratch, mut host) = (Heap::new(), Scratch::new(), TestHost::default());
    /// let bytes = etf::encode(Term::parse("{7, ok}")?.as_ref())?;
    /// let outcome = spec.run_encoded(&bytes, &mut heap, &mut scratch, &mut host)??;
    /// assert_eq!(outcome.result().unwrap().to_string(), "7");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn run_encoded<'a>(
        &'a self,
        bytes: &[u8],
        heap: &'a mut Heap,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Result<Outcome<'a>, EvalError>, DecodeError> {
        let verdict = match self.wire_program() {
            Some(wire) => wire.decide(bytes, scratch),
            None => Verdict::Decode,
        };
        self.run_verdict(bytes, verdict, heap, scratch, host)
    }

    /// Finishes [`run_encoded`](Run::run_encoded) after the spec's
    /// [wire program](Run::wire_program) gave `verdict` on `bytes` (or
    /// without it: [`Verdict::Decode`] always gives the engines' answer):
    /// for a caller that decides for itself when the wire pays.
    fn run_verdict<'a>(
        &'a self,
        bytes: &[u8],
        verdict: Verdict,
        heap: &'a mut Heap,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Result<Outcome<'a>, EvalError>, DecodeError> {
        match verdict {
            Verdict::NoMatch => Ok(Ok(Outcome::NoMatch)),
            Verdict::Match { result } => {
                let word = etf::decode_subterm(bytes, result, heap)?;
                let heap: &'a Heap = heap;
                Ok(Ok(Outcome::Match(Matched { result: heap.view(word), flags: Flags::default() })))
            }
            Verdict::Run => {
                let Some(wire) = self.wire_program() else {
                    return self.run_verdict(bytes, Verdict::Decode, heap, scratch, host);
                };
                match wire.run_plain(bytes, Results::Words, scratch, host) {
                    Some(Ended::NoMatch) => Ok(Ok(Outcome::NoMatch)),
                    Some(Ended::Built(result)) => Ok(Ok(wire.built(result, scratch))),
                    Some(Ended::Part(at)) => {
                        let word = etf::decode_subterm(bytes, at as usize, heap)?;
                        let heap: &'a Heap = heap;
                        Ok(Ok(Outcome::Match(Matched {
                            result: heap.view(word),
                            flags: Flags::default(),
                        })))
                    }
                    // (A run for words ends with none; else decoding is
                    // the answer too.)
                    Some(Ended::Pieces(_)) | None => {
                        self.run_verdict(bytes, Verdict::Decode, heap, scratch, host)
                    }
                }
            }
            Verdict::Decode => {
                let word = etf::decode_into(bytes, heap)?;
                let heap: &'a Heap = heap;
                Ok(self.run(heap.view(word), scratch, host))
            }
        }
    }

    /// [`run_verdict`](Run::run_verdict) for a caller that writes the
    /// result out (as text or encoded): a result that is a part of the
    /// term, or a tuple the program builds of parts, stays in the bytes
    /// ([`EncodedOutcome::Built`]), and only what the spec computes is
    /// decoded. The result is the same term as `run_verdict`'s.
    fn run_verdict_built<'a>(
        &'a self,
        bytes: &'a [u8],
        verdict: Verdict,
        heap: &'a mut Heap,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Result<EncodedOutcome<'a>, EvalError>, DecodeError> {
        let decoded =
            |outcome: Result<Outcome<'a>, EvalError>| outcome.map(EncodedOutcome::Outcome);
        match verdict {
            Verdict::NoMatch => Ok(Ok(EncodedOutcome::Outcome(Outcome::NoMatch))),
            Verdict::Match { result } => match u32::try_from(result) {
                Ok(at) => Ok(Ok(EncodedOutcome::Built(Built::part(bytes, at)))),
                Err(_) => Ok(decoded(self.run_verdict(bytes, verdict, heap, scratch, host)?)),
            },
            Verdict::Run => {
                let Some(wire) = self.wire_program() else {
                    return Ok(decoded(self.run_verdict(bytes, verdict, heap, scratch, host)?));
                };
                match wire.run_plain(bytes, Results::InBytes, scratch, host) {
                    Some(Ended::NoMatch) => Ok(Ok(EncodedOutcome::Outcome(Outcome::NoMatch))),
                    Some(Ended::Built(result)) => {
                        Ok(Ok(EncodedOutcome::Outcome(wire.built(result, scratch))))
                    }
                    Some(Ended::Part(at)) => Ok(Ok(EncodedOutcome::Built(Built::part(bytes, at)))),
                    Some(Ended::Pieces(root)) => {
                        Ok(Ok(EncodedOutcome::Built(wire.built_in(bytes, root, scratch))))
                    }
                    None => Ok(decoded(self.run_verdict(
                        bytes,
                        Verdict::Decode,
                        heap,
                        scratch,
                        host,
                    )?)),
                }
            }
            Verdict::Decode => Ok(decoded(self.run_verdict(bytes, verdict, heap, scratch, host)?)),
        }
    }

    /// [`run_batch`](Run::run_batch), handing over every outcome.
    #[inline]
    fn run_each<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        self.run_batch(batch.with_report(Report::Every), scratch, host, each);
    }

    /// [`run_batch`](Run::run_batch), handing over only the matches (and
    /// the inputs that cannot run).
    #[inline]
    fn run_matching<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        self.run_batch(batch.with_report(Report::Matching), scratch, host, each);
    }
}
