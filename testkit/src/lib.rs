//! What the fuzz targets and the tests share: generators of random inputs,
//! the oracles that judge them, and the replay of saved inputs (not
//! published).
//!
//! Each fuzz target in `fuzz/fuzz_targets/` is one line that hands its
//! input to the function of the same name here; the regression tests in
//! `tests/regression/` replay the inputs that once made a target fail
//! through that same function, so a replay checks exactly what the target
//! checked.
//!
//! - [`oracles`]: the targets over `matchspec` alone (`parse_text`,
//!   `text_roundtrip`, `etf_roundtrip`, `etf_decode`, `compile`) and the
//!   generator of `differential`'s cases;
//! - [`differential`]: the interpreter against the JIT, and both on
//!   bytes against decoding first;
//! - [`encodings`]: the other encodings of a term;
//! - [`runtime_ops`]: random command and event sequences against the trace
//!   core's invariants, over a small world of its own;
//! - [`replay`]: the saved inputs of `testdata/regression/fuzz/`;
//! - [`testdata`]: where the repository's test data is.

#![allow(
    rustdoc::private_intra_doc_links,
    reason = "test support read in the source: its docs link the pools they draw from"
)]

use std::path::PathBuf;

pub mod differential;
pub mod encodings;
pub mod limits;
pub mod oracles;
pub mod replay;
pub mod runtime_ops;
pub mod stream_run;

/// The path of `relative` inside the repository's `testdata/` folder.
pub fn testdata(relative: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata")).join(relative)
}
