//! [`Filter`]: a spec over every entry of a stream, the outcomes handed to
//! a [`Sink`] in input order.

use std::io;

use matchspec::encoded::built::{Built, EncodedOutcome};
use matchspec::etf::{self, DecodeError};
use matchspec::term::Heap;
use matchspec::wire::Verdict;
use matchspec::{EvalError, Flags, Host, Matched, Outcome, Run, Scratch, TestHost};

use super::{Entries, StreamError, WireMatch};

/// One entry of a stream, as a [`Sink`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// Its number in the stream, from 1.
    pub number: u64,
    /// The byte offset where it starts (its length prefix, if framed).
    pub offset: u64,
    /// Its term, undecoded (version byte first).
    pub bytes: &'a [u8],
}

/// Where a [`Filter`] hands what it decided.
pub trait Sink {
    /// What the spec made of `entry`, in input order. No-matches are
    /// handed over too (most sinks ignore them); an `Err` outcome is an
    /// input the spec cannot run on at all (a trace spec given something
    /// that is not an argument list).
    fn decided(
        &mut self,
        entry: Entry<'_>,
        outcome: Result<&Outcome<'_>, &EvalError>,
    ) -> io::Result<()>;

    /// A bad entry was skipped ([`Filter::skip_bad`]).
    fn skipped(&mut self, error: &StreamError) -> io::Result<()> {
        let _ = error;
        Ok(())
    }

    /// Does it want the no-matches too? If not, the filter hands over
    /// only the matches and the inputs the spec cannot run on, and a
    /// selective spec's rejections cost no call at all.
    fn wants_no_matches(&self) -> bool {
        true
    }

    /// Does it take results left in the entry's bytes
    /// ([`matched_bytes`](Sink::matched_bytes))? A sink that writes
    /// results out (encoded or as text) then copies or prints the parts
    /// of the input they are made of, and nothing is decoded for them.
    fn takes_bytes(&self) -> bool {
        false
    }

    /// A match whose result the filter left in the entry's bytes, in input
    /// order: handed over instead of [`decided`](Sink::decided) to a sink
    /// that [`takes_bytes`](Sink::takes_bytes). By default, the result
    /// decoded and handed to `decided`.
    fn matched_bytes(&mut self, entry: Entry<'_>, result: &Built<'_>) -> io::Result<()> {
        let term = result.to_term().map_err(io::Error::other)?;
        let matched = Matched { result: term.as_ref(), flags: Flags::default() };
        self.decided(entry, Ok(&Outcome::Match(matched)))
    }

    /// Every 4,096 entries: `entries` read so far, and the stream offset
    /// where the entry after them starts (for a progress report).
    fn progress(&mut self, entries: u64, offset: u64) {
        let _ = (entries, offset);
    }
}

/// What a [`Filter`] run counted, and the error that stopped it, if one did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Entries the spec ran on.
    pub entries: u64,
    /// Of those, the ones a clause matched.
    pub matched: u64,
    /// Of those, the ones the spec could not run on.
    pub not_runnable: u64,
    /// Bad entries skipped.
    pub skipped: u64,
    /// The bad entry that stopped the stream: everything before it was
    /// handed to the sink.
    pub stopped: Option<StreamError>,
}

impl Summary {
    /// Counts one entry the spec ran on.
    pub fn count(&mut self, outcome: Result<&Outcome<'_>, &EvalError>) {
        self.entries += 1;
        match outcome {
            Ok(Outcome::Match(_)) => self.matched += 1,
            Ok(Outcome::NoMatch) => {}
            Err(_) => self.not_runnable += 1,
        }
    }

    /// Adds the counts of a later part of the stream, and its error.
    pub fn add(&mut self, later: Summary) {
        self.entries += later.entries;
        self.matched += later.matched;
        self.not_runnable += later.not_runnable;
        self.skipped += later.skipped;
        if later.stopped.is_some() {
            self.stopped = later.stopped;
        }
    }
}

