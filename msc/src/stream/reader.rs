//! [`EtfReader`]: the entries of a stream, a chunk of input at a time.

use std::io::{self, Read};

use matchspec::Scratch;
use matchspec::etf::{self, DecodeError, DecodeErrorKind};
use matchspec::term::{Heap, Word};
use matchspec::wire::{Layout, RunMatch, Verdict, WireProgram};

use super::{StreamError, StreamErrorKind, WireMatch};

/// How entries are delimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Framing {
    /// Terms one after another, each starting with the version byte 131;
    /// a term's own encoding says where it ends.
    #[default]
    Concatenated,
    /// Each term after a 1-byte length (`{packet, 1}`).
    Packet1,
    /// Each term after a 2-byte big-endian length (`{packet, 2}`).
    Packet2,
    /// Each term after a 4-byte big-endian length (`{packet, 4}`).
    Packet4,
    /// A trace file of `dbg:trace_port(file, ...)`: each trace message
    /// after a 0 byte and its 4-byte big-endian length; a 1 byte and a
    /// 4-byte count instead say that many messages were dropped, which
    /// reads as the term `{drop, Count}`, as `dbg:trace_client/3` gives it.
    DbgTrace,
}

impl Framing {
    /// How a run of its entries lays out their terms, as scan code reads
    /// them: a dbg message entry is a 0 byte and a 4-byte length (its
    /// other entries, drops, are left to the usual path).
    pub(super) fn layout(self) -> Layout {
        match self {
            Framing::Concatenated => Layout::ADJACENT,
            Framing::Packet1 => Layout::prefixed(1),
            Framing::Packet2 => Layout::prefixed(2),
            Framing::Packet4 => Layout::prefixed(4),
            Framing::DbgTrace => Layout { lead: Some(0), length_bytes: 4 },
        }
    }

    /// The length prefix's size in bytes (0: none).
    pub(super) fn prefix(self) -> usize {
        self.layout().prefix_len()
    }
}

/// Where the next entry's term is (for this reader and [`SliceReader`](super::SliceReader)).
#[derive(Clone, Copy, Debug)]
pub(super) enum Found {
    /// After `skip` bytes of framing, `len` bytes long.
    Buffered { skip: usize, len: usize },
    /// A dbg drop entry (its 5-byte header alone), whose term is made.
    Drop(u32),
}

impl Found {
    /// The bytes the entry takes in the stream, framing included.
    pub(super) fn framed_len(self) -> usize {
        match self {
            Found::Buffered { skip, len } => skip + len,
            Found::Drop(_) => Framing::DbgTrace.prefix(),
        }
    }
}

/// The most bytes one entry may take unless [`EtfReader::max_entry`] says
/// otherwise (1 GiB).
pub const DEFAULT_MAX_ENTRY: usize = 1 << 30;

/// How many bytes one read asks for.
const CHUNK: usize = 64 * 1024;

/// Reads the entries of a stream of encoded terms (see the [module
/// documentation](crate::stream)).
#[derive(Debug)]
pub struct EtfReader<R> {
    source: R,
    framing: Framing,
    max_entry: usize,
    /// Bytes read and not yet consumed are `buffer[start..end]`; the rest
    /// is room for the next read (zeroed once, when the buffer grows).
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    /// The stream offset of `buffer[start]`.
    offset: u64,
    /// The stream offset of the entry yielded last.
    entry_offset: u64,
    /// Entries yielded so far.
    entries: u64,
    /// The source has no more bytes.
    at_end: bool,
    /// An error was reported: nothing more comes unless it is resumed.
    failed: bool,
    /// How to go past the entry that failed, when its end is known (a
    /// length prefix said it) and reading may go on after it.
    skippable: Option<Skip>,
    /// The term of an entry made rather than read (a dbg drop entry).
    synthetic: Vec<u8>,
    /// The top-level elements of the term measured last (concatenated
    /// terms), for the wire program.
    index: etf::PlainIndex,
    /// The next entry, when a run of rejections stopped at it and found it
    /// already ([`Entries::pass_decided`](super::Entries::pass_decided)).
    peeked: Option<Found>,
    /// Where a wire program's scan code writes the matches it passes.
    matches: Vec<RunMatch>,
    /// Are concatenated terms only split, their ends found from their
    /// structure ([`EtfReader::split_only`])?
    split_only: bool,
}

