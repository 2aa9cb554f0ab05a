//! Erlang match specifications, done the way ERTS does them, in safe Rust.
//!
//! This crate is the engine-independent core of `msc`: the term model, the
//! text and binary syntaxes for terms, and (in later modules) the match-spec
//! checker, the IR every engine runs and the reference interpreter.
//!
//! # The pipeline
//!
//! ```text
//! text ──syntax──▶ Term ──spec──▶ checked spec ──ir──▶ Program ──▶ interpreter | JIT
//!  ETF ──etf─────▶
//! ```
//!
//! # Terms
//!
//! [`term`] is the representation every stage shares: one tagged 64-bit
//! word per term, boxed data in a flat [`Heap`](term::Heap), the layout the
//! JIT reads with inline machine code.
//!
//! ```
//! use matchspec::term::Term;
//! let t = Term::parse("{order, 17, [{apple, 3}, {pear, 1.5}]}").unwrap();
//! assert_eq!(t.to_string(), "{order,17,[{apple,3},{pear,1.5}]}");
//! ```
//!
//! # Syntax
//!
//! [`syntax`] parses Erlang term text and reports errors with a line,
//! column and caret; [`etf`] reads and writes the external term format
//! byte for byte as OTP 27 does.

#![forbid(unsafe_code)]

pub mod bif;
mod compiled;
mod config;
pub mod conformance;
pub mod etf;
pub mod host;
pub mod interp;
pub mod ir;
mod outcome;
pub mod spec;
pub mod syntax;
pub mod term;

pub use compiled::{CompileError, CompiledSpec};
pub use config::{Config, DEFAULT_BACKTRACE_DEPTH, DEFAULT_MAX_NESTING};
pub use host::{Host, TestHost};
pub use interp::Scratch;
pub use outcome::{EvalError, Flags, Matched, Outcome};
