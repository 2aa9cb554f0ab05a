//! See `msc_fuzz::etf_roundtrip`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if msc_fuzz::etf_roundtrip(data) { Corpus::Keep } else { Corpus::Reject }
});
