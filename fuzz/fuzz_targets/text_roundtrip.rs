//! See `msc_testkit::oracles::text_roundtrip`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::text_roundtrip;

fuzz_target!(|data: &[u8]| -> Corpus {
    if text_roundtrip(data) { Corpus::Keep } else { Corpus::Reject }
});
