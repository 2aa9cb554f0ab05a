//! `msc::stream`: entries come out whole whatever the reads bring, errors
//! name the entry and its byte, and nothing is allocated on a length's word.

use std::io::Read;

use msc::matchspec::syntax::parse_terms;
use msc::stream::{EtfReader, Framing, StreamError, StreamErrorKind};
use msc::{Heap, Term, etf};

const TERMS: [&str; 6] =
    ["{order, 7, <<\"abc\">>}", "[1, 2 | 3]", "#{k => 1.5}", "-123456789012345678901", "a", "{}"];

/// A reader that hands out at most `step` bytes a read.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn encoded(text: &str) -> Vec<u8> {
    etf::encode(Term::parse(text).expect("term").as_ref()).expect("encodes")
}

/// The stream of `terms` in `framing`.
fn stream(terms: &[&str], framing: Framing) -> Vec<u8> {
    let mut bytes = Vec::new();
    for text in terms {
        let term = encoded(text);
        let len = term.len();
        match framing {
            Framing::Concatenated => {}
            Framing::Packet1 => bytes.push(u8::try_from(len).expect("short")),
            Framing::Packet2 => bytes.extend(u16::try_from(len).expect("short").to_be_bytes()),
            Framing::Packet4 => bytes.extend(u32::try_from(len).expect("short").to_be_bytes()),
            Framing::DbgTrace => {
                bytes.push(0);
                bytes.extend(u32::try_from(len).expect("short").to_be_bytes());
            }
        }
        bytes.extend(term);
    }
    bytes
}

/// Every entry as text, then the error that ended the stream, if any.
fn read_all(reader: impl Read, framing: Framing) -> (Vec<String>, Option<StreamError>) {
    let mut reader = EtfReader::new(reader).framing(framing);
    let mut heap = Heap::new();
    let mut seen = Vec::new();
    while let Some(entry) = reader.next_into(&mut heap) {
        match entry {
            Ok(word) => seen.push(heap.view(word).to_string()),
            Err(err) => {
                assert!(reader.next_into(&mut heap).is_none(), "nothing after an error");
                return (seen, Some(err));
            }
        }
    }
    (seen, None)
}

fn printed(terms: &[&str]) -> Vec<String> {
    terms.iter().map(|t| Term::parse(t).expect("term").to_string()).collect()
}

const FRAMINGS: [Framing; 5] = [
    Framing::Concatenated,
    Framing::Packet1,
    Framing::Packet2,
    Framing::Packet4,
    Framing::DbgTrace,
];

#[test]
fn every_framing_gives_the_terms_whatever_the_reads_bring() {
    for framing in FRAMINGS {
        let bytes = stream(&TERMS, framing);
        for step in [1, 2, 3, 7, 64, 1 << 20] {
            let (seen, error) = read_all(Trickle { bytes: &bytes, step }, framing);
            assert!(error.is_none(), "{framing:?} by {step}: {error:?}");
            assert_eq!(seen, printed(&TERMS), "{framing:?} by {step}");
        }
    }
}

