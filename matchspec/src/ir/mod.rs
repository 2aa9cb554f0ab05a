//! The IR: one compiled program that every engine runs.
//!
//! A [`Program`] is a flat list of [`Op`]s over a file of registers, with
//! jumps to explicit labels (instruction indices). It runs straight through
//! with forward jumps only, so running it needs no recursion and always
//! ends.
//!
//! # Registers
//!
//! A register holds one [`Word`]. The file is laid out as:
//!
//! ```text
//! r0              the input term (table specs)
//! r1 ..           one per match variable '$N' (in r(1+N)), written by the head
//! rK ..           the constants, loaded from the program before each run
//! rT ..           temporaries, used like a stack by guard and body expressions
//! ```
//!
//! Constants being registers means no instruction has to decode "register
//! or constant" operands: an engine copies [`Program::constants`] into
//! place and then every operand is a plain register.
//!
//! # Clauses
//!
//! Each clause is a run of code: head tests, then guard tests, then the
//! body, then [`Op::Succeed`]. Every test of a clause fails to the first
//! instruction of the next clause; the last clause fails to [`Op::NoMatch`].
//! Guard functions that fail jump there too; body functions that fail give
//! `'EXIT'` instead (see [`Fail`]).
//!
//! # Text form
//!
//! `Display` prints a stable text form (what `msc dump` shows). The
//! constants `true` and `'EXIT'` are always loaded; variable `'$N'` lives
//! in `r(1+N)`:
//!
//! ```
//! use matchspec::{CompiledSpec, Config, spec::Kind};
//!
//! let spec = "[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]";
//! let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
//! assert_eq!(compiled.program().to_string(), "\
//! table program: 1 clause, 7 registers
//!   r0 = input, r2 = '$1', r3 = '$2', r4 = true, r5 = 'EXIT', r6 = 100
//! clause 1:
//!   0: is_tuple r0, 2 else @5
//!   1: get_element r2 = r0[0]
//!   2: get_element r3 = r0[1]
//!   3: compare r3 > r6 else @5
//!   4: succeed r2
//! no match:
//!   5: no_match
//! ");
//! ```

mod compile;
mod display;
mod encoded;
mod op;
mod prologue;
mod shape;
mod verify;

pub use encoded::{Encoded, NotEncoded};
pub use op::{ChangeTrace, Cmp, Fail, LogicOp, Op, TraceFlag};
pub use shape::{Effect, Labels, Reads};
pub use verify::VerifyError;

pub(crate) use compile::compile;
pub(crate) use prologue::ArgPrologue;

use crate::release::Release;
use crate::spec::Kind;
use crate::term::{Heap, Word};

/// A register (an index into the register file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u32);

impl Reg {
    /// The input term of a table spec.
    pub const INPUT: Reg = Reg(0);
    /// "No register" (e.g. no target process in [`Op::ChangeTrace`]).
    pub const NONE: Reg = Reg(u32::MAX);

    /// The register index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A position in the code (an instruction index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub u32);

impl Label {
    /// The instruction index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A run of registers listed in [`Program::operands`] (for ops that take
/// any number of operands, such as [`Op::MakeTuple`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operands {
    /// Index of the first in [`Program::operands`].
    pub start: u32,
    /// How many.
    pub len: u32,
}

impl Operands {
    /// The range of [`Program::operands`] they occupy.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A compiled match spec, ready for any engine.
///
/// Immutable and `Send + Sync`: share one (behind an `Arc`, as
/// `CompiledSpec` does) between threads, each with its
/// own scratch space.
#[derive(Clone, Debug)]
pub struct Program {
    /// A number no other program of this process has: scratches use it to
    /// know whether their registers already hold this program's constants.
    pub(crate) id: u64,
    pub(crate) kind: Kind,
    pub(crate) release: Release,
    pub(crate) code: Vec<Op>,
    pub(crate) operands: Vec<Reg>,
    pub(crate) constants: Vec<Word>,
    pub(crate) first_constant: u32,
    pub(crate) registers: u32,
    pub(crate) literals: Heap,
    pub(crate) clause_starts: Vec<Label>,
    pub(crate) variables: Vec<(u32, Reg)>,
    /// What the code's first ops do, if it starts by reading arguments.
    pub(crate) prologue: Option<ArgPrologue>,
}

impl Program {
    /// A number no other program compiled by this process has (clones keep
    /// it): what engines key their caches on.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The event kind it was compiled for.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The release whose answers its functions give.
    pub fn release(&self) -> Release {
        self.release
    }

    /// The instructions.
    pub fn code(&self) -> &[Op] {
        &self.code
    }

    /// The operand lists of variadic instructions.
    pub fn operands(&self) -> &[Reg] {
        &self.operands
    }

    /// The registers listed by `operands`.
    pub fn operand_regs(&self, operands: Operands) -> &[Reg] {
        &self.operands[operands.range()]
    }

    /// The constants, which engines load into registers
    /// `first_constant()..first_constant() + constants().len()` before a run.
    pub fn constants(&self) -> &[Word] {
        &self.constants
    }

    /// The register of the first constant.
    pub fn first_constant(&self) -> usize {
        self.first_constant as usize
    }

    /// The size of the register file.
    pub fn registers(&self) -> usize {
        self.registers as usize
    }

    /// The literal heap the constants point into (the literal space).
    pub fn literals(&self) -> &Heap {
        &self.literals
    }

    /// The first instruction of each clause.
    pub fn clause_starts(&self) -> &[Label] {
        &self.clause_starts
    }
}
