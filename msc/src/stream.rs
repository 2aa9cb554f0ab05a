//! Terms from a byte stream, one entry at a time, in bounded memory:
//! concatenated external term format (as `term_to_binary/1` output written
//! one after another) or `{packet, N}` framing (as ports and sockets carry
//! it).
//!
//! An [`EtfReader`] reads from any [`Read`] a chunk at a time and keeps only
//! the entry it is decoding (plus what the last read brought beyond it), so
//! memory does not grow with the input. A length field never makes it
//! allocate more than the bytes that actually arrive: a `{packet, 4}`
//! prefix claiming 4 GB in a 10-byte file is a truncated entry, not an
//! allocation.
//!
//! ```
//! use msc::stream::{EtfReader, Framing};
//! use msc::{Heap, etf};
//!
//! // Two entries, each a 4-byte big-endian length and a term.
//! let mut bytes = Vec::new();
//! for text in ["{order, 7}", "[1, 2]"] {
//!     let term = etf::encode(msc::Term::parse(text)?.as_ref())?;
//!     bytes.extend((term.len() as u32).to_be_bytes());
//!     bytes.extend(term);
//! }
//! let mut reader = EtfReader::new(&bytes[..]).framing(Framing::Packet4);
//! let mut heap = Heap::new();
//! let mut seen = Vec::new();
//! while let Some(entry) = reader.next_into(&mut heap) {
//!     seen.push(heap.view(entry?).to_string());
//! }
//! assert_eq!(seen, ["{order,7}", "[1,2]"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::{self, Read};

use matchspec::etf::{self, DecodeError, DecodeErrorKind};
use matchspec::term::{Heap, Word};

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
}

impl Framing {
    /// The length prefix's size in bytes (0: none).
    fn prefix(self) -> usize {
        match self {
            Framing::Concatenated => 0,
            Framing::Packet1 => 1,
            Framing::Packet2 => 2,
            Framing::Packet4 => 4,
        }
    }
}

/// The most bytes one entry may take unless [`EtfReader::max_entry`] says
/// otherwise (1 GiB).
pub const DEFAULT_MAX_ENTRY: usize = 1 << 30;

/// How many bytes one read asks for.
const CHUNK: usize = 64 * 1024;

/// Why an entry could not be read. After an error the reader yields
/// nothing more: every entry before it was yielded.
#[derive(Debug)]
pub struct StreamError {
    /// What went wrong.
    pub kind: StreamErrorKind,
    /// The byte offset in the stream where the entry starts.
    pub offset: u64,
    /// The entry's number, from 1.
    pub entry: u64,
}

/// What went wrong with an entry.
#[derive(Debug)]
pub enum StreamErrorKind {
    /// Reading failed.
    Io(io::Error),
    /// The stream ends inside the entry (its length prefix or its term).
    Truncated,
    /// The entry's bytes are not a term (offsets in it are from the
    /// entry's first byte, after any length prefix).
    Decode(DecodeError),
    /// The entry is longer than the reader's limit.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (entry, offset) = (self.entry, self.offset);
        match &self.kind {
            StreamErrorKind::Io(err) => write!(f, "entry {entry} (byte {offset}): {err}"),
            StreamErrorKind::Truncated => {
                write!(f, "entry {entry} (byte {offset}): the input ends inside it")
            }
            StreamErrorKind::Decode(err) => write!(f, "entry {entry} (byte {offset}): {err}"),
            StreamErrorKind::TooLarge { limit } => {
                write!(f, "entry {entry} (byte {offset}) is longer than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            StreamErrorKind::Io(err) => Some(err),
            StreamErrorKind::Decode(err) => Some(err),
            StreamErrorKind::Truncated | StreamErrorKind::TooLarge { .. } => None,
        }
    }
}

/// Reads the entries of a stream of encoded terms (see the [module
/// documentation](self)).
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
    /// Entries yielded so far.
    entries: u64,
    /// The source has no more bytes.
    at_end: bool,
    /// An error was reported: nothing more comes unless it is resumed.
    failed: bool,
    /// The length of the entry that failed, when its end is known (a
    /// length prefix said it) and reading may go on after it.
    skippable: Option<usize>,
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
            entries: 0,
            at_end: false,
            failed: false,
            skippable: None,
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
        let Some(len) = self.skippable.take().filter(|_| self.failed) else { return false };
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

    /// Decodes the next entry into `heap`: `None` at the end of the
    /// stream (and after an error).
    pub fn next_into(&mut self, heap: &mut Heap) -> Option<Result<Word, StreamError>> {
        if self.failed {
            return None;
        }
        let result = match self.framing.prefix() {
            0 => self.next_concatenated(heap),
            prefix => self.next_packet(prefix, heap),
        };
        match result {
            Ok(None) => None,
            Ok(Some(word)) => {
                self.entries += 1;
                Some(Ok(word))
            }
            Err(kind) => {
                self.failed = true;
                if !matches!(kind, StreamErrorKind::Decode(_) | StreamErrorKind::TooLarge { .. })
                    || self.framing == Framing::Concatenated
                {
                    self.skippable = None;
                }
                Some(Err(StreamError { kind, offset: self.offset, entry: self.entries + 1 }))
            }
        }
    }

    fn buffered(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }

    /// Consumes `n` buffered bytes.
    fn consume(&mut self, n: usize) {
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

    fn next_packet(
        &mut self,
        prefix: usize,
        heap: &mut Heap,
    ) -> Result<Option<Word>, StreamErrorKind> {
        if !self.want(1)? {
            return Ok(None);
        }
        if !self.want(prefix)? {
            return Err(StreamErrorKind::Truncated);
        }
        let len = self.buffered()[..prefix].iter().fold(0usize, |n, &b| n << 8 | usize::from(b));
        self.skippable = Some(prefix.saturating_add(len));
        if len.saturating_add(prefix) > self.max_entry {
            return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
        }
        // Reads a chunk at a time: what is buffered never exceeds what came.
        if !self.want(prefix + len)? {
            return Err(StreamErrorKind::Truncated);
        }
        let term = &self.buffer[self.start + prefix..self.start + prefix + len];
        let word = etf::decode_into(term, heap).map_err(StreamErrorKind::Decode)?;
        self.consume(prefix + len);
        Ok(Some(word))
    }

    fn next_concatenated(&mut self, heap: &mut Heap) -> Result<Option<Word>, StreamErrorKind> {
        if !self.want(1)? {
            return Ok(None);
        }
        loop {
            match etf::decode_prefix(self.buffered(), heap) {
                Ok((_, used)) if used > self.max_entry => {
                    return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
                }
                Ok((word, used)) => {
                    self.consume(used);
                    return Ok(Some(word));
                }
                // The term goes on beyond what is buffered: read more
                // (each retry has at least a chunk more, so decoding again
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

/// Does decoding `err` only say the bytes ended too soon?
fn needs_more(err: &DecodeError) -> bool {
    !err.in_compressed()
        && matches!(
            err.kind(),
            DecodeErrorKind::UnexpectedEnd | DecodeErrorKind::LengthExceedsInput { .. }
        )
}