#[test]
fn a_large_term_across_many_chunks_comes_out_whole() {
    let big = format!("[{}]", (0..40_000).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let terms = [big.as_str(), "later"];
    for framing in [Framing::Concatenated, Framing::Packet4] {
        let bytes = stream(&terms, framing);
        let (seen, error) = read_all(Trickle { bytes: &bytes, step: 999 }, framing);
        assert!(error.is_none(), "{framing:?}: {error:?}");
        assert_eq!(seen, printed(&terms), "{framing:?}");
    }
}

#[test]
fn a_truncated_last_entry_names_itself_after_the_others() {
    for framing in FRAMINGS {
        let mut bytes = stream(&TERMS, framing);
        let whole = stream(&TERMS[..5], framing).len() as u64;
        bytes.pop();
        let (seen, error) = read_all(&bytes[..], framing);
        assert_eq!(seen, printed(&TERMS[..5]), "{framing:?}");
        let error = error.expect("an error");
        assert!(matches!(error.kind, StreamErrorKind::Truncated), "{framing:?}: {error}");
        assert_eq!((error.entry, error.offset), (6, whole), "{framing:?}");
        assert!(error.to_string().starts_with(&format!("entry 6 (byte {whole})")), "{error}");
    }
}

#[test]
fn a_corrupt_entry_in_the_middle_stops_the_stream_there() {
    for framing in FRAMINGS {
        let mut bytes = stream(&TERMS, framing);
        let at = stream(&TERMS[..2], framing).len();
        // The version byte of the third term.
        bytes[at + framing_prefix(framing)] = 130;
        let (seen, error) = read_all(&bytes[..], framing);
        assert_eq!(seen, printed(&TERMS[..2]), "{framing:?}");
        let error = error.expect("an error");
        assert!(matches!(error.kind, StreamErrorKind::Decode(_)), "{framing:?}: {error}");
        assert_eq!((error.entry, error.offset), (3, at as u64), "{framing:?}");
    }
}

fn framing_prefix(framing: Framing) -> usize {
    match framing {
        Framing::Concatenated => 0,
        Framing::Packet1 => 1,
        Framing::Packet2 => 2,
        Framing::Packet4 => 4,
        Framing::DbgTrace => 5,
    }
}

#[test]
fn a_length_larger_than_the_input_is_truncation_not_an_allocation() {
    // 4 GiB - 1 claimed, ten bytes given: the reader must not reserve it.
    let mut bytes = vec![0xff, 0xff, 0xff, 0xff];
    bytes.extend(encoded("a"));
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet4).max_entry(usize::MAX);
    let error = reader.next_into(&mut Heap::new()).expect("an entry").expect_err("truncated");
    assert!(matches!(error.kind, StreamErrorKind::Truncated), "{error}");
    // A list claiming 4 billion elements in a concatenated stream.
    let list = [131, 108, 0xff, 0xff, 0xff, 0xff, 106];
    let (_, error) = read_all(&list[..], Framing::Concatenated);
    assert!(matches!(error.expect("an error").kind, StreamErrorKind::Truncated));
}

#[test]
fn entries_over_the_limit_are_refused() {
    let bytes = stream(&["{order, 7, <<\"abc\">>}"], Framing::Packet2);
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet2).max_entry(8);
    let error = reader.next_into(&mut Heap::new()).expect("an entry").expect_err("too large");
    assert!(matches!(error.kind, StreamErrorKind::TooLarge { limit: 8 }), "{error}");
    let big = format!("[{}]", (0..5_000).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let bytes = stream(&[big.as_str()], Framing::Concatenated);
    let mut reader = EtfReader::new(Trickle { bytes: &bytes, step: 100 }).max_entry(1000);
    let error = reader.next_into(&mut Heap::new()).expect("an entry").expect_err("too large");
    assert!(matches!(error.kind, StreamErrorKind::TooLarge { limit: 1000 }), "{error}");
}

#[test]
fn an_empty_stream_has_no_entries() {
    for framing in FRAMINGS {
        assert!(EtfReader::new(&[][..]).framing(framing).next_into(&mut Heap::new()).is_none());
    }
}

#[test]
fn a_framed_entry_that_fails_can_be_skipped() {
    let mut bytes = stream(&TERMS, Framing::Packet2);
    let at = stream(&TERMS[..2], Framing::Packet2).len();
    bytes[at + 2] = 130; // the third term's version byte
    let mut reader = EtfReader::new(Trickle { bytes: &bytes, step: 3 }).framing(Framing::Packet2);
    let mut heap = Heap::new();
    let mut seen = Vec::new();
    let mut skipped = Vec::new();
    while let Some(entry) = reader.next_into(&mut heap) {
        match entry {
            Ok(word) => seen.push(heap.view(word).to_string()),
            Err(err) => {
                skipped.push((err.entry, err.offset));
                assert!(reader.resume(), "{err}");
            }
        }
    }
    let mut kept = TERMS.to_vec();
    kept.remove(2);
    assert_eq!(seen, printed(&kept));
    assert_eq!(skipped, [(3, at as u64)]);
    assert_eq!(reader.offset(), bytes.len() as u64);

    // Too long: skipped without being read into memory.
    let bytes = stream(&["{order, 7, <<\"abc\">>}", "a"], Framing::Packet4);
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet4).max_entry(8);
    assert!(reader.next_into(&mut heap).expect("an entry").is_err());
    assert!(reader.resume());
    let word = reader.next_into(&mut heap).expect("an entry").expect("a term");
    assert_eq!(heap.view(word).to_string(), "a");
}

