//! See `differential` in `src/differential.rs`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_fuzz as oracles;

#[path = "../src/differential.rs"]
mod differential;

fuzz_target!(|data: &[u8]| -> Corpus {
    if differential::differential(data) { Corpus::Keep } else { Corpus::Reject }
});
