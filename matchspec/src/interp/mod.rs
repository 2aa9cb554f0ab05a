//! The interpreter: the reference engine for [`Program`]s.
//!
//! It runs the instructions one after another over a register file kept in
//! a [`Scratch`], which also holds the heap that terms built during the run
//! go to. A scratch is reused from run to run, so a spec that builds
//! nothing runs without allocating, and a program can be shared by many
//! threads, each with its own scratch. The interpreter never panics on any
//! input and needs no recursion: the program only jumps forward.
//!
//! ```
//! use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, spec::Kind, term::Term};
//! let spec = CompiledSpec::compile("[{{'$1', '$2'}, [{'>', '$2', 10}], ['$1']}]", Kind::Table, &Config::default()).unwrap();
//! let mut scratch = Scratch::new();
//! let input = Term::parse("{apple, 42}").unwrap();
//! let outcome = spec.run(input.as_ref(), &mut scratch, &mut TestHost::default()).unwrap();
//! assert_eq!(outcome.result().unwrap().to_string(), "apple");
//! ```

mod exec;
mod fast;
pub(crate) mod frame;

use crate::term::{Heap, Space, Word};

pub(crate) use frame::{Frame, Step};

pub(crate) use exec::{run, run_batch};

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
        }
    }

    /// The heap of terms built by the last run.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }
}
