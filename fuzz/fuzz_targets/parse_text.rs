//! See `msc_fuzz::parse_text`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if msc_fuzz::parse_text(data) { Corpus::Keep } else { Corpus::Reject }
});
