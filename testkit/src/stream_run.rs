//! The `stream_run` target's oracle: `msc run`'s byte path over arbitrary
//! bytes in every `--format`.
//!
//! A stream (arbitrary bytes, or terms encoded and framed with some bytes
//! changed or cut) is filtered by a spec of the kinds users run (selective
//! heads on scalars, maps, floats, binaries, nested tuples; projections)
//! in one framing, on the interpreter and on the JIT, three ways: over the
//! bytes in memory with the wire path deciding what it can, the same from
//! a reader that gets the bytes a few at a time, and with every entry
//! decoded first (the wire path off, since that sink wants the
//! no-matches). All must hand over the same matches, in order, at the
//! same entries and offsets, count the same, and stop at (or skip) the
//! same bad entry. Text input (`--format text`) goes through the text
//! reader, which must never panic.

use std::io::{self, Read};

use arbitrary::{Result, Unstructured};
use matchspec::encoded::built::Built;
use matchspec::term::{Heap, Term};
use matchspec::{EvalError, Outcome};
use msc::stream::{Entry, EtfReader, Filter, Framing, Sink, SliceReader, Summary, TextReader};
use msc::{Engine, Kind, Spec, etf};

use crate::oracles::MAX_INPUT;

/// The specs a stream is filtered by: what users run over event streams.
const SPECS: &[&str] = &[
    // Selective on scalars at the top of a tuple.
    "[{{'$1', ok, '_'}, [{'>', '$1', 10}], ['$1']}]",
    "[{{event, '$1', '_', '_', '_'}, [], [true]}]",
    // Maps, floats, binaries, nesting.
    "[{{event, '$1', order, #{amount => '$2'}, '_'}, [{is_float, '$2'}, {'>', '$2', 1.5}], \
     [{{'$1', '$2'}}]}]",
    "[{{'_', {'$1', '$2'}}, [{is_binary, '$2'}], [{{'$1', {byte_size, '$2'}}}]}]",
    "[{{a, {b, {c, '$1'}}}, [], ['$1']}, {[$x | '$1'], [], [{length, '$1'}]}]",
    // Projections and whole objects.
    "[{'$1', [], ['$_']}]",
    "[{{'$1', '$2'}, [{is_map, '$2'}], [{map_size, '$2'}]}, {'_', [], [false]}]",
    // Trace messages, as dbg files hold them.
    "[{{trace, '_', call, {'$1', '$2', '$3'}}, [{'=:=', '$1', m}], [{{'$2', {length, '$3'}}}]}]",
];

/// Terms to encode into structured streams: events, trace messages,
/// numbers at their edges.
const TERMS: &[&str] = &[
    "{1, ok, x}",
    "{11, ok, y}",
    "{12, no, z}",
    "{event, 7, order, #{amount => 2.5, currency => eur}, meta}",
    "{event, 8, order, #{amount => 1, currency => usd}, meta}",
    "{event, 9, error, {timeout, <<\"slow\">>}, []}",
    "{k, {404, <<\"not found\">>}}",
    "{a, {b, {c, [1, 2, 3]}}}",
    "[$x, 1, 2]",
    "{trace, <0.80.0>, call, {m, f, [1, 2]}}",
    "{trace_ts, <0.80.0>, call, {m, g, []}, {1, 2, 3}}",
    "{big, 123456789012345678901234567890}",
    "{-134217729, ok, 134217728}",
    "{1.0e300, ok, -0.0}",
    "#{}",
    "'atom_longer_than_eight'",
    "<<1, 2, 3>>",
];

