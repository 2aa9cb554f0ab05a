//! Every term of the shared OTP 27 conformance corpus parses, prints and
//! parses back to the same term.

use matchspec::syntax::{TermStream, parse_term};

/// The shared corpus: 20,000 `{Kind, MatchSpec, Input, Expected}` lines
/// written by OTP 27 with `~tp`.
fn shared_corpus() -> String {
    let path =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/conformance/otp27-random-seed1.terms");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[test]
fn every_corpus_term_round_trips_through_text() {
    let text = shared_corpus();
    let mut count = 0;
    for result in TermStream::new(&text) {
        let (term, span) = result.unwrap_or_else(|e| panic!("{e}"));
        let printed = term.to_string();
        let again = parse_term(&printed).unwrap_or_else(|e| panic!("reparse of {printed}:\n{e}"));
        assert_eq!(term, again, "line at byte {}: printed as {printed}", span.start);
        assert_eq!(again.to_string(), printed, "printing is not stable");
        count += 1;
    }
    assert_eq!(count, 20_000);
}
