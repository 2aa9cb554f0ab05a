//! See `msc_fuzz::compile`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    if msc_fuzz::compile(data) { Corpus::Keep } else { Corpus::Reject }
});