#[test]
fn concatenated_terms_and_truncation_cannot_be_resumed() {
    let mut bytes = stream(&TERMS, Framing::Concatenated);
    bytes[stream(&TERMS[..2], Framing::Concatenated).len()] = 130;
    let mut reader = EtfReader::new(&bytes[..]);
    let mut heap = Heap::new();
    while let Some(Ok(_)) = reader.next_into(&mut heap) {}
    assert!(!reader.resume(), "no length says where a concatenated term ends");
    assert!(reader.next_into(&mut heap).is_none());

    let mut bytes = stream(&TERMS, Framing::Packet1);
    bytes.pop();
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet1);
    while let Some(Ok(_)) = reader.next_into(&mut heap) {}
    assert!(!reader.resume(), "a truncated entry has no end to skip to");
}

/// Results as text, in order, and the entry numbers they came from.
#[derive(Default)]
struct Collect(Vec<(u64, String)>, Vec<u64>);

impl msc::stream::Sink for Collect {
    fn decided(
        &mut self,
        entry: msc::stream::Entry<'_>,
        outcome: Result<&msc::Outcome<'_>, &msc::EvalError>,
    ) -> std::io::Result<()> {
        if let Ok(msc::Outcome::Match(m)) = outcome {
            self.0.push((entry.number, m.result.to_string()));
        }
        Ok(())
    }

    fn skipped(&mut self, error: &StreamError) -> std::io::Result<()> {
        self.1.push(error.entry);
        Ok(())
    }
}

/// The results of `spec` on each of `terms` (parsed, not encoded), as text,
/// with their entry numbers: what a filter must give.
fn decoding_first(spec: &msc::Spec, terms: &[&str]) -> Vec<(u64, String)> {
    use msc::{Run, Scratch, TestHost};
    let mut results = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let term = Term::parse(term).expect("term");
        let mut scratch = Scratch::new();
        let outcome =
            spec.run(term.as_ref(), &mut scratch, &mut TestHost::default()).expect("runs");
        if let Some(result) = outcome.result() {
            results.push((i as u64 + 1, result.to_string()));
        }
    }
    results
}

#[test]
fn the_filter_gives_what_decoding_first_gives() {
    use msc::{Kind, Spec};
    let specs = [
        "[{'$1', [{is_tuple, '$1'}], [{{'$1'}}]}]",
        "[{{order, '$1', '_'}, [], ['$1']}]",
        "[{'_', [], ['$_']}]",
    ];
    for text in specs {
        let spec = Spec::compile(text, Kind::Table).expect("spec");
        let expected = decoding_first(&spec, &TERMS);
        for framing in [Framing::Concatenated, Framing::Packet1, Framing::Packet4] {
            let bytes = stream(&TERMS, framing);
            let mut reader = EtfReader::new(Trickle { bytes: &bytes, step: 5 }).framing(framing);
            let mut sink = Collect::default();
            let summary =
                msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
            assert_eq!(sink.0, expected, "{text} {framing:?}");
            assert_eq!(summary.entries, TERMS.len() as u64);
            assert!(summary.stopped.is_none());
        }
    }
}

#[test]
fn the_filter_stops_at_a_bad_entry_or_skips_it() {
    let spec = msc::Spec::compile("[{'_', [], ['$_']}]", msc::Kind::Table).expect("spec");
    let mut bytes = stream(&TERMS, Framing::Packet2);
    let second = 2 + encoded(TERMS[0]).len();
    bytes[second + 2] = 0; // the second entry's version byte
    let mut sink = Collect::default();
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet2);
    let summary = msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
    assert_eq!(sink.0, [(1, printed(&TERMS[..1])[0].clone())]);
    let stopped = summary.stopped.expect("stopped");
    assert_eq!((stopped.entry, stopped.offset), (2, second as u64));
    assert!(matches!(stopped.kind, StreamErrorKind::Decode(_)), "{stopped}");

    let mut sink = Collect::default();
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet2);
    let summary =
        msc::stream::Filter::new(&spec).skip_bad(true).run(&mut reader, &mut sink).expect("sink");
    assert_eq!(sink.1, [2]);
    assert_eq!(sink.0.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 3, 4, 5, 6]);
    assert_eq!((summary.entries, summary.skipped), (5, 1));
}

