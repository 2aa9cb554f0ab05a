//! See `msc_testkit::stream_run::stream_run`.

#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};
use msc_testkit::stream_run::stream_run;

fuzz_target!(|data: &[u8]| -> Corpus {
    if stream_run(data) { Corpus::Keep } else { Corpus::Reject }
});