/// Runs a spec over a stream of encoded terms, deciding each entry on the
/// wire where the spec's heads allow and decoding it otherwise
/// ([`Run::run_encoded`]).
///
/// ```
/// use msc::stream::{EtfReader, Entry, Filter, Sink};
/// use msc::{EvalError, Kind, Outcome, Spec, Term, etf};
///
/// /// Keeps the results as text.
/// struct Results(Vec<String>);
///
/// impl Sink for Results {
///     fn decided(&mut self, _: Entry<'_>, outcome: Result<&Outcome<'_>, &EvalError>) -> std::io::Result<()> {
///         if let Ok(Outcome::Match(m)) = outcome {
///             self.0.push(m.result.to_string());
///         }
///         Ok(())
///     }
/// }
///
/// let mut bytes = Vec::new();
/// for text in ["{1, ok}", "{2, no}", "{3, ok}"] {
///     bytes.extend(etf::encode(Term::parse(text)?.as_ref())?);
/// }
/// let spec = Spec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table)?;
/// let mut results = Results(Vec::new());
/// let summary = Filter::new(&spec).run(&mut EtfReader::new(&bytes[..]), &mut results)?;
/// assert_eq!(results.0, ["1", "3"]);
/// assert_eq!((summary.entries, summary.matched), (3, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Filter<'s, S: ?Sized> {
    spec: &'s S,
    skip_bad: bool,
    /// The number of the reader's first entry in a larger stream, less one,
    /// and the stream's offset of the reader's first byte.
    entry_base: u64,
    offset_base: u64,
    host: Box<dyn Host + 's>,
}

impl<S: ?Sized> std::fmt::Debug for Filter<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("skip_bad", &self.skip_bad).finish_non_exhaustive()
    }
}

impl<'s, S: Run + ?Sized> Filter<'s, S> {
    /// A filter running `spec`, answering trace actions as
    /// `erlang:match_spec_test/3` would ([`TestHost`]).
    pub fn new(spec: &'s S) -> Filter<'s, S> {
        Filter {
            spec,
            skip_bad: false,
            entry_base: 0,
            offset_base: 0,
            host: Box::new(TestHost::default()),
        }
    }

    /// Skip entries that do not decode or are too long, counting them,
    /// instead of stopping: possible where a length prefix says where the
    /// next entry starts.
    pub fn skip_bad(self, skip: bool) -> Filter<'s, S> {
        Filter { skip_bad: skip, ..self }
    }

