//! [`ScanCode`]: runs of entries decided by machine code that another
//! crate (the JIT) makes for one wire program, from its [`ScanPlan`].
//!
//! Most entries a selective spec sees are rejected by the tests every
//! match needs. The usual path finds each entry, scans its term (a loop
//! over the elements' tags) and then tests the needs (a loop over data).
//! For one program both loops take the same steps on every term: machine
//! code made for it takes them straight, with the tests' constants in its
//! instructions, entry after entry without returning. It passes only the
//! entries it is sure of, with the verdict [`WireProgram::decide`] gives
//! them, and stops at anything else for the usual path to read.

use std::fmt;

use super::WireProgram;
use super::lower::NeedResult;
use crate::ir::Cmp;

/// A test of one element of the input, as [`ScanCode`] must make it:
/// what the usual path's test says of a valid term's element (it reads
/// only the element's own bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementTest {
    /// No test.
    None,
    /// Is the element this atom? With `w` the 8 bytes where the element
    /// starts as a little-endian word: if `(w ^ head) & mask` is not 0,
    /// the test fails when `w`'s low byte is `SMALL_ATOM_UTF8_EXT` (119,
    /// the usual atom encoding) and is undecided otherwise; if it is 0, the
    /// test holds if `whole`, and is undecided otherwise.
    Atom {
        /// The atom's usual encoding's first 8 bytes, little-endian.
        head: u64,
        /// The bytes of `head` that are the atom's.
        mask: u64,
        /// The atom's encoding fits in 8 bytes.
        whole: bool,
    },
    /// `element op value`, decided when the element is a
    /// `SMALL_INTEGER_EXT` (its byte, unsigned) or an `INTEGER_EXT` (its 4
    /// bytes, big-endian, signed); undecided otherwise.
    Compare {
        /// The comparison (equalities compare the integers).
        op: Cmp,
        /// The constant.
        value: i64,
    },
    /// A test the code leaves undecided.
    Other,
}

/// What [`ScanCode`] is made from: the tests every match needs, one per
/// element of the input (a small tuple of `tests.len()` elements), and
/// what a match is when they all hold, if nothing else can fail then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPlan {
    /// The test of each element.
    pub tests: Vec<ElementTest>,
    /// The match's result when every test holds, if the clause then only
    /// reads and succeeds.
    pub result: Option<PlanResult>,
}

/// The result of a match [`ScanPlan::result`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanResult {
    /// The whole input (`'$_'`): at byte 1.
    Input,
    /// The element of this index (below the arity).
    Element(u32),
}

/// Runs of entries decided by machine code made for one [`WireProgram`]
/// from its [`ScanPlan`].
///
/// The usual path finds each entry, scans its term (a loop over the
/// elements' tags) and then tests the needs (a loop over data). For one
/// program both loops take the same steps on every term: machine code made
/// for it takes them straight, with the tests' constants in its
/// instructions, entry after entry without returning.
pub trait ScanCode: Send + Sync + fmt::Debug {
    /// Passes the whole entries at the start of `bytes`, framed as
    /// `framing`, that it decides as [`WireProgram::decide`] does: a plain
    /// small tuple of the plan's arity (exactly the entry's term, if
    /// framed) on which a test fails (no match), or every test holds and
    /// the plan names the result (a match, written to `matches`, in
    /// order). At most `most` entries, each at most `max_entry` bytes (its
    /// length prefix included); it stops once `matches` is full. It stops
    /// before the first entry it does not pass, for the usual path to
    /// read: any entry it is not sure of.
    fn pass(
        &self,
        bytes: &[u8],
        framing: RunFraming,
        max_entry: usize,
        most: u64,
        matches: &mut [RunMatch],
    ) -> RunPassed;
}

/// How the entries [`ScanCode::pass`] passes are framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFraming {
    /// Terms one after another: each ends where its scan says.
    Concatenated,
    /// Each term after its length, 4 bytes big-endian (`{packet, 4}`).
    Packet4,
    /// dbg trace file message entries: a 0 byte, then as `Packet4`.
    DbgMessage,
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
    /// Where the entry starts (its length prefix, if framed).
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
    /// What [`ScanCode`] makes for this program, if its needs start with
    /// the input's arity, it is at most [`SMALL_ARITY`](super::SMALL_ARITY), and no element has
    /// two tests. A test of [`ElementTest::Other`] kind is one the code
    /// cannot decide.
    pub fn scan_plan(&self) -> Option<ScanPlan> {
        let tests = self.needs.by_element.as_deref()?;
        let tests: Vec<_> =
            tests.iter().map(|test| test.map_or(ElementTest::None, |t| t.public())).collect();
        let result = match self.needs.result {
            Some(NeedResult::Input) => Some(PlanResult::Input),
            Some(NeedResult::Element(i)) => {
                ((i as usize) < tests.len()).then_some(PlanResult::Element(i))
            }
            None => None,
        };
        Some(ScanPlan { tests, result })
    }

    /// This program, scanning its inputs with `code` (made for it from
    /// its [`scan_plan`](WireProgram::scan_plan)).
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
        framing: RunFraming,
        max_entry: usize,
        most: u64,
        matches: &mut [RunMatch],
    ) -> RunPassed {
        match &self.scan_code {
            Some(code) => code.pass(bytes, framing, max_entry, most, matches),
            None => RunPassed::default(),
        }
    }

    /// Does it scan with [`ScanCode`]?
    pub fn has_scan_code(&self) -> bool {
        self.scan_code.is_some()
    }
}