/// How [`EtfReader::resume`] goes past a failed entry.
#[derive(Clone, Copy, Debug)]
enum Skip {
    /// It was yielded and consumed already.
    Consumed,
    /// Its bytes (prefix included) are still to be skipped.
    Bytes(usize),
}

impl<R: Read> EtfReader<R> {
    /// Reads `source` as concatenated terms, entries of at most
    /// [`DEFAULT_MAX_ENTRY`] bytes.
    pub fn new(source: R) -> EtfReader<R> {
        EtfReader {
            source,
            framing: Framing::default(),
            max_entry: DEFAULT_MAX_ENTRY,
            buffer: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            entry_offset: 0,
            entries: 0,
            at_end: false,
            failed: false,
            skippable: None,
            synthetic: Vec::new(),
            index: etf::PlainIndex::new(),
            peeked: None,
            matches: Vec::new(),
            split_only: false,
        }
    }

    /// Reads entries framed as `framing`.
    pub fn framing(self, framing: Framing) -> EtfReader<R> {
        EtfReader { framing, ..self }
    }

    /// Refuses entries longer than `bytes` (length prefix included).
    pub fn max_entry(self, bytes: usize) -> EtfReader<R> {
        EtfReader { max_entry: bytes, ..self }
    }

    /// Finds where concatenated terms end from their structure alone
    /// ([`etf::term_extent`]), without checking that they decode: for a
    /// reader that only splits the stream into runs of whole entries
    /// ([`next_framed_run`](EtfReader::next_framed_run)) for other readers,
    /// which check each term as they read it. A term that does not decode
    /// is then their error, at the same entry, where a checking reader
    /// would have stopped. (Terms of other than plain data, and terms cut
    /// by the end of what is buffered, are measured and checked as
    /// always.)
    ///
    /// ```
    /// use msc::stream::EtfReader;
    ///
    /// // `[]`, then a float that is not finite (no term), then `[]`.
    /// let bytes = [131, 106, 131, 70, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0, 131, 106];
    /// let mut checking = EtfReader::new(&bytes[..]);
    /// assert!(checking.next_framed_run(usize::MAX).unwrap().is_ok());
    /// assert!(checking.next_framed_run(usize::MAX).unwrap().is_err());
    /// let mut splitting = EtfReader::new(&bytes[..]).split_only();
    /// let (run, entries) = splitting.next_framed_run(usize::MAX).unwrap()?;
    /// assert_eq!((run, entries), (&bytes[..], 3));
    /// # Ok::<(), msc::stream::StreamError>(())
    /// ```
    pub fn split_only(self) -> EtfReader<R> {
        EtfReader { split_only: true, ..self }
    }

    /// How many bytes of the stream the entries read so far took.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// After an entry that failed to decode or was too long, moves past it
    /// so that reading goes on with the next entry, and answers `true`.
    /// Only a length prefix says where an entry ends: after an error of
    /// concatenated terms, a truncated entry or a failed read there is no
    /// way past, and it answers `false`.
    pub fn resume(&mut self) -> bool {
        let Some(skip) = self.skippable.take().filter(|_| self.failed) else { return false };
        let len = match skip {
            Skip::Consumed => {
                self.failed = false;
                return true;
            }
            Skip::Bytes(len) => len,
        };
        let buffered = len.min(self.buffered().len());
        self.consume(buffered);
        let rest = (len - buffered) as u64;
        let skipped = io::copy(&mut (&mut self.source).take(rest), &mut io::sink());
        match skipped {
            Ok(n) if n == rest => {
                self.offset += rest;
                self.entries += 1;
                self.failed = false;
                true
            }
            _ => false,
        }
    }