    /// The reader holds part of a larger stream, from its entry number
    /// `entry` (from 1), which starts at its byte `offset`: entries and
    /// errors are numbered and placed in that stream.
    pub fn starting_at(self, entry: u64, offset: u64) -> Filter<'s, S> {
        Filter { entry_base: entry.saturating_sub(1), offset_base: offset, ..self }
    }

    /// Trace actions go to `host`.
    pub fn host(self, host: impl Host + 's) -> Filter<'s, S> {
        Filter { host: Box::new(host), ..self }
    }

    /// Runs the spec on every entry of `reader`, handing each outcome to
    /// `sink` before reading the next. Stops at the first bad entry (unless
    /// skipping) and says so in [`Summary::stopped`]; an error is the sink's.
    pub fn run(
        &mut self,
        reader: &mut (impl Entries + ?Sized),
        sink: &mut impl Sink,
    ) -> io::Result<Summary> {
        let mut summary = Summary::default();
        let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
        let mut wire = WireUse::default();
        let program = self.spec.wire_program();
        let no_matches = sink.wants_no_matches();
        let takes_bytes = sink.takes_bytes();
        // Entries read when progress was last reported.
        let mut reported = 0;
        loop {
            // A run of entries decided on the wire, passed in one go when
            // nothing is handed over for the rejections: each match's
            // result alone is decoded and handed over on the way.
            let mut known = None;
            let wire_on = wire.on();
            if let Some(program) = program
                && !no_matches
                && wire_on
            {
                let read = self.entry_base + summary.entries + summary.skipped;
                let until_progress = PROGRESS_EVERY - read % PROGRESS_EVERY;
                let most = until_progress.min(u64::from(wire.left));
                let offset_base = self.offset_base;
                let (mut matched, mut failed) = (0, None);
                let mut on_match = |found: WireMatch<'_>| {
                    let number = read + found.before + 1;
                    let entry =
                        Entry { number, offset: offset_base + found.offset, bytes: found.bytes };
                    if takes_bytes && let Ok(at) = u32::try_from(found.result) {
                        matched += 1;
                        return sink.matched_bytes(entry, &Built::part(found.bytes, at));
                    }
                    heap.clear();
                    match etf::decode_subterm(found.bytes, found.result, &mut heap) {
                        Ok(word) => {
                            matched += 1;
                            let result =
                                Matched { result: heap.view(word), flags: Flags::default() };
                            sink.decided(entry, Ok(&Outcome::Match(result)))
                        }
                        Err(_) => {
                            let verdict = Verdict::Match { result: found.result };
                            // (Its atoms may not fit the table.) The usual
                            // path meets the error again, as the entry's.
                            failed = Some((found.before, verdict));
                            Err(io::Error::other("a result does not decode"))
                        }
                    }
                };
                let run = reader.pass_decided(program, &mut scratch, most, &mut on_match);
                let (passed, verdict) = match (run, failed) {
                    (Ok(run), _) => run,
                    (Err(_), Some((before, verdict))) => (before, Some(verdict)),
                    (Err(err), None) => return Err(err),
                };
                summary.entries += passed;
                summary.matched += matched;
                wire.saw_decided(passed as u32);
                if passed == until_progress {
                    sink.progress(read + passed, self.offset_base + reader.offset());
                    reported = read + passed;
                }
                if let Some(verdict) = verdict {
                    wire.saw(verdict);
                    known = Some(verdict);
                }
            }
            let offset = reader.offset();
            let (bytes, index) = match reader.next_indexed() {
                None => break,
                Some(Ok(entry)) => (entry.bytes, entry.index),
                Some(Err(err)) => {
                    if !self.bad_entry(reader, err, sink, &mut summary)? {
                        break;
                    }
                    continue;
                }
            };
            let number = self.entry_base + summary.entries + summary.skipped + 1;
            let read = number - 1;
            if read.is_multiple_of(PROGRESS_EVERY) && read > reported {
                sink.progress(read, self.offset_base + offset);
                reported = read;
            }
            let verdict = match (known, program) {
                (Some(verdict), _) => verdict,
                (None, Some(program)) if wire_on => {
                    let verdict = match index {
                        Some(index) => program.decide_indexed(bytes, index, &mut scratch),
                        None => program.decide(bytes, &mut scratch),
                    };
                    wire.saw(verdict);
                    verdict
                }
                _ => Verdict::Decode,
            };
            if verdict == Verdict::NoMatch && !no_matches {
                // Most entries of a selective spec: nothing to run, build
                // or hand over.
                summary.entries += 1;
                continue;
            }
            let entry = Entry { number, offset: self.offset_base + offset, bytes };
            let run = Running { heap: &mut heap, scratch: &mut scratch, summary: &mut summary };
            if let Err(err) = self.decided(entry, verdict, run, sink)? {
                let err = reader.fail_entry(err);
                if !self.bad_entry(reader, err, sink, &mut summary)? {
                    break;
                }
            }
        }
        Ok(summary)
    }

    /// Runs the spec on `entry` as far as the wire left it (`verdict`),
    /// counts the outcome and hands it to `sink`; an `Err` inside is an
    /// entry that does not decode.
    #[inline(never)]
    fn decided(
        &mut self,
        entry: Entry<'_>,
        verdict: Verdict,
        run: Running<'_>,
        sink: &mut impl Sink,
    ) -> io::Result<Result<(), DecodeError>> {
        run.heap.clear();
        let (bytes, host) = (entry.bytes, &mut *self.host);
        let outcome = if sink.takes_bytes() {
            match self.spec.run_verdict_built(bytes, verdict, run.heap, run.scratch, host) {
                Ok(Ok(EncodedOutcome::Built(built))) => {
                    run.summary.entries += 1;
                    run.summary.matched += 1;
                    sink.matched_bytes(entry, &built)?;
                    return Ok(Ok(()));
                }
                Ok(Ok(EncodedOutcome::Outcome(outcome))) => Ok(Ok(outcome)),
                Ok(Err(err)) => Ok(Err(err)),
                Err(err) => Err(err),
            }
        } else {
            self.spec.run_verdict(bytes, verdict, run.heap, run.scratch, host)
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(err) => return Ok(Err(err)),
        };
        run.summary.count(outcome.as_ref());
        if sink.wants_no_matches() || !matches!(outcome, Ok(Outcome::NoMatch)) {
            sink.decided(entry, outcome.as_ref())?;
        }
        Ok(Ok(()))
    }

    /// Skips a bad entry if allowed and possible (`true`: go on), or
    /// records it as the one that stopped the stream.
    fn bad_entry(
        &self,
        reader: &mut (impl Entries + ?Sized),
        mut err: StreamError,
        sink: &mut impl Sink,
        summary: &mut Summary,
    ) -> io::Result<bool> {
        err.entry += self.entry_base;
        err.offset += self.offset_base;
        if self.skip_bad && reader.resume() {
            summary.skipped += 1;
            sink.skipped(&err)?;
            return Ok(true);
        }
        summary.stopped = Some(err);
        Ok(false)
    }
}

