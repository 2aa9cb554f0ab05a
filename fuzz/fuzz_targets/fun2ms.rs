//! See `msc_testkit::oracles::fun2ms`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::oracles::fun2ms;

fuzz_target!(|data: &[u8]| -> Corpus {
    if fun2ms(data) { Corpus::Keep } else { Corpus::Reject }
});
