//! The Cranelift JIT for match-spec programs: the same answers as the
//! interpreter, as machine code.
//!
//! # The pipeline
//!
//! ```text
//! CompiledSpec ──translate──▶ Cranelift IR ──cranelift──▶ machine code ──▶ JitProgram::run ──▶ Outcome
//! ```
//!
//! [`JitProgram::compile`] translates a spec's [`Program`](matchspec::ir::Program)
//! op by op (`translate/`). Hot ops become inline machine code: type tags,
//! tuple arity and element reads, list cells, trace argument lists,
//! immediate and small-integer tests, small-integer arithmetic with
//! overflow checks (division by a constant as a multiplication), comparisons
//! of small integers, lookups of constant immediate keys in small maps,
//! building tuples and lists, jumps; a clause that fails after the tests it
//! shares with the next one goes on past them there. Arithmetic and
//! comparisons on other numbers (floats, bignums of up to 128 bits), and
//! map lookups in guards, call lean helpers that compute what the
//! interpreter's fast paths compute, by the same code (matchspec's number
//! path, on the words they read); a guard's arithmetic whose only use
//! is the comparison after it is computed by that comparison, which
//! decides a float or bignum result without building it. Everything else (larger bignums, term
//! order on compound terms, other map lookups, trace actions) calls one
//! helper that runs the op with the interpreter's own definition
//! ([`Frame::step`](matchspec::engine_internals::Frame::step)), so the two engines
//! cannot disagree on anything but a few machine instructions, and those
//! are checked by the whole conformance corpus and a differential fuzzer.
//!
//! The code runs a whole batch of inputs in one call
//! ([`Run::run_batch`](matchspec::Run::run_batch)): it loops over
//! them itself and buffers the matches it made alone, so Rust hands them
//! to the caller a buffer at a time; an outcome a helper had a hand in
//! returns to Rust at once, so the caller sees each outcome in order and
//! before any effect of a later input on the host.
//!
//! [`JitProgram`] implements [`Run`](matchspec::Run), the run API of
//! every engine, with exactly the interpreter's answers.
//!
//! ```
//! use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost, spec::Kind, term::Term};
//! use matchspec_jit::JitProgram;
//!
//! let spec = CompiledSpec::compile(
//!     "[{{'$1', '$2', ok}, [{'>', '$2', 100}], [{{'$1', {'+', '$2', 1}}}]}]",
//!     Kind::Table,
//!     &Config::default(),
//! )?;
//! let jit = JitProgram::compile(&spec)?;
//! let mut scratch = Scratch::new();
//! let mut host = TestHost::default();
//! let row = Term::parse("{user_7, 150, ok}")?;
//! let outcome = jit.run(row.as_ref(), &mut scratch, &mut host)?;
//! assert_eq!(outcome.result().unwrap().to_string(), "{user_7,151}");
//! let row = Term::parse("{user_8, 50, ok}")?;
//! assert_eq!(jit.run(row.as_ref(), &mut scratch, &mut host)?, Outcome::NoMatch);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Choosing an engine per spec (interpreter, JIT, or `auto`, compiling
//! once a spec is hot) is the `msc` facade's job, not this crate's.
//!
//! # Safety
//!
//! This is the one crate with `unsafe` code. The machine code reads only
//! the run's registers (every register number is checked at compile time)
//! and the input's words (every read is bounds-checked at run time); code
//! memory is never writable and executable at once (Cranelift maps it
//! read+execute after writing it); the function pointer never leaves
//! [`JitProgram`], which frees the code when dropped; a panic in a helper
//! is caught before it reaches machine code and resumed after it.

mod abi;
mod arith;
mod divide;
mod effects;
mod error;
mod fuse;
mod helpers;
mod lean;
mod looping;
mod module;
mod prefix;
mod program;
mod translate;
mod wire;

pub use error::JitError;
pub use program::{JitProgram, Listing, MAX_OPS};
pub use wire::WireCode;