/// A dbg trace file of `terms`, with a drop entry of `dropped` after the
/// first.
fn dbg_file(terms: &[&str], dropped: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    for (i, text) in terms.iter().enumerate() {
        let term = encoded(text);
        bytes.push(0);
        bytes.extend((term.len() as u32).to_be_bytes());
        bytes.extend(term);
        if i == 0 {
            bytes.push(1);
            bytes.extend(dropped.to_be_bytes());
        }
    }
    bytes
}

#[test]
fn dbg_trace_files_give_messages_and_drops() {
    for dropped in [7, 300, 3_000_000_000] {
        let bytes = dbg_file(&TERMS, dropped);
        for step in [1, 3, 1 << 20] {
            let (seen, err) = read_all(Trickle { bytes: &bytes, step }, Framing::DbgTrace);
            assert!(err.is_none(), "{err:?}");
            let mut expected = printed(&TERMS);
            expected.insert(1, format!("{{drop,{dropped}}}"));
            assert_eq!(seen, expected);
        }
    }
    // The drop term is encoded as term_to_binary/1 encodes it.
    let bytes = dbg_file(&["a"], 3_000_000_000);
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::DbgTrace);
    reader.next_entry();
    let drop = reader.next_entry().expect("an entry").expect("read").to_vec();
    assert_eq!(drop, encoded("{drop, 3000000000}"));
}

#[test]
fn a_dbg_entry_of_another_kind_is_an_error() {
    let mut bytes = dbg_file(&TERMS[..2], 1);
    let third = bytes.len() - 5 - encoded(TERMS[1]).len();
    bytes[third] = 2;
    let (seen, err) = read_all(&bytes[..], Framing::DbgTrace);
    assert_eq!(seen.len(), 2);
    let err = err.expect("an error");
    assert!(matches!(err.kind, StreamErrorKind::NotDbgEntry { op: 2 }), "{err}");
    assert_eq!((err.entry, err.offset), (3, third as u64));
}

/// Every term of a text stream read through `TextReader`, as text, and the
/// errors as `entry line:column`.
fn read_text(reader: impl Read) -> Vec<String> {
    let mut reader = msc::stream::TextReader::new(reader);
    let mut heap = Heap::new();
    let mut seen = Vec::new();
    while let Some(term) = reader.next_into(&mut heap) {
        seen.push(match term {
            Ok(word) => heap.view(word).to_string(),
            Err(msc::stream::TextError::Parse { entry, error }) => {
                format!("error {entry} {}", error.location())
            }
            Err(err) => format!("error {err}"),
        });
        heap.clear();
    }
    seen
}

#[test]
fn text_streams_give_the_terms_whatever_the_reads_bring() {
    let text = "{order, 7, <<\"abc\">>}.\n% comment. with a dot\n[1, 2 | 3]. #{k => 1.5}.\n'a b'. \"é\".\n1.5.";
    let expected: Vec<String> =
        parse_terms(text).expect("terms").iter().map(|t| t.to_string()).collect();
    for step in [1, 2, 7, 1 << 20] {
        assert_eq!(read_text(Trickle { bytes: text.as_bytes(), step }), expected, "step {step}");
    }
}

#[test]
fn text_errors_are_located_in_the_whole_stream_and_reading_goes_on() {
    // Far enough in that the lines before were dropped from the buffer.
    let mut text: String = (0..50_000).map(|i| format!("{{n, {i}}}.\n")).collect();
    text.push_str("{bad, [1, 2}.\n{last, 1}.\n");
    let seen = read_text(Trickle { bytes: text.as_bytes(), step: 4096 });
    assert_eq!(seen.len(), 50_002);
    assert_eq!(seen[50_000], "error 50001 50001:12");
    assert_eq!(seen[50_001], "{last,1}");
    let mut bytes = b"a.\nb.\n".to_vec();
    bytes.extend([0xff, b'.']);
    assert_eq!(read_text(&bytes[..]), ["a", "b", "error not UTF-8 text from byte 6"]);
}

#[test]
fn a_stream_that_nearly_all_matches_gives_the_same_answers() {
    // Past the filter's sample, after which it decodes directly.
    let texts: Vec<String> = (0..20_000)
        .map(|i| format!("{{n, {i}, {}}}", if i % 1000 == 7 { "odd" } else { "ok" }))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let bytes = stream(&refs, Framing::Packet4);
    let spec = msc::Spec::compile("[{{n, '$1', ok}, [], ['$1']}]", msc::Kind::Table).expect("spec");
    let mut sink = Collect::default();
    let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet4);
    let summary = msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
    let expected: Vec<(u64, String)> =
        (0..20_000u64).filter(|i| i % 1000 != 7).map(|i| (i + 1, i.to_string())).collect();
    assert_eq!(sink.0, expected);
    assert_eq!(summary.matched, 19_980);
}

