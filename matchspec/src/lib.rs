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

pub mod syntax;
pub mod term;
