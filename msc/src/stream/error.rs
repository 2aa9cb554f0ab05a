//! [`StreamError`]: why an entry of a stream could not be read.

use std::fmt;
use std::io;

use matchspec::etf::DecodeError;

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
    /// A dbg trace file entry starts with a byte other than 0 (a message)
    /// or 1 (dropped messages).
    NotDbgEntry {
        /// The byte.
        op: u8,
    },
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
            StreamErrorKind::NotDbgEntry { op } => write!(
                f,
                "entry {entry} (byte {offset}) is not a dbg trace file entry: it starts with {op}, not 0 or 1"
            ),
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
            StreamErrorKind::Truncated
            | StreamErrorKind::NotDbgEntry { .. }
            | StreamErrorKind::TooLarge { .. } => None,
        }
    }
}
