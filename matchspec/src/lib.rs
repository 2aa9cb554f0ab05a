//! Erlang match specifications, done the way ERTS does them, in safe Rust.
//!
//! This crate is the engine-independent core of msc: the term model, the
//! text and binary syntaxes for terms, the match-spec checker, the IR every
//! engine runs and the reference interpreter. Everything agrees with OTP
//! 27.3: the same answers, the same error messages in the same order.
//!
//! # Contents
//!
//! 1. [The pipeline](#the-pipeline)
//! 2. [Compiling and running](#compiling-and-running)
//! 3. [Errors](#errors)
//! 4. [Trace specs and the host](#trace-specs-and-the-host)
//! 5. [Terms](#terms)
//! 6. [Limits](#limits)
//!
//! # The pipeline
//!
//! ```text
//! text ──syntax──▶ Term ──spec──▶ CheckedSpec ──ir──▶ Program ──▶ interp | JIT ──▶ Outcome
//!  ETF ──etf─────▶
//! ```
//!
//! [`syntax`] and [`etf`] make [`term::Term`]s; [`spec`] checks a term as a
//! spec for one [`spec::Kind`] of event; [`ir`] compiles the checked spec to
//! a [`ir::Program`]; [`interp`] runs it. [`CompiledSpec`] does all of it.
//!
//! # Compiling and running
//!
//! A [`CompiledSpec`] is immutable, `Send + Sync` and cheap to clone; each
//! thread runs it with its own [`Scratch`], which keeps the registers and
//! the heap for built terms from one run to the next. [`Run`] is the run
//! API every engine implements (one input, or a batch of one heap's
//! terms); for a spec this crate runs it with the interpreter, and the
//! `msc` facade on the engine of your choice.
//!
//! ```
//! use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost, spec::Kind, term::Term};
//!
//! let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default())?;
//! let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
//! let row = Term::parse("{42, ok}")?;
//! assert_eq!(spec.run(row.as_ref(), &mut scratch, &mut host)?.result().unwrap().to_string(), "42");
//! let row = Term::parse("{42, error}")?;
//! assert_eq!(spec.run(row.as_ref(), &mut scratch, &mut host)?, Outcome::NoMatch);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Outcome`] tells "no clause matched" from "matched and returned false".
//! A guard that raises fails its clause and a body function that raises
//! gives `'EXIT'`, as in ERTS; [`EvalError`] is only for runs that cannot
//! happen at all (a trace spec given something that is not an argument
//! list).
//!
//! # Errors
//!
//! [`CompileError`] is either a [`syntax::ParseError`] (line, column,
//! caret) or [`spec::SpecErrors`]: ERTS's `{error, "..."}` list, word for
//! word, each entry also knowing its path in the spec and its place in the
//! text.
//!
//! ```
//! use matchspec::{CompiledSpec, Config, spec::Kind};
//!
//! let err = CompiledSpec::compile("[{'_', [], [{message, 1}]}]", Kind::Table, &Config::default())
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("error: Special form 'message' used in wrong dialect."));
//! ```
//!
//! [`conformance::match_spec_test`] answers exactly as
//! `erlang:match_spec_test/3` does; the test corpora run through it.
//!
//! # Trace specs and the host
//!
//! Trace specs (`call`, `send`, `receive`) read and change the traced
//! process. An engine asks a [`Host`] at the point of the call;
//! [`TestHost`] models the process that calls `match_spec_test`, and
//! [`host::Recording`] returns the effects a run asked for.
//!
//! # Terms
//!
//! [`term`](mod@term) is the representation every stage shares: one tagged 64-bit
//! word per term, boxed data in a flat [`Heap`](term::Heap), the layout the
//! JIT reads with inline machine code.
//!
//! ```
//! use matchspec::term;
//! let t = term!({order, 17, [{apple, 3}, {pear, 1.5}]});
//! assert_eq!(t.to_string(), "{order,17,[{apple,3},{pear,1.5}]}");
//! ```
//!
//! # Limits
//!
//! [`Config`] holds them: how deeply guards and bodies may nest before
//! ERTS's `system_limit` (by default exactly where the default release,
//! OTP 29, stops), the
//! backtrace depth, whether destructive trace functions are faked. No input
//! overflows the stack: heads, constants and input terms of any depth are
//! handled with explicit stacks.

#![forbid(unsafe_code)]

pub mod bif;
mod compiled;
mod config;
pub mod conformance;
#[doc(hidden)]
pub mod encoded;
pub mod engine_internals;
pub mod etf;
pub mod fun2ms;
pub mod host;
pub mod interp;
pub mod ir;
mod number;
mod outcome;
pub mod release;
pub mod run;
mod scratch;
pub mod spec;
pub mod syntax;
pub mod term;
pub mod wire;

pub use compiled::{CompileError, CompiledSpec};
pub use config::{Config, DEFAULT_BACKTRACE_DEPTH, DEFAULT_MAX_NESTING, max_nesting_of};
pub use host::{Host, TestHost};
pub use outcome::{EvalError, Flags, Matched, Outcome};
pub use release::{Change, Release};
pub use run::Run;
pub use scratch::Scratch;