/// Arbitrary bytes (or a damaged stream of real terms) through every
/// framing, spec and engine: no panic, and the byte path agrees with
/// decoding first. `false` for inputs it does not take.
pub fn stream_run(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let mut u = Unstructured::new(data);
    let Ok(case) = StreamCase::new(&mut u) else { return false };
    if case.text {
        text_stream(&case.bytes);
        return true;
    }
    let mut answers: Vec<(String, Answer)> = Vec::new();
    for engine in [Engine::Interp, Engine::Jit] {
        let spec = Spec::builder()
            .engine(engine)
            .build(SPECS[case.spec], Kind::Table)
            .expect("the oracle's specs compile");
        let slice = || SliceReader::new(&case.bytes).framing(case.framing);
        let wire = run(&spec, slice(), &case, Taking::Matches);
        let pieces = EtfReader::new(Pieces { bytes: &case.bytes, at: 0, step: case.step })
            .framing(case.framing);
        let read = run(&spec, pieces, &case, Taking::Matches);
        let decoded = run(&spec, slice(), &case, Taking::Every);
        let bytes = run(&spec, slice(), &case, Taking::Bytes);
        answers.push((format!("{engine:?} on the wire"), wire));
        answers.push((format!("{engine:?} on the wire, results from the bytes"), bytes));
        answers.push((format!("{engine:?} read in pieces of {}", case.step), read));
        answers.push((format!("{engine:?} decoding first"), decoded));
    }
    let (first_name, first) = &answers[0];
    for (name, answer) in &answers[1..] {
        assert_eq!(
            answer, first,
            "{name} differs from {first_name}: spec {}, {:?}, skip_bad {}, bytes {:?}",
            SPECS[case.spec], case.framing, case.skip_bad, case.bytes
        );
    }
    true
}

/// One stream to filter, and how.
struct StreamCase {
    spec: usize,
    framing: Framing,
    skip_bad: bool,
    /// `--format text`: the bytes are text.
    text: bool,
    /// The reader's pieces' size.
    step: usize,
    bytes: Vec<u8>,
}

impl StreamCase {
    fn new(u: &mut Unstructured<'_>) -> Result<StreamCase> {
        let spec = u.choose_index(SPECS.len())?;
        let framing = *u.choose(&[
            Framing::Concatenated,
            Framing::Packet1,
            Framing::Packet2,
            Framing::Packet4,
            Framing::DbgTrace,
        ])?;
        let skip_bad = u.arbitrary()?;
        let text = u.ratio(1u8, 8u8)?;
        let step = u.int_in_range(1..=64)?;
        let bytes =
            if u.arbitrary()? { framed_terms(u, framing)? } else { u.bytes(u.len())?.to_vec() };
        Ok(StreamCase { spec, framing, skip_bad, text, step, bytes })
    }
}

/// Real terms encoded and framed, then some bytes changed and the end
/// perhaps cut: mostly valid streams with a few bad entries.
fn framed_terms(u: &mut Unstructured<'_>, framing: Framing) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for _ in 0..u.int_in_range(0..=12)? {
        let term = Term::parse(u.choose(TERMS)?).expect("the oracle's terms parse");
        let encoded = etf::encode(term.as_ref()).expect("the oracle's terms encode");
        let len = encoded.len();
        match framing {
            Framing::Concatenated => {}
            Framing::Packet1 => bytes.push(u8::try_from(len).unwrap_or(u8::MAX)),
            Framing::Packet2 => bytes.extend(u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes()),
            Framing::Packet4 => bytes.extend(u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes()),
            Framing::DbgTrace => {
                if u.ratio(1u8, 10u8)? {
                    // A drop record: that many messages were lost.
                    bytes.push(1);
                    bytes.extend(u32::from(u.arbitrary::<u8>()?).to_be_bytes());
                    continue;
                }
                bytes.push(0);
                bytes.extend(u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
            }
        }
        bytes.extend(encoded);
    }
    for _ in 0..u.int_in_range(0..=3)? {
        if bytes.is_empty() {
            break;
        }
        let at = u.choose_index(bytes.len())?;
        bytes[at] = u.arbitrary()?;
    }
    if u.ratio(1u8, 4u8)? && !bytes.is_empty() {
        let keep = u.choose_index(bytes.len())?;
        bytes.truncate(keep);
    }
    Ok(bytes)
}

