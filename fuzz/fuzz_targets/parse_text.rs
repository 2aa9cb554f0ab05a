//! See `msc_testkit::oracles::parse_text`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::parse_text;

fuzz_target!(|data: &[u8]| -> Corpus {
    if parse_text(data) { Corpus::Keep } else { Corpus::Reject }
});
