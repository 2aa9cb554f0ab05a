//! See `msc_fuzz::etf_decode`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if msc_fuzz::etf_decode(data) { Corpus::Keep } else { Corpus::Reject }
});
