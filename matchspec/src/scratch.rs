//! [`Scratch`]: what a run of any engine writes besides its outcome.

use crate::term::{Heap, Space, Word};

/// The mutable state of a run: registers, the arguments of a trace event,
/// and the heap of terms built by the run.
///
/// A scratch belongs to one thread at a time and may be used with any
/// program; keep one per thread and reuse it. Terms in an
/// [`Outcome`](crate::Outcome) borrow it until the next run.
#[derive(Debug)]
pub struct Scratch {
    /// The program whose constants the registers hold (0: none).
    pub(crate) loaded: u64,
    pub(crate) registers: Vec<Word>,
    pub(crate) args: Vec<Word>,
    pub(crate) heap: Heap,
    pub(crate) input_copy: Heap,
    /// The registers of a run on encoded terms.
    pub(crate) encoded: EncodedRegisters,
    /// The plain term a wire program last sent to the byte engine, and
    /// where its elements start: the engine's run does not scan it again.
    pub(crate) plain: crate::etf::PlainIndex,
}

/// What the registers hold in a run on bytes (see
/// [`ir::Encoded`](crate::ir::Encoded)): a word (in the ordinary
/// register) or a position, and once an op has needed a position's term as
/// a word, that word too.
#[derive(Debug, Default)]
pub(crate) struct EncodedRegisters {
    /// The position each holds, where it holds one.
    pub(crate) positions: Vec<crate::encoded::Position>,
    /// What each holds.
    pub(crate) held: Vec<Held>,
    /// The pieces of the tuples kept as parts ([`Held::Built`]).
    pub(crate) pieces: Vec<crate::encoded::built::Piece>,
}

/// What a register holds in a run on bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// A word, in the ordinary register.
    Word,
    /// A position.
    Position,
    /// A position, and its term decoded in the ordinary register.
    Decoded,
    /// A tuple kept as its elements: the pieces `first..first + arity`.
    Built {
        /// Where its elements start in the pieces.
        first: u32,
        /// How many.
        arity: u32,
    },
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch::new()
    }
}

impl Scratch {
    /// An empty scratch.
    pub fn new() -> Scratch {
        Scratch {
            loaded: 0,
            registers: Vec::new(),
            args: Vec::new(),
            heap: Heap::in_space(Space::Scratch),
            input_copy: Heap::new(),
            encoded: EncodedRegisters::default(),
            plain: crate::etf::PlainIndex::new(),
        }
    }

    /// The heap of terms built by the last run.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }
}