/// What a run handed over and counted.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    /// `(entry, offset, result)` of each match, and each input the spec
    /// could not run on (`result` then the error), in order.
    decided: Vec<(u64, u64, String)>,
    /// `(entry, offset, error)` of each bad entry skipped.
    skipped: Vec<(u64, u64, String)>,
    entries: u64,
    matched: u64,
    not_runnable: u64,
    /// The bad entry that stopped the stream: entry, offset, error.
    stopped: Option<(u64, u64, String)>,
}

/// What a [`Keep`] asks the filter for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Taking {
    /// The matches, decoded.
    Matches,
    /// Every outcome, the no-matches too (which turns the wire path off),
    /// then dropped.
    Every,
    /// The matches, results left in the bytes where the filter can.
    Bytes,
}

/// Keeps what a filter hands over.
struct Keep {
    taking: Taking,
    decided: Vec<(u64, u64, String)>,
    skipped: Vec<(u64, u64, String)>,
}

impl Sink for Keep {
    fn decided(
        &mut self,
        entry: Entry<'_>,
        outcome: std::result::Result<&Outcome<'_>, &EvalError>,
    ) -> io::Result<()> {
        let text = match outcome {
            Ok(Outcome::NoMatch) => return Ok(()),
            Ok(Outcome::Match(m)) => m.result.to_string(),
            Err(err) => format!("cannot run: {err}"),
        };
        self.decided.push((entry.number, entry.offset, text));
        Ok(())
    }

    fn skipped(&mut self, error: &msc::stream::StreamError) -> io::Result<()> {
        self.skipped.push((error.entry, error.offset, format!("{:?}", error.kind)));
        Ok(())
    }

    fn wants_no_matches(&self) -> bool {
        self.taking == Taking::Every
    }

    fn takes_bytes(&self) -> bool {
        self.taking == Taking::Bytes
    }

    fn matched_bytes(&mut self, entry: Entry<'_>, result: &Built<'_>) -> io::Result<()> {
        let mut text = String::new();
        result.write_text(&mut text).expect("a result left in the bytes prints");
        let mut encoded = Vec::new();
        result.write_etf(&mut encoded).expect("a result left in the bytes encodes");
        let decoded = etf::decode(&encoded).expect("its encoding decodes");
        assert_eq!(decoded.to_string(), text, "a result's encoding and text differ");
        self.decided.push((entry.number, entry.offset, text));
        Ok(())
    }
}

fn run(
    spec: &Spec,
    mut reader: impl msc::stream::Entries,
    case: &StreamCase,
    taking: Taking,
) -> Answer {
    let mut sink = Keep { taking, decided: Vec::new(), skipped: Vec::new() };
    let summary: Summary = Filter::new(spec)
        .skip_bad(case.skip_bad)
        .run(&mut reader, &mut sink)
        .expect("the sink never fails");
    Answer {
        decided: sink.decided,
        skipped: sink.skipped,
        entries: summary.entries,
        matched: summary.matched,
        not_runnable: summary.not_runnable,
        stopped: summary.stopped.map(|e| (e.entry, e.offset, format!("{:?}", e.kind))),
    }
}

/// Text through the text reader: terms or errors, never a panic.
fn text_stream(bytes: &[u8]) {
    let mut reader = TextReader::new(bytes);
    let mut heap = Heap::new();
    for _ in 0..1024 {
        match reader.next_into(&mut heap) {
            None => break,
            Some(Ok(word)) => {
                let _ = heap.view(word).to_string();
            }
            Some(Err(err)) => {
                let _ = err.to_string();
                break;
            }
        }
        heap.clear();
    }
}

/// Bytes handed out `step` at a time, as a pipe or socket gives them.
struct Pieces<'a> {
    bytes: &'a [u8],
    at: usize,
    step: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
