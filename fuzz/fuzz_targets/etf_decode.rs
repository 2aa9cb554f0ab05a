//! See `msc_testkit::oracles::etf_decode`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::etf_decode;

fuzz_target!(|data: &[u8]| -> Corpus {
    if etf_decode(data) { Corpus::Keep } else { Corpus::Reject }
});
