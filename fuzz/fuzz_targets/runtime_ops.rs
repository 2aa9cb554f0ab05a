//! See `msc_testkit::runtime_ops::runtime_ops`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::runtime_ops::runtime_ops;

fuzz_target!(|data: &[u8]| -> Corpus {
    if runtime_ops(data) { Corpus::Keep } else { Corpus::Reject }
});