/// Every entry (bytes) and the error that ends the stream (entry, offset
/// and kind), through `reader`.
fn entries_of(reader: &mut impl msc::stream::Entries) -> Vec<Result<Vec<u8>, (u64, u64, String)>> {
    let mut seen = Vec::new();
    while let Some(entry) = reader.next_entry() {
        match entry {
            Ok(bytes) => seen.push(Ok(bytes.to_vec())),
            Err(err) => {
                let kind = format!("{:?}", err.kind).chars().take(12).collect();
                seen.push(Err((err.entry, err.offset, kind)));
                if !reader.resume() {
                    break;
                }
            }
        }
    }
    seen
}

#[test]
fn a_slice_reads_as_a_stream_does_without_copying() {
    for framing in FRAMINGS {
        let whole = stream(&TERMS, framing);
        let mut cases = vec![whole.clone()];
        for cut in 0..whole.len() {
            cases.push(whole[..cut].to_vec());
        }
        for at in (0..whole.len()).step_by(3) {
            let mut changed = whole.clone();
            changed[at] ^= 0x5a;
            cases.push(changed);
        }
        for bytes in &cases {
            let stream = entries_of(
                &mut EtfReader::new(Trickle { bytes, step: 3 }).framing(framing).max_entry(40),
            );
            let slice = entries_of(
                &mut msc::stream::SliceReader::new(bytes).framing(framing).max_entry(40),
            );
            assert_eq!(slice, stream, "{framing:?} {bytes:?}");
        }
        // Entries are slices of the input itself.
        let mut reader = msc::stream::SliceReader::new(&whole).framing(framing);
        let first = reader.next_framed().expect("an entry").expect("read");
        assert_eq!(first.as_ptr(), whole.as_ptr());
    }
}

/// Only the matches, as a sink that does not want the no-matches, and
/// where each entry was (its offset and bytes).
#[derive(Default)]
struct Matches(Vec<(u64, String)>, Vec<(u64, Vec<u8>)>);

impl msc::stream::Sink for Matches {
    fn decided(
        &mut self,
        entry: msc::stream::Entry<'_>,
        outcome: Result<&msc::Outcome<'_>, &msc::EvalError>,
    ) -> std::io::Result<()> {
        match outcome {
            Ok(msc::Outcome::Match(m)) => self.0.push((entry.number, m.result.to_string())),
            other => panic!("entry {}: handed {other:?}, which it did not ask for", entry.number),
        }
        self.1.push((entry.offset, entry.bytes.to_vec()));
        Ok(())
    }

    fn wants_no_matches(&self) -> bool {
        false
    }
}

#[test]
fn a_stream_of_events_filters_as_decoding_first_does_on_every_path() {
    // Many small plain events: whole entries buffered at once (the readers'
    // fast paths), the wire's needs, its matches that decode a part, and a
    // sink that hears only of matches, through every framing and read size.
    use msc::{Kind, Spec};
    let ops = ["get", "put", "delete", "scan", "déjà", "a_rather_long_operation_name"];
    let events: Vec<String> = (0..3_000u64)
        .map(|i| {
            let size = (i * 7919) % 10_000;
            let size = if i % 97 == 0 { format!("-{size}") } else { size.to_string() };
            format!("{{event, {i}, user_{}, '{}', {size}}}", i % 17, ops[(i % 6) as usize])
        })
        .collect();
    let terms: Vec<&str> = events.iter().map(String::as_str).collect();
    let specs = [
        "[{{event, '$1', '$2', delete, '$3'}, [{'>=', '$3', 5000}], ['$1']}]",
        "[{{event, '_', '$1', a_rather_long_operation_name, '_'}, [], ['$1']}]",
        "[{{event, '_', '_', 'déjà', '$1'}, [{'<', '$1', 0}], ['$_']}]",
        "[{{event, '$1', '$2', '_', '$3'}, [], [{{'$2', '$3'}}]}]",
        "[{{event, '_', user_3, get, '_'}, [], [hit]}, {{'_', '$1', '_', put, '_'}, [], ['$1']}]",
    ];
    for (text, engine) in specs.iter().flat_map(|t| ENGINES.map(|e| (t, e))) {
        let spec = Spec::builder().engine(engine).build(text, Kind::Table).expect("spec");
        let expected = decoding_first(&spec, &terms);
        assert!(!expected.is_empty(), "{text} matches some");
        for framing in FRAMINGS {
            let bytes = stream(&terms, framing);
            let placed = placements(&terms, framing, &expected);
            let what = format!("{text} on {engine} {framing:?}");
            for step in [1, 7, 4096, 1 << 20] {
                let mut reader = EtfReader::new(Trickle { bytes: &bytes, step }).framing(framing);
                let mut sink = Matches::default();
                let summary =
                    msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
                assert!(summary.stopped.is_none(), "{what} by {step}");
                assert_eq!(summary.entries, terms.len() as u64);
                assert_eq!(summary.matched, expected.len() as u64);
                assert_eq!(sink.0, expected, "{what} by {step}");
                assert!(sink.1 == placed, "{what} by {step}: where the matches are");
            }
            let mut reader = msc::stream::SliceReader::new(&bytes).framing(framing);
            let mut sink = Matches::default();
            msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
            assert_eq!(sink.0, expected, "{what} from a slice");
            assert!(sink.1 == placed, "{what} from a slice: where the matches are");
        }
    }
}

