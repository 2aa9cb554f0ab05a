//! The interpreter: the reference engine for [`Program`](crate::ir::Program)s.
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

pub(crate) mod encoded;
mod exec;
mod fast;
pub(crate) mod frame;

pub use crate::scratch::Scratch;

pub(crate) use frame::{Frame, Step};

pub(crate) use exec::{run, run_batch};
