//! See `msc_testkit::oracles::compile`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::compile;

fuzz_target!(|data: &[u8]| -> Corpus { if compile(data) { Corpus::Keep } else { Corpus::Reject } });
