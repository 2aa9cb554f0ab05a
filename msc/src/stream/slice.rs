//! [`SliceReader`]: the entries of a stream already in memory, handed out
//! as slices of it, with no copy.

use std::io;

use matchspec::Scratch;
use matchspec::etf::{self, DecodeError};
use matchspec::wire::{RunMatch, Verdict, WireProgram};

use super::reader::{Found, Header, Passed, Run, drop_term, header, needs_more};
use super::{DEFAULT_MAX_ENTRY, Entries, Framing, StreamError, StreamErrorKind, WireMatch};

/// Reads the entries of `bytes` as [`EtfReader`](super::EtfReader) reads a
/// stream, with the same errors, but lends each entry straight out of
/// `bytes`: for a file mapped or read whole, or a buffer received from a
/// socket.
///
/// ```
/// use msc::stream::{Framing, SliceReader};
///
/// let bytes = [0, 0, 0, 3, 131, 97, 7, 0, 0, 0, 3, 131, 97, 8];
/// let mut reader = SliceReader::new(&bytes).framing(Framing::Packet4);
/// let first = reader.next_framed().unwrap()?;
/// assert_eq!(first, &bytes[..7]); // a slice of the input, length prefix and all
/// assert_eq!(reader.next_framed().unwrap()?, &bytes[7..]);
/// assert!(reader.next_framed().is_none());
/// # Ok::<(), msc::stream::StreamError>(())
/// ```
#[derive(Debug)]
pub struct SliceReader<'a> {
    bytes: &'a [u8],
    framing: Framing,
    max_entry: usize,
    /// Where the next entry starts.
    pos: usize,
    /// Where the entry yielded last started.
    entry_offset: u64,
    entries: u64,
    failed: bool,
    /// The length of the entry that failed, when reading may go past it.
    skippable: Option<usize>,
    /// The term of a dbg drop entry, which the input does not hold.
    synthetic: Vec<u8>,
    /// The top-level elements of the term measured last (concatenated
    /// terms), for the wire program.
    index: etf::PlainIndex,
    /// Where a wire program's scan code writes the matches it passes.
    matches: Vec<RunMatch>,
}

impl<'a> SliceReader<'a> {
    /// Reads `bytes` as concatenated terms, entries of at most
    /// [`DEFAULT_MAX_ENTRY`] bytes.
    pub fn new(bytes: &'a [u8]) -> SliceReader<'a> {
        SliceReader {
            bytes,
            framing: Framing::default(),
            max_entry: DEFAULT_MAX_ENTRY,
            pos: 0,
            entry_offset: 0,
            entries: 0,
            failed: false,
            skippable: None,
            synthetic: Vec::new(),
            index: etf::PlainIndex::new(),
            matches: Vec::new(),
        }
    }

    /// Reads entries framed as `framing`.
    pub fn framing(self, framing: Framing) -> SliceReader<'a> {
        SliceReader { framing, ..self }
    }

    /// Refuses entries longer than `bytes` (framing included).
    pub fn max_entry(self, bytes: usize) -> SliceReader<'a> {
        SliceReader { max_entry: bytes, ..self }
    }

    /// The next entry as the input holds it, framing included: `None` at
    /// the end (and after an error).
    pub fn next_framed(&mut self) -> Option<Result<&'a [u8], StreamError>> {
        let at = self.pos;
        match self.advance()? {
            Ok(_) => Some(Ok(&self.bytes[at..self.pos])),
            Err(err) => Some(Err(err)),
        }
    }

    /// Finds the next entry and moves past it.
    fn advance(&mut self) -> Option<Result<Found, StreamError>> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        let found = self.find(rest);
        Some(match found {
            Ok(found) => {
                self.entry_offset = self.pos as u64;
                self.pos += found.framed_len();
                self.entries += 1;
                Ok(found)
            }
            Err(kind) => {
                self.failed = true;
                if !matches!(kind, StreamErrorKind::TooLarge { .. })
                    || self.framing == Framing::Concatenated
                {
                    self.skippable = None;
                }
                Err(StreamError { kind, offset: self.pos as u64, entry: self.entries + 1 })
            }
        })
    }

    fn find(&mut self, rest: &[u8]) -> Result<Found, StreamErrorKind> {
        let prefix = self.framing.prefix();
        if prefix == 0 {
            return match etf::term_len_indexed(rest, &mut self.index) {
                Ok(len) if len > self.max_entry => {
                    Err(StreamErrorKind::TooLarge { limit: self.max_entry })
                }
                Ok(len) => Ok(Found::Buffered { skip: 0, len }),
                Err(err) if needs_more(&err) => {
                    // It goes on beyond the input: past the limit, it is
                    // too long whatever the rest would have been.
                    if rest.len() >= self.max_entry {
                        Err(StreamErrorKind::TooLarge { limit: self.max_entry })
                    } else {
                        Err(StreamErrorKind::Truncated)
                    }
                }
                Err(err) => Err(StreamErrorKind::Decode(err)),
            };
        }
        let head = rest.get(..prefix).ok_or(StreamErrorKind::Truncated)?;
        let len = match header(self.framing, head)? {
            Header::Drop(count) => return Ok(Found::Drop(count)),
            Header::Term(len) => len,
        };
        self.skippable = Some(prefix.saturating_add(len));
        if prefix.saturating_add(len) > self.max_entry {
            return Err(StreamErrorKind::TooLarge { limit: self.max_entry });
        }
        if rest.len() - prefix < len {
            return Err(StreamErrorKind::Truncated);
        }
        Ok(Found::Buffered { skip: prefix, len })
    }
}

impl Entries for SliceReader<'_> {
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
            offset: self.pos as u64,
        };
        let mut passed = Passed { bytes: 0, entries: 0, stopped_at: None };
        let result = run.pass(
            &self.bytes[self.pos..],
            &mut self.index,
            &mut self.matches,
            scratch,
            on_match,
            &mut passed,
        );
        self.pos += passed.bytes;
        self.entries += passed.entries;
        result?;
        Ok((passed.entries, passed.stopped_at.map(|(verdict, _)| verdict)))
    }

    fn fail_entry(&mut self, err: DecodeError) -> StreamError {
        self.failed = true;
        // The entry was passed already: going on means forgetting the error.
        self.skippable = (self.framing != Framing::Concatenated).then_some(0);
        StreamError {
            kind: StreamErrorKind::Decode(err),
            offset: self.entry_offset,
            entry: self.entries,
        }
    }

    fn resume(&mut self) -> bool {
        let Some(len) = self.skippable.take().filter(|_| self.failed) else { return false };
        if len > 0 {
            // A framed entry refused before it was passed: pass it now.
            let end = self.pos.saturating_add(len);
            if end > self.bytes.len() {
                return false;
            }
            self.pos = end;
            self.entries += 1;
        }
        self.failed = false;
        true
    }

    fn offset(&self) -> u64 {
        self.pos as u64
    }

    fn next_indexed(&mut self) -> Option<Result<super::Indexed<'_>, StreamError>> {
        let indexed = self.framing == Framing::Concatenated;
        let at = self.pos;
        match self.advance()? {
            Ok(Found::Buffered { skip, len }) => Some(Ok(super::Indexed {
                bytes: &self.bytes[at + skip..at + skip + len],
                index: indexed.then_some(&self.index),
            })),
            Ok(Found::Drop(count)) => {
                self.synthetic = drop_term(count);
                Some(Ok(super::Indexed { bytes: &self.synthetic, index: None }))
            }
            Err(err) => Some(Err(err)),
        }
    }
}
