//! Terms from a byte stream, one entry at a time, in bounded memory:
//! concatenated external term format (as `term_to_binary/1` output written
//! one after another) or `{packet, N}` framing (as ports and sockets carry
//! it).
//!
//! An [`EtfReader`] reads from any [`Read`](std::io::Read) a chunk at a time and keeps only
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

mod detect;
mod error;
mod filter;
mod reader;
mod slice;
mod text;
mod wrap;

pub use detect::Looks;
pub use error::{StreamError, StreamErrorKind};
pub use filter::{Entry, Filter, Sink, Summary};
pub use reader::{DEFAULT_MAX_ENTRY, EtfReader, Framing};
pub use slice::SliceReader;
pub use text::{TextError, TextReader};
pub use wrap::{WrapSetError, wrap_order};

use std::io;

use matchspec::Scratch;
use matchspec::wire::{Verdict, WireProgram};

/// A source of encoded entries that a [`Filter`] runs over: an
/// [`EtfReader`] (any `Read`, a chunk at a time) or a [`SliceReader`] (bytes
/// in memory, no copy).
pub trait Entries {
    /// The next entry's term, undecoded, with its index if measuring it
    /// made one (concatenated terms: the wire program then reads it
    /// without a scan of its own): `None` at the end (and after an error).
    fn next_indexed(&mut self) -> Option<Result<Indexed<'_>, StreamError>>;
    /// Reports that the entry given last does not decode.
    fn fail_entry(&mut self, err: matchspec::etf::DecodeError) -> StreamError;
    /// Goes past the entry that failed, if its end is known (`true`).
    fn resume(&mut self) -> bool;
    /// How many bytes the entries read so far took.
    fn offset(&self) -> u64;
    /// The next entry's term, undecoded: `None` at the end (and after an
    /// error).
    fn next_entry(&mut self) -> Option<Result<&[u8], StreamError>> {
        Some(self.next_indexed()?.map(|entry| entry.bytes))
    }

    /// Goes past the next entries (at most `most`) that `program` decides
    /// on the wire alone, as far as they are at hand whole, in one loop:
    /// what a selective spec spends most entries on. Rejections are
    /// passed; each match is handed to `on_match` as it is passed, in
    /// order. Says how many entries it passed and, if it stopped at an
    /// entry it did not decide alone, that entry's verdict: the entry
    /// [`next_indexed`](Entries::next_indexed) gives next. An error is
    /// `on_match`'s (the entries before the one it failed on are passed).
    /// A reader that cannot do this passes none.
    ///
    /// ```
    /// use msc::matchspec::{Run, Scratch};
    /// use msc::stream::{Entries, SliceReader};
    /// use msc::{Kind, Spec, Term, etf};
    ///
    /// let mut bytes = Vec::new();
    /// for text in ["{1, no}", "{2, ok}", "{3, no}", "{fun erlang:abs/1, ok}"] {
    ///     bytes.extend(etf::encode(Term::parse(text)?.as_ref())?);
    /// }
    /// // A fun is not a term the wire reads: it stops there, leaving
    /// // the entry to `next_indexed` (it did not find its verdict).
    /// let spec = Spec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table)?;
    /// let program = spec.wire_program().expect("a table spec");
    /// let mut reader = SliceReader::new(&bytes);
    /// let mut matched = Vec::new();
    /// let passed = reader.pass_decided(program, &mut Scratch::new(), u64::MAX, &mut |m| {
    ///     matched.push((m.before, m.bytes[m.result..].to_vec()));
    ///     Ok(())
    /// })?;
    /// assert_eq!(passed, (3, None));
    /// // The second entry (one passed before it), its result the integer 2.
    /// assert_eq!(matched, [(1, vec![97, 2, 119, 2, b'o', b'k'])]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn pass_decided(
        &mut self,
        program: &WireProgram,
        scratch: &mut Scratch,
        most: u64,
        on_match: &mut dyn FnMut(WireMatch<'_>) -> io::Result<()>,
    ) -> io::Result<(u64, Option<Verdict>)> {
        let _ = (program, scratch, most, on_match);
        Ok((0, None))
    }
}

/// An entry a run of [`Entries::pass_decided`] matched on the wire.
#[derive(Clone, Copy, Debug)]
pub struct WireMatch<'a> {
    /// How many entries the run passed before it.
    pub before: u64,
    /// The byte offset where it starts (its length prefix, if framed).
    pub offset: u64,
    /// Its term, undecoded (version byte first).
    pub bytes: &'a [u8],
    /// Where the match's result starts in `bytes` (see
    /// [`Verdict::Match`]).
    pub result: usize,
}

/// An entry's term and, if the reader made one, its index.
#[derive(Clone, Copy, Debug)]
pub struct Indexed<'a> {
    /// The term, undecoded (version byte first).
    pub bytes: &'a [u8],
    /// Where its top-level elements start, found while measuring it.
    pub index: Option<&'a matchspec::etf::PlainIndex>,
}