/// Both engines: the JIT's wire program passes runs with machine code.
const ENGINES: [msc::Engine; 2] = [msc::Engine::Interp, msc::Engine::Jit];

/// Where each of the `matches` (entry numbers first) of `terms` framed as
/// `framing` is: its offset and its term's bytes.
fn placements(terms: &[&str], framing: Framing, matches: &[(u64, String)]) -> Vec<(u64, Vec<u8>)> {
    let mut starts = vec![0];
    for term in terms {
        starts.push(starts.last().unwrap() + stream(&[term], framing).len() as u64);
    }
    let placed = |&(number, _): &(u64, String)| {
        let i = number as usize - 1;
        (starts[i], encoded(terms[i]))
    };
    matches.iter().map(placed).collect()
}

/// A sink that fails on its `fail_at`-th match.
struct Failing {
    fail_at: usize,
    seen: Vec<u64>,
}

impl msc::stream::Sink for Failing {
    fn decided(
        &mut self,
        entry: msc::stream::Entry<'_>,
        _: Result<&msc::Outcome<'_>, &msc::EvalError>,
    ) -> std::io::Result<()> {
        if self.seen.len() + 1 == self.fail_at {
            return Err(std::io::Error::other("full"));
        }
        self.seen.push(entry.number);
        Ok(())
    }

    fn wants_no_matches(&self) -> bool {
        false
    }
}

#[test]
fn a_sink_that_fails_on_a_match_in_a_run_stops_the_filter_there() {
    let events: Vec<String> = (0..500u64)
        .map(|i| format!("{{e, {i}, {}}}", if i % 7 == 3 { "x" } else { "y" }))
        .collect();
    let terms: Vec<&str> = events.iter().map(String::as_str).collect();
    for engine in ENGINES {
        let spec = msc::Spec::builder()
            .engine(engine)
            .build("[{{e, '$1', x}, [], ['$1']}]", msc::Kind::Table);
        let spec = spec.expect("spec");
        for framing in [Framing::Concatenated, Framing::Packet4] {
            let bytes = stream(&terms, framing);
            let mut reader = EtfReader::new(&bytes[..]).framing(framing);
            let mut sink = Failing { fail_at: 30, seen: Vec::new() };
            let result = msc::stream::Filter::new(&spec).run(&mut reader, &mut sink);
            assert!(result.is_err(), "{engine} {framing:?}: the sink's error");
            let expected: Vec<u64> = (0..29).map(|k| 7 * k + 4).collect();
            assert_eq!(sink.seen, expected, "{engine} {framing:?}");
        }
    }
}