    /// The next entry's term, undecoded (version byte first, any length
    /// prefix left out): `None` at the end of the stream (and after an
    /// error). The bytes are the reader's until the next call.
    ///
    /// With [`Framing::Concatenated`] the term is measured (without being
    /// built, for plain data) to find where it ends, so bytes that are not a
    /// term are an error here; with a length prefix the bytes are whatever
    /// the prefix frames, and [`fail_entry`](EtfReader::fail_entry) reports
    /// a decoder's error on them.
    pub fn next_entry(&mut self) -> Option<Result<&[u8], StreamError>> {
        super::Entries::next_entry(self)
    }

    /// The next entry as the stream holds it, framing included (a length
    /// prefix, a dbg entry's header): for handing whole entries elsewhere,
    /// e.g. to threads that each read a run of them with a reader of their
    /// own. `None` at the end of the stream (and after an error).
    pub fn next_framed(&mut self) -> Option<Result<&[u8], StreamError>> {
        match self.advance()? {
            Ok((at, found)) => Some(Ok(&self.buffer[at..at + found.framed_len()])),
            Err(err) => Some(Err(err)),
        }
    }

    /// The next entries as the stream holds them, as
    /// [`next_framed`](EtfReader::next_framed) gives them one at a time:
    /// one entry, then as many more as are buffered whole while the run
    /// is under `most` bytes, in one slice, and how many they are. For a
    /// thread that hands runs of entries to others: it copies a run, not
    /// each entry, and finds the entries' ends in one loop.
    ///
    /// ```
    /// use msc::stream::{EtfReader, Framing};
    ///
    /// // Two `[]` in `{packet, 4}` framing.
    /// let bytes = [0, 0, 0, 2, 131, 106, 0, 0, 0, 2, 131, 106];
    /// let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet4);
    /// let (run, entries) = reader.next_framed_run(usize::MAX).expect("entries")?;
    /// assert_eq!((run, entries), (&bytes[..], 2));
    /// assert!(reader.next_framed_run(usize::MAX).is_none());
    /// # Ok::<(), msc::stream::StreamError>(())
    /// ```
    pub fn next_framed_run(&mut self, most: usize) -> Option<Result<(&[u8], u64), StreamError>> {
        let (start, first) = match self.advance()? {
            Ok(found) => found,
            Err(err) => return Some(Err(err)),
        };
        // Entries accepted one after another are next to each other in
        // the buffer, which only a read (not done here) moves.
        let (mut len, mut count) = (first.framed_len(), 1);
        while len < most {
            let Some(found) = self.buffered_entry() else { break };
            self.accept(found);
            len += found.framed_len();
            count += 1;
        }
        Some(Ok((&self.buffer[start..start + len], count)))
    }

    /// How many entries the reader has yielded (and skipped).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Finds and consumes the next entry: where it starts in the buffer,
    /// and where its term is.
    #[inline]
    fn advance(&mut self) -> Option<Result<(usize, Found), StreamError>> {
        if self.failed {
            return None;
        }
        // The usual case, without the error plumbing: an entry buffered
        // whole whose length its prefix or a plain term's scan gives.
        if let Some(found) = self.buffered_entry() {
            return Some(Ok((self.accept(found), found)));
        }
        self.advance_read()
    }

    /// [`advance`](EtfReader::advance) when the next entry is not buffered
    /// whole (or fails).
    #[inline(never)]
    fn advance_read(&mut self) -> Option<Result<(usize, Found), StreamError>> {
        let found = match self.framing.prefix() {
            0 => self.next_concatenated(),
            prefix => self.next_packet(prefix),
        };
        match found {
            Ok(None) => None,
            Ok(Some(found)) => Some(Ok((self.accept(found), found))),
            Err(kind) => {
                self.failed = true;
                if !matches!(kind, StreamErrorKind::TooLarge { .. })
                    || self.framing == Framing::Concatenated
                {
                    self.skippable = None;
                }
                Some(Err(StreamError { kind, offset: self.offset, entry: self.entries + 1 }))
            }
        }
    }

