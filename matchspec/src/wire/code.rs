//! [`ScanCode`]: runs of terms decided by machine code that another crate
//! (the JIT) makes for one wire program, from its [`Needs`].
//!
//! Most terms a selective spec sees are rejected by the tests every match
//! needs. The usual path finds each term, scans it (a loop over the
//! elements' tags) and then tests the needs (a loop over data). For one
//! program both loops take the same steps on every term: machine code made
//! for it takes them straight, with the tests' constants in its
//! instructions, term after term without returning. It passes only the
//! terms it is sure of, with the verdict [`WireProgram::decide`] gives
//! them, and stops at anything else for the usual path to read.
//!
//! [`Needs`]: super::Needs

use std::fmt;

use super::WireProgram;

/// Runs of terms decided by machine code made for one [`WireProgram`]
/// from its [`Needs`](super::Needs).
pub trait ScanCode: Send + Sync + fmt::Debug {
    /// Passes the whole entries at the start of `bytes`, laid out as
    /// `layout`, that it decides as [`WireProgram::decide`] does: a plain
    /// small tuple of the needs' arity (exactly the entry's term, if its
    /// length is given) on which a test fails (no match), or every test
    /// holds and the needs name the result (a match, written to
    /// `matches`, in order). At most `most` entries, each at most
    /// `max_entry` bytes (its lead and length included); it stops once
    /// `matches` is full. It stops before the first entry it does not
    /// pass, for the usual path to read: any entry it is not sure of.
    fn pass(
        &self,
        bytes: &[u8],
        layout: Layout,
        max_entry: usize,
        most: u64,
        matches: &mut [RunMatch],
    ) -> RunPassed;
}

/// How the terms of a run sit in its bytes: each entry is a lead byte (if
/// any), the term's length (if given) and the term. What the entries of a
/// file format are is the stream layer's to say.
///
/// ```
/// use matchspec::wire::Layout;
///
/// // `{packet, 4}`: each term after its 4-byte length.
/// assert_eq!(Layout::prefixed(4).prefix_len(), 4);
/// // A lead byte 0, then a 4-byte length.
/// let led = Layout { lead: Some(0), length_bytes: 4 };
/// assert_eq!(led.prefix_len(), 5);
/// assert!(Layout::ADJACENT.is_supported() && !Layout::prefixed(3).is_supported());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The byte every entry starts with: an entry that starts otherwise is
    /// left to the usual path.
    pub lead: Option<u8>,
    /// How many bytes give the term's length, big-endian, after the lead:
    /// 1, 2 or 4; 0 for none, the term ending where its encoding says.
    pub length_bytes: u8,
}

impl Layout {
    /// Terms one after another, each ending where its encoding says.
    pub const ADJACENT: Layout = Layout { lead: None, length_bytes: 0 };

    /// Each term after its length in `length_bytes` bytes (1, 2 or 4).
    pub const fn prefixed(length_bytes: u8) -> Layout {
        Layout { lead: None, length_bytes }
    }

    /// The bytes before an entry's term.
    pub const fn prefix_len(self) -> usize {
        self.lead.is_some() as usize + self.length_bytes as usize
    }

    /// Does the layout give each term's length in a width
    /// [`ScanCode::pass`] reads (none, 1, 2 or 4 bytes)? It passes
    /// nothing of any other.
    pub const fn is_supported(self) -> bool {
        matches!(self.length_bytes, 0 | 1 | 2 | 4)
    }
}

/// What [`ScanCode::pass`] passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunPassed {
    /// Bytes, from the start.
    pub bytes: usize,
    /// Entries, matches included.
    pub entries: u64,
    /// Matches written.
    pub matches: usize,
}

/// An entry [`ScanCode::pass`] passed as a match. Offsets are from the
/// start of the bytes it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RunMatch {
    /// How many entries it passed before this one.
    pub before: u64,
    /// Where the entry starts (its lead or length, if it has them).
    pub entry: u64,
    /// Where its term starts.
    pub term: u64,
    /// The term's length.
    pub len: u64,
    /// Where the match's result starts, from the term's start (as
    /// [`Verdict::Match`](super::Verdict::Match) says).
    pub result: u64,
}

impl WireProgram {
    /// This program, scanning its inputs with `code` (made for it from
    /// its [`needs`](WireProgram::needs)).
    pub fn with_scan_code(&self, code: std::sync::Arc<dyn ScanCode>) -> WireProgram {
        WireProgram { scan_code: Some(code), ..self.clone() }
    }

    /// Passes the entries at the start of `bytes` that it decides alone,
    /// with its [`ScanCode`] (see [`ScanCode::pass`]); passes nothing
    /// without one.
    #[inline]
    pub fn pass(
        &self,
        bytes: &[u8],
        layout: Layout,
        max_entry: usize,
        most: u64,
        matches: &mut [RunMatch],
    ) -> RunPassed {
        match &self.scan_code {
            Some(code) if layout.is_supported() => {
                code.pass(bytes, layout, max_entry, most, matches)
            }
            _ => RunPassed::default(),
        }
    }

    /// Does it scan with [`ScanCode`]?
    pub fn has_scan_code(&self) -> bool {
        self.scan_code.is_some()
    }
}