#[test]
fn a_filter_refuses_entries_over_the_limit_too() {
    // The filter reads entries through the readers' fast paths: the limit
    // holds there as it does entry by entry.
    let spec = msc::Spec::compile("[{'_', [], ['$_']}]", msc::Kind::Table).expect("spec");
    let terms = ["{a, 1}", "{order, 7, [1, 2, 3, 4, 5, 6, 7, 8, 9]}", "{b, 2}"];
    for framing in [Framing::Concatenated, Framing::Packet4, Framing::DbgTrace] {
        let bytes = stream(&terms, framing);
        let limit = encoded(terms[0]).len() + framing_prefix(framing) + 4;
        let mut reader = EtfReader::new(&bytes[..]).framing(framing).max_entry(limit);
        let mut sink = Collect::default();
        let summary = msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
        assert_eq!(sink.0.len(), 1, "{framing:?}: only the first entry");
        let stopped = summary.stopped.expect("stopped");
        assert_eq!(stopped.entry, 2, "{framing:?}");
        assert!(matches!(stopped.kind, StreamErrorKind::TooLarge { .. }), "{framing:?}: {stopped}");
    }
}

/// Progress reports, and whether the no-matches are wanted too.
struct Progress {
    all: bool,
    reports: Vec<(u64, u64)>,
}

impl msc::stream::Sink for Progress {
    fn decided(
        &mut self,
        _: msc::stream::Entry<'_>,
        _: Result<&msc::Outcome<'_>, &msc::EvalError>,
    ) -> std::io::Result<()> {
        Ok(())
    }

    fn wants_no_matches(&self) -> bool {
        self.all
    }

    fn progress(&mut self, entries: u64, offset: u64) {
        self.reports.push((entries, offset));
    }
}

#[test]
fn progress_is_reported_every_4096_entries_where_the_next_starts() {
    // Rejections passed in runs (a sink that wants only matches) report
    // where entries passed one at a time do.
    for engine in ENGINES {
        progress_reports_on(engine);
    }
}

fn progress_reports_on(engine: msc::Engine) {
    let spec =
        msc::Spec::builder().engine(engine).build("[{{e, '$1', x}, [], ['$1']}]", msc::Kind::Table);
    let spec = spec.expect("spec");
    let events: Vec<String> = (0..10_000u64)
        .map(|i| format!("{{e, {i}, {}}}", if i % 10 == 0 { "x" } else { "y" }))
        .collect();
    let terms: Vec<&str> = events.iter().map(String::as_str).collect();
    for framing in FRAMINGS {
        let bytes = stream(&terms, framing);
        let starts: Vec<u64> = {
            let mut reader = msc::stream::SliceReader::new(&bytes).framing(framing);
            let mut starts = vec![0];
            while let Some(entry) = reader.next_framed() {
                starts.push(starts.last().unwrap() + entry.expect("entry").len() as u64);
            }
            starts
        };
        let expected = vec![(4096, starts[4096]), (8192, starts[8192])];
        for all in [false, true] {
            for step in [7, 1 << 20] {
                let mut reader = EtfReader::new(Trickle { bytes: &bytes, step }).framing(framing);
                let mut sink = Progress { all, reports: Vec::new() };
                msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
                assert_eq!(sink.reports, expected, "{engine} {framing:?} by {step}, all: {all}");
            }
            let mut reader = msc::stream::SliceReader::new(&bytes).framing(framing);
            let mut sink = Progress { all, reports: Vec::new() };
            msc::stream::Filter::new(&spec).run(&mut reader, &mut sink).expect("sink");
            assert_eq!(sink.reports, expected, "{engine} {framing:?} from a slice, all: {all}");
        }
    }
}

#[test]
fn rejections_passed_in_a_run_stop_at_an_entry_over_the_limit() {
    for engine in ENGINES {
        runs_stop_at_the_limit_on(engine);
    }
}

fn runs_stop_at_the_limit_on(engine: msc::Engine) {
    let spec = msc::Spec::builder()
        .engine(engine)
        .build("[{{never, '$1'}, [], ['$1']}]", msc::Kind::Table);
    let spec = spec.expect("spec");
    let terms = ["{a, 1}", "{b, 2}", "{order, 7, [1, 2, 3, 4, 5, 6, 7, 8, 9]}", "{c, 3}"];
    for framing in [Framing::Concatenated, Framing::Packet4] {
        let bytes = stream(&terms, framing);
        let limit = encoded(terms[0]).len() + framing_prefix(framing) + 4;
        let mut reader = EtfReader::new(&bytes[..]).framing(framing).max_entry(limit);
        let summary = msc::stream::Filter::new(&spec)
            .run(&mut reader, &mut Matches::default())
            .expect("sink");
        assert_eq!(summary.entries, 2, "{framing:?}: the two before it");
        let stopped = summary.stopped.expect("stopped");
        assert_eq!(stopped.entry, 3, "{framing:?}");
        assert!(matches!(stopped.kind, StreamErrorKind::TooLarge { .. }), "{framing:?}: {stopped}");
        let mut reader = msc::stream::SliceReader::new(&bytes).framing(framing).max_entry(limit);
        let summary = msc::stream::Filter::new(&spec)
            .run(&mut reader, &mut Matches::default())
            .expect("sink");
        assert_eq!(
            (summary.entries, summary.stopped.map(|s| s.entry)),
            (2, Some(3)),
            "{framing:?}"
        );
    }
}

