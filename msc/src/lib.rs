//! msc: Erlang match specifications, exactly as OTP 27.3 answers them, on
//! an interpreter or as native code from a Cranelift JIT, behind one run
//! API.
//!
//! ```text
//! text ──parse──▶ Term ──check──▶ CheckedSpec ──compile──▶ Program ──▶ Engine::{Interp, Jit, Auto} ──▶ Outcome
//! ```
//!
//! A [`Spec`] is a spec compiled for one event [`Kind`] (`table`, `call`,
//! `send`, `receive`) and put on an [`Engine`]; [`Run`] runs it on one
//! input or on a [`Batch`] of terms, handing over every outcome or only
//! the matches. The answers are the same on every engine.
//!
//! ```
//! use msc::{Batch, Engine, Heap, Kind, Run, Scratch, Spec, TestHost};
//!
//! let spec = Spec::builder()
//!     .engine(Engine::Jit)
//!     .build("[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]", Kind::Table)?;
//! let mut heap = Heap::new();
//! let rows = msc::parse_terms_into("{apple, 150}. {pear, 20}. {plum, 300}.", &mut heap)?;
//! let mut kept = Vec::new();
//! spec.run_matching(Batch::new(&heap, &rows), &mut Scratch::new(), &mut TestHost::default(), |_, outcome| {
//!     if let Ok(outcome) = outcome && let Some(result) = outcome.result() {
//!         kept.push(result.to_string());
//!     }
//! });
//! assert_eq!(kept, ["apple", "plum"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Trace specs (`call`, `send`, `receive`) read and change the traced
//! process through a [`Host`]; [`TestHost`] answers as the process calling
//! `erlang:match_spec_test/3` would.
//!
//! # Features
//!
//! * `jit` (default): native code from Cranelift. Without it every engine
//!   is the interpreter and nothing pulls in Cranelift.
//!
//! The crates behind the facade are re-exported for what it does not
//! cover: [`matchspec`] (terms, syntaxes, the checker, the IR, the
//! interpreter, conformance) and, with `jit`, [`matchspec_jit`].

mod engine;
mod spec;
pub mod stream;
pub mod table;

pub use engine::{AUTO_THRESHOLD, Engine, UnknownEngine};
pub use spec::{Builder, Spec};

pub use matchspec;
pub use matchspec::etf;
pub use matchspec::run::{Batch, Report};
pub use matchspec::spec::Kind;
pub use matchspec::syntax::{ParseError, parse_term, parse_terms_into};
pub use matchspec::term::{Heap, Term, TermRef, Word};
pub use matchspec::{
    Change, CompileError, CompiledSpec, Config, EvalError, Flags, Host, Matched, Outcome, Release,
    Run, Scratch, TestHost,
};
#[cfg(feature = "jit")]
pub use matchspec_jit::{self, JitError};
