//! See `msc_testkit::differential::differential`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::differential::differential;

fuzz_target!(|data: &[u8]| -> Corpus {
    if differential(data) { Corpus::Keep } else { Corpus::Reject }
});
