//! See `runtime_ops` in `src/runtime_ops.rs`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

#[path = "../src/runtime_ops.rs"]
mod runtime_ops;

fuzz_target!(|data: &[u8]| -> Corpus {
    if runtime_ops::runtime_ops(data) { Corpus::Keep } else { Corpus::Reject }
});