#[test]
fn an_entry_after_a_run_of_rejections_comes_with_an_index_of_its_own_or_none() {
    // A run of rejections stops at an entry it has found already, which
    // the reader then hands out without measuring it again: the index it
    // hands out with it must not be one of other bytes that once lay at the
    // same place, of the same length, with elements elsewhere.
    use msc::matchspec::{Run, Scratch};
    // A match builds its result: the wire leaves it to decoding, and a run
    // stops there.
    let spec = "[{{e, '$1', y}, [], [{{'$1'}}]}]";
    let spec = msc::Spec::compile(spec, msc::Kind::Table).expect("spec");
    let program = spec.wire_program().expect("a table spec");
    // Both 14 bytes long, their last elements at 8 and at 11.
    let shapes = ["{e, 1, xyzw}", "{e, 300, y}", "{e, 2, yy}", "{e, 301, y}"];
    let terms: Vec<&str> =
        (0..2_000usize).map(|i| shapes[(i * 7 + i / 3) % shapes.len()]).collect();
    let bytes = stream(&terms, Framing::Concatenated);
    let mut scratch = Scratch::new();
    let mut checked = 0;
    for step in [5, 7, 13, 31, 64, 1 << 20] {
        let mut reader = EtfReader::new(Trickle { bytes: &bytes, step });
        loop {
            use msc::stream::Entries;
            reader.pass_decided(program, &mut scratch, u64::MAX, &mut |_| Ok(())).expect("run");
            let Some(entry) = reader.next_indexed() else { break };
            let entry = entry.expect("entry");
            let expected = program.decide(entry.bytes, &mut scratch);
            if let Some(index) = entry.index {
                let verdict = program.decide_indexed(entry.bytes, index, &mut scratch);
                assert_eq!(verdict, expected, "by {step}");
            }
            checked += 1;
        }
    }
    assert!(checked > 1_000, "{checked}");
}

/// What `next_framed` gives, one entry at a time: the bytes, the count, and
/// the error that ended it.
fn framed_one_by_one(
    bytes: &[u8],
    framing: Framing,
    step: usize,
) -> (Vec<u8>, u64, Option<String>) {
    let mut reader = EtfReader::new(Trickle { bytes, step }).framing(framing);
    let (mut all, mut count) = (Vec::new(), 0);
    while let Some(entry) = reader.next_framed() {
        match entry {
            Ok(entry) => {
                all.extend_from_slice(entry);
                count += 1;
            }
            Err(err) => return (all, count, Some(err.to_string())),
        }
    }
    (all, count, None)
}

#[test]
fn runs_of_framed_entries_are_the_entries_one_after_another() {
    for framing in FRAMINGS {
        let good = stream(&TERMS, framing);
        let mut corrupt = good.clone();
        corrupt[stream(&TERMS[..4], framing).len() + framing_prefix(framing)] = 130;
        for bytes in [&good, &corrupt] {
            for step in [1, 7, 64, 1 << 20] {
                let expected = framed_one_by_one(bytes, framing, step);
                for most in [1, 50, usize::MAX] {
                    let mut reader = EtfReader::new(Trickle { bytes, step }).framing(framing);
                    let (mut all, mut count, mut error) = (Vec::new(), 0, None);
                    while let Some(run) = reader.next_framed_run(most) {
                        match run {
                            Ok((run, entries)) => {
                                assert!(entries >= 1, "{framing:?}: an empty run");
                                all.extend_from_slice(run);
                                count += entries;
                            }
                            Err(err) => {
                                error = Some(err.to_string());
                                break;
                            }
                        }
                    }
                    assert_eq!(reader.entries(), count, "entries counted");
                    let what = format!("{framing:?} by {step}, runs of {most}");
                    assert_eq!((all, count, error), expected.clone(), "{what}");
                }
            }
        }
    }
}