/// What [`Filter::decided`] runs with and counts into.
struct Running<'r> {
    heap: &'r mut Heap,
    scratch: &'r mut Scratch,
    summary: &'r mut Summary,
}

/// How often a [`Sink`] hears of progress, in entries.
const PROGRESS_EVERY: u64 = 4096;

/// Whether deciding on the wire pays: it saves decoding the entries it
/// decides (all of a rejected one, all but the result of a match), and
/// costs a scan of every entry. When nearly every entry of a sample has to
/// be decoded anyway, the next stretch is decoded directly (the answers are
/// the same either way), then the wire is sampled again.
#[derive(Debug)]
struct WireUse {
    /// Entries left in the current sample, and those of it the wire left
    /// to decode.
    left: u32,
    undecided: u32,
    /// Entries still to decode directly.
    off_for: u32,
}

impl Default for WireUse {
    fn default() -> WireUse {
        WireUse { left: Self::SAMPLE, undecided: 0, off_for: 0 }
    }
}

impl WireUse {
    /// Entries in a sample.
    const SAMPLE: u32 = 4096;
    /// Entries decoded directly after a sample that matched nearly all.
    const OFF: u32 = 1 << 16;

    /// Should the next entry go through the wire program?
    #[inline(always)]
    fn on(&mut self) -> bool {
        if self.off_for > 0 {
            self.off_for -= 1;
            return false;
        }
        true
    }

    /// The wire program decided `n` entries alone (at most [`left`](WireUse::left)).
    #[inline(always)]
    fn saw_decided(&mut self, n: u32) {
        self.left -= n;
        if self.left == 0 {
            self.judge_sample();
        }
    }

    /// What the wire program said of an entry.
    #[inline(always)]
    fn saw(&mut self, verdict: Verdict) {
        self.undecided += u32::from(verdict == Verdict::Decode);
        self.left -= 1;
        if self.left == 0 {
            self.judge_sample();
        }
    }

    #[cold]
    fn judge_sample(&mut self) {
        // Under 5% decided: the scan costs more than it saves.
        if self.undecided >= Self::SAMPLE - Self::SAMPLE / 20 {
            self.off_for = Self::OFF;
        }
        (self.left, self.undecided) = (Self::SAMPLE, 0);
    }
}
