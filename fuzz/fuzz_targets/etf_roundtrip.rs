//! See `msc_testkit::oracles::etf_roundtrip`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::etf_roundtrip;

fuzz_target!(|data: &[u8]| -> Corpus {
    if etf_roundtrip(data) { Corpus::Keep } else { Corpus::Reject }
});
