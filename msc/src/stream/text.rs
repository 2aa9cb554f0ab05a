//! [`TextReader`]: dot-terminated terms from a byte stream, a chunk at a
//! time, each decoded into the caller's heap as soon as its `.` has come.

use std::fmt;
use std::io::{self, Read};

use matchspec::syntax::{NextTerm, ParseError, Syntax, TermCursor, TermScratch};
use matchspec::term::{Heap, Word};

/// How many bytes one read asks for.
const CHUNK: usize = 64 * 1024;

/// Why a term of a text stream could not be read.
#[derive(Debug)]
pub enum TextError {
    /// Reading failed.
    Io(io::Error),
    /// The bytes from `offset` on are not UTF-8.
    NotUtf8 {
        /// Where the bad bytes start.
        offset: u64,
    },
    /// Term number `entry` does not parse; its location is in the whole
    /// stream. Reading can go on after it ([`TextReader::next_into`] again).
    Parse {
        /// The term's number, from 1.
        entry: u64,
        /// What is wrong, and where.
        error: ParseError,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Io(err) => err.fmt(f),
            TextError::NotUtf8 { offset } => write!(f, "not UTF-8 text from byte {offset}"),
            TextError::Parse { error, .. } => error.fmt(f),
        }
    }
}

impl std::error::Error for TextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TextError::Io(err) => Some(err),
            TextError::Parse { error, .. } => Some(error),
            TextError::NotUtf8 { .. } => None,
        }
    }
}

/// Reads the terms of a text stream (what `file:consult/1` reads) one at a
/// time, in memory that holds one chunk and the lines of the term being
/// read, however long the stream. (Lines are kept whole so that an error
/// shows its line: a stream on one huge line is held whole.)
///
/// ```
/// use msc::Heap;
/// use msc::stream::TextReader;
///
/// let mut reader = TextReader::new("{a, 1}.\n% a comment\n{b, 2}.\n".as_bytes());
/// let mut heap = Heap::new();
/// let mut seen = Vec::new();
/// while let Some(term) = reader.next_into(&mut heap) {
///     seen.push(heap.view(term?).to_string());
/// }
/// assert_eq!(seen, ["{a,1}", "{b,2}"]);
/// # Ok::<(), msc::stream::TextError>(())
/// ```
#[derive(Debug)]
pub struct TextReader<R> {
    source: R,
    /// Text read and not yet dropped; it starts at the start of a line.
    text: String,
    /// Where the next term starts in `text`.
    next: usize,
    /// The bytes of a character cut by the last read.
    partial: Vec<u8>,
    /// Lines and bytes of the stream dropped from the front of `text`.
    lines_dropped: u32,
    bytes_dropped: u64,
    /// Terms read so far (errors included).
    entries: u64,
    at_end: bool,
    /// A read or UTF-8 error ended the stream.
    failed: bool,
    /// Where bytes that are not UTF-8 start: the text before them is read
    /// first.
    not_utf8: Option<u64>,
    scratch: TermScratch,
    /// Lines of `text` before the next term's.
    cursor: TermCursor,
    /// The release's Erlang syntax the terms are read with.
    syntax: Syntax,
    chunk: Vec<u8>,
}

impl<R: Read> TextReader<R> {
    /// Reads terms from `source`.
    pub fn new(source: R) -> TextReader<R> {
        TextReader {
            source,
            text: String::new(),
            next: 0,
            partial: Vec::new(),
            lines_dropped: 0,
            bytes_dropped: 0,
            entries: 0,
            at_end: false,
            failed: false,
            not_utf8: None,
            scratch: TermScratch::default(),
            cursor: TermCursor::default(),
            syntax: Syntax::default(),
            chunk: vec![0; CHUNK],
        }
    }

    /// Reads the terms with `syntax` (a release's: OTP 29 reads based
    /// floats); by default the default release's.
    pub fn syntax(mut self, syntax: Syntax) -> TextReader<R> {
        self.syntax = syntax;
        self.cursor = TermCursor::new(syntax);
        self
    }

    /// How many bytes of the stream the terms read so far took.
    pub fn offset(&self) -> u64 {
        self.bytes_dropped + self.next as u64
    }

    /// Decodes the next term into `heap`: `None` at the end of the stream
    /// (and after a read error). After a parse error, the next call reads
    /// the term after the bad one.
    pub fn next_into(&mut self, heap: &mut Heap) -> Option<Result<Word, TextError>> {
        if self.failed {
            return None;
        }
        loop {
            match self.cursor.next(&self.text, self.next, self.at_end, heap, &mut self.scratch) {
                NextTerm::Term { root, end } => {
                    self.next = end;
                    self.entries += 1;
                    return Some(Ok(root));
                }
                NextTerm::Error { error, end } => {
                    self.next = end;
                    self.entries += 1;
                    let error = error.with_line_offset(self.lines_dropped);
                    return Some(Err(TextError::Parse { entry: self.entries, error }));
                }
                NextTerm::Done => return None,
                NextTerm::More => {
                    if let Err(err) = self.fill() {
                        self.failed = true;
                        return Some(Err(err));
                    }
                }
            }
        }
    }

    /// Drops the lines before the next term and reads one more chunk.
    fn fill(&mut self) -> Result<(), TextError> {
        if let Some(offset) = self.not_utf8 {
            return Err(TextError::NotUtf8 { offset });
        }
        if self.next > 0 {
            // Keep the next term's line whole, so that errors show it.
            if let Some(newline) = self.text[..self.next].rfind('\n') {
                let dropped = &self.text[..=newline];
                // A sum of comparisons, which the compiler vectorizes.
                let newlines: usize = dropped.bytes().map(|b| usize::from(b == b'\n')).sum();
                self.lines_dropped = self.lines_dropped.saturating_add(newlines as u32);
                self.bytes_dropped += dropped.len() as u64;
                self.text.drain(..=newline);
                self.next -= newline + 1;
                // The lines dropped are counted above; the text starts anew.
                self.cursor = TermCursor::new(self.syntax);
            }
        }
        let read = loop {
            match self.source.read(&mut self.chunk) {
                Ok(n) => break n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(TextError::Io(err)),
            }
        };
        if read == 0 {
            self.at_end = true;
            if !self.partial.is_empty() {
                let offset = self.bytes_dropped + self.text.len() as u64;
                return Err(TextError::NotUtf8 { offset });
            }
            return Ok(());
        }
        self.partial.extend_from_slice(&self.chunk[..read]);
        let valid = match std::str::from_utf8(&self.partial) {
            Ok(text) => text.len(),
            // A character cut at the end of the read: the next read ends it.
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(err) => {
                let offset = self.bytes_dropped + (self.text.len() + err.valid_up_to()) as u64;
                self.not_utf8 = Some(offset);
                err.valid_up_to()
            }
        };
        let text = std::str::from_utf8(&self.partial[..valid])
            .map_err(|_| TextError::NotUtf8 { offset: 0 })?;
        self.text.push_str(text);
        self.partial.drain(..valid);
        Ok(())
    }
}