    /// Reports that the entry [`next_entry`](EtfReader::next_entry) gave
    /// last does not decode: the reader yields nothing more, unless it is
    /// [resumed](EtfReader::resume) (framed entries only).
    pub fn fail_entry(&mut self, err: DecodeError) -> StreamError {
        self.failed = true;
        // The entry was consumed: going on means only forgetting the error.
        self.skippable = (self.framing != Framing::Concatenated).then_some(Skip::Consumed);
        StreamError {
            kind: StreamErrorKind::Decode(err),
            offset: self.entry_offset,
            entry: self.entries,
        }
    }

    /// Decodes the next entry into `heap`: `None` at the end of the
    /// stream (and after an error).
    pub fn next_into(&mut self, heap: &mut Heap) -> Option<Result<Word, StreamError>> {
        let decoded = match self.next_entry()? {
            Ok(bytes) => etf::decode_into(bytes, heap),
            Err(err) => return Some(Err(err)),
        };
        Some(decoded.map_err(|err| self.fail_entry(err)))
    }

    fn buffered(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }

    /// Consumes the entry `found` at the start of what is buffered, and
    /// answers where it starts in the buffer.
    #[inline(always)]
    fn accept(&mut self, found: Found) -> usize {
        let at = self.start;
        self.entry_offset = self.offset;
        self.consume(found.framed_len());
        self.entries += 1;
        at
    }

    /// Consumes `n` buffered bytes.
    fn consume(&mut self, n: usize) {
        self.peeked = None;
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads one more chunk (moving what is buffered to the front first,
    /// and making room only when there is less than a chunk's); `false` at
    /// the end of the source.
    fn fill(&mut self) -> Result<bool, StreamErrorKind> {
        if self.at_end {
            return Ok(false);
        }
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buffer.len() - self.end < CHUNK {
            self.buffer.resize(self.end + CHUNK, 0);
        }
        let read = loop {
            match self.source.read(&mut self.buffer[self.end..]) {
                Ok(n) => break n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(StreamErrorKind::Io(err)),
            }
        };
        self.end += read;
        self.at_end = read == 0;
        Ok(read > 0)
    }

    /// Reads until `n` bytes are buffered; `false` if the source ends first.
    fn want(&mut self, n: usize) -> Result<bool, StreamErrorKind> {
        while self.buffered().len() < n {
            if !self.fill()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The next entry if it is buffered whole and needs nothing more than
    /// finding its length (most are): a `{packet, 4}` or dbg message
    /// entry's prefix read in one load, or a plain term measured (and
    /// indexed); within the entry limit.
    #[inline(always)]
    fn buffered_entry(&mut self) -> Option<Found> {
        if let Some(found) = self.peeked.take() {
            return Some(found);
        }
        let buffered = &self.buffer[self.start..self.end];
        match self.framing {
            Framing::Concatenated => {
                let len = if self.split_only {
                    etf::term_extent(buffered)?
                } else {
                    self.index.measure(buffered)?
                };
                (len <= self.max_entry).then_some(Found::Buffered { skip: 0, len })
            }
            framing => whole_framed(buffered, framing, self.max_entry),
        }
    }

    /// The next framed entry, buffered whole.
    fn next_packet(&mut self, prefix: usize) -> Result<Option<Found>, StreamErrorKind> {
        if !self.want(1)? {
            return Ok(None);
        }
        if !self.want(prefix)? {
            return Err(StreamErrorKind::Truncated);
        }
        let len = match header(self.framing, &self.buffered()[..prefix])? {
            Header::Drop(count) => return Ok(Some(Found::Drop(count))),
            Header::Term(len) => len,
        };
        self.skippable = Some(Skip::Bytes(prefix.saturating_add(len)));
        if len.saturating_add(prefix) > self.max_entry {
            return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
        }
        // Reads a chunk at a time: what is buffered never exceeds what came.
        if !self.want(prefix + len)? {
            return Err(StreamErrorKind::Truncated);
        }
        Ok(Some(Found::Buffered { skip: prefix, len }))
    }

    /// The next concatenated term, buffered whole: its length.
    fn next_concatenated(&mut self) -> Result<Option<Found>, StreamErrorKind> {
        if !self.want(1)? {
            return Ok(None);
        }
        loop {
            match etf::term_len_indexed(&self.buffer[self.start..self.end], &mut self.index) {
                Ok(used) if used > self.max_entry => {
                    return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
                }
                Ok(used) => return Ok(Some(Found::Buffered { skip: 0, len: used })),
                // The term goes on beyond what is buffered: read more
                // (each retry has at least a chunk more, so measuring again
                // costs at most as much as the bytes read).
                Err(err) if needs_more(&err) => {
                    if self.buffered().len() >= self.max_entry {
                        return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
                    }
                    let before = self.buffered().len();
                    let target = before.saturating_mul(2).max(CHUNK).min(self.max_entry);
                    while self.buffered().len() < target {
                        if !self.fill()? {
                            break;
                        }
                    }
                    if self.buffered().len() == before {
                        return Err(StreamErrorKind::Truncated);
                    }
                }
                Err(err) => return Err(StreamErrorKind::Decode(err)),
            }
        }
    }
}

/// The `{packet, 4}` or dbg message entry at the start of `bytes`, if it
/// is there whole and within `max_entry`: its prefix read in one load.
/// `None` for anything else, which the usual path reads.
#[inline(always)]
fn whole_framed(bytes: &[u8], framing: Framing, max_entry: usize) -> Option<Found> {
    let field = match framing {
        Framing::Packet4 => bytes.first_chunk::<4>(),
        Framing::DbgTrace => match bytes {
            [0, rest @ ..] => rest.first_chunk::<4>(),
            _ => None,
        },
        Framing::Concatenated | Framing::Packet1 | Framing::Packet2 => None,
    };
    let prefix = framing.prefix();
    let framed = (u32::from_be_bytes(*field?) as usize).checked_add(prefix)?;
    (framed <= bytes.len() && framed <= max_entry)
        .then_some(Found::Buffered { skip: prefix, len: framed - prefix })
}

/// A run of entries a wire program decides alone, passed in one loop
/// ([`Entries::pass_decided`](super::Entries::pass_decided)).
pub(super) struct Run<'p> {
    pub(super) program: &'p WireProgram,
    pub(super) framing: Framing,
    pub(super) max_entry: usize,
    /// The most entries to pass.
    pub(super) most: u64,
    /// The stream offset of the bytes it is given.
    pub(super) offset: u64,
}

/// What [`Run::pass`] passed.
pub(super) struct Passed {
    pub(super) bytes: usize,
    pub(super) entries: u64,
    /// The verdict on the entry it stopped at, and where that entry's
    /// term is, if it stopped at one it did not decide (rather than at the
    /// end of what is at hand, or at an entry the usual path must read).
    pub(super) stopped_at: Option<(Verdict, Found)>,
}

/// How many matches the program's code passes before they are handed over.
const MATCHES: usize = 64;

impl Run<'_> {
    /// Passes the whole entries at the start of `bytes` that the program
    /// decides (concatenated, `{packet, 4}` and dbg message entries; others
    /// are left to the usual path), handing each match to `on_match`. On
    /// an error of `on_match`, what was passed before the entry it failed
    /// on is in `passed`.
    #[inline]
    pub(super) fn pass(
        &self,
        bytes: &[u8],
        index: &mut etf::PlainIndex,
        matches: &mut Vec<RunMatch>,
        scratch: &mut Scratch,
        on_match: &mut dyn FnMut(WireMatch<'_>) -> io::Result<()>,
        passed: &mut Passed,
    ) -> io::Result<()> {
        // Only code passes matches, into the reader's buffer: made once,
        // not cleared per call (a spec that runs most entries calls once
        // an entry).
        let layout = Some(self.framing.layout()).filter(|_| self.program.has_scan_code());
        if layout.is_some() && matches.len() < MATCHES {
            matches.resize(MATCHES, RunMatch::default());
        }
        while passed.entries < self.most {
            // The program's own code passes what it can; an entry it
            // stops at is read here, and then it goes on.
            if let Some(layout) = layout {
                let at = passed.bytes;
                let most = self.most - passed.entries;
                let run = self.program.pass(&bytes[at..], layout, self.max_entry, most, matches);
                for found in &matches[..run.matches] {
                    let term = at + found.term as usize;
                    let wire_match = WireMatch {
                        before: passed.entries + found.before,
                        offset: self.offset + (at + found.entry as usize) as u64,
                        bytes: &bytes[term..term + found.len as usize],
                        result: found.result as usize,
                    };
                    if let Err(err) = on_match(wire_match) {
                        // Passed up to the entry it failed on.
                        passed.bytes = at + found.entry as usize;
                        passed.entries += found.before;
                        return Err(err);
                    }
                }
                passed.bytes += run.bytes;
                passed.entries += run.entries;
                if passed.entries >= self.most || run.matches == MATCHES {
                    continue;
                }
            }
            let rest = &bytes[passed.bytes..];
            let (verdict, found) = match self.framing {
                Framing::Concatenated => {
                    let (len, verdict) = match self.program.decide_first(rest, scratch) {
                        Some(decided) => decided,
                        None => {
                            let Some(len) = index.measure(rest) else { break };
                            (len, self.program.decide_indexed(&rest[..len], index, scratch))
                        }
                    };
                    if len > self.max_entry {
                        break;
                    }
                    (verdict, Found::Buffered { skip: 0, len })
                }
                framing => match whole_framed(rest, framing, self.max_entry) {
                    Some(found @ Found::Buffered { skip, len }) => {
                        (self.program.decide(&rest[skip..skip + len], scratch), found)
                    }
                    _ => break,
                },
            };
            match verdict {
                Verdict::NoMatch => {}
                Verdict::Match { result } => {
                    let Found::Buffered { skip, len } = found else { break };
                    on_match(WireMatch {
                        before: passed.entries,
                        offset: self.offset + passed.bytes as u64,
                        bytes: &rest[skip..skip + len],
                        result,
                    })?;
                }
                Verdict::Run | Verdict::Decode => {
                    passed.stopped_at = Some((verdict, found));
                    break;
                }
            }
            passed.bytes += found.framed_len();
            passed.entries += 1;
        }
        Ok(())
    }
}

/// Does decoding `err` only say the bytes ended too soon?
pub(super) fn needs_more(err: &DecodeError) -> bool {
    !err.in_compressed()
        && matches!(
            err.kind(),
            DecodeErrorKind::UnexpectedEnd | DecodeErrorKind::LengthExceedsInput { .. }
        )
}

/// What an entry's framing header says.
pub(super) enum Header {
    /// A term of this many bytes follows.
    Term(usize),
    /// A dbg drop entry: this many messages were lost.
    Drop(u32),
}

/// Reads the header of a framed entry (`bytes` is exactly
/// `framing.prefix()` long).
pub(super) fn header(framing: Framing, bytes: &[u8]) -> Result<Header, StreamErrorKind> {
    let mut fields = bytes.iter();
    if framing == Framing::DbgTrace {
        match fields.next() {
            Some(0) => {}
            Some(1) => return Ok(Header::Drop(fields.fold(0u32, |n, &b| n << 8 | u32::from(b)))),
            Some(&op) => return Err(StreamErrorKind::NotDbgEntry { op }),
            None => return Err(StreamErrorKind::Truncated),
        }
    }
    Ok(Header::Term(fields.fold(0usize, |n, &b| n << 8 | usize::from(b))))
}

/// The encoding of `{drop, Count}`, as `term_to_binary/1` writes it.
pub(super) fn drop_term(count: u32) -> Vec<u8> {
    let mut bytes = vec![etf::VERSION, 104, 2, 119, 4, b'd', b'r', b'o', b'p'];
    match u8::try_from(count) {
        Ok(small) => bytes.extend([97, small]),
        Err(_) if count <= i32::MAX as u32 => {
            bytes.push(98);
            bytes.extend(count.to_be_bytes());
        }
        // SMALL_BIG_EXT: 4 digit bytes, positive, little-endian.
        Err(_) => {
            bytes.extend([110, 4, 0]);
            bytes.extend(count.to_le_bytes());
        }
    }
    bytes
}

impl<R: Read> super::Entries for EtfReader<R> {
    fn pass_decided(
        &mut self,
        program: &WireProgram,
        scratch: &mut Scratch,
        most: u64,
        on_match: &mut dyn FnMut(WireMatch<'_>) -> io::Result<()>,
    ) -> io::Result<(u64, Option<Verdict>)> {
        if self.failed {
            return Ok((0, None));
        }
        let run = Run {
            program,
            framing: self.framing,
            max_entry: self.max_entry,
            most,
            offset: self.offset,
        };
        let mut passed = Passed { bytes: 0, entries: 0, stopped_at: None };
        let buffered = &self.buffer[self.start..self.end];
        let result =
            run.pass(buffered, &mut self.index, &mut self.matches, scratch, on_match, &mut passed);
        self.consume(passed.bytes);
        self.entries += passed.entries;
        // Where the entry it stopped at ends is known: not measured again,
        // so the index is not of it.
        self.peeked = passed.stopped_at.map(|(_, found)| found);
        if self.peeked.is_some() {
            self.index.clear();
        }
        result?;
        Ok((passed.entries, passed.stopped_at.map(|(verdict, _)| verdict)))
    }

    fn fail_entry(&mut self, err: DecodeError) -> StreamError {
        EtfReader::fail_entry(self, err)
    }

    fn resume(&mut self) -> bool {
        EtfReader::resume(self)
    }

    fn offset(&self) -> u64 {
        EtfReader::offset(self)
    }

    #[inline]
    fn next_indexed(&mut self) -> Option<Result<super::Indexed<'_>, StreamError>> {
        if self.failed {
            return None;
        }
        // The usual case inline: an entry buffered whole.
        if let Some(found @ Found::Buffered { skip, len }) = self.buffered_entry() {
            let at = self.accept(found) + skip;
            let index = (self.framing == Framing::Concatenated).then_some(&self.index);
            return Some(Ok(super::Indexed { bytes: &self.buffer[at..at + len], index }));
        }
        self.next_indexed_read()
    }
}

impl<R: Read> EtfReader<R> {
    /// [`Entries::next_indexed`](super::Entries::next_indexed) when the
    /// entry is not buffered whole, or is a dbg drop entry, or fails.
    #[inline(never)]
    fn next_indexed_read(&mut self) -> Option<Result<super::Indexed<'_>, StreamError>> {
        let indexed = self.framing == Framing::Concatenated;
        match self.advance_read()? {
            Ok((at, Found::Buffered { skip, len })) => Some(Ok(super::Indexed {
                bytes: &self.buffer[at + skip..at + skip + len],
                index: indexed.then_some(&self.index),
            })),
            Ok((_, Found::Drop(count))) => {
                self.synthetic = drop_term(count);
                Some(Ok(super::Indexed { bytes: &self.synthetic, index: None }))
            }
            Err(err) => Some(Err(err)),
        }
    }
}
