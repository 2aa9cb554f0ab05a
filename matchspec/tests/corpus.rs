//! The conformance corpora, run against the interpreter: every answer must
//! agree with OTP 27's.

use matchspec::conformance::{Case, agrees, interpreter, match_spec_test};
use matchspec::syntax::TermStream;

fn run_corpus(path: &str) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for result in TermStream::new(&text) {
        let (term, span) = result.unwrap_or_else(|e| panic!("{path}: {e}"));
        let case =
            Case::from_term(term.as_ref()).unwrap_or_else(|| panic!("{path}: not a case: {term}"));
        let got = match_spec_test(case.input, case.spec, case.kind, &mut interpreter());
        count += 1;
        if let Some(expected) = case.expected
            && !agrees(expected, got.as_ref())
        {
            failures.push(format!(
                "{path} byte {}: {{{}, {}, {}}}\n  expected {expected}\n  got      {got}",
                span.start, case.kind, case.spec, case.input
            ));
        }
    }
    (count, failures)
}

#[track_caller]
fn check_corpus(path: &str, expected_count: usize) {
    let (count, failures) = run_corpus(path);
    assert_eq!(count, expected_count, "{path}");
    assert!(
        failures.is_empty(),
        "{} of {count} cases disagree with OTP:\n{}",
        failures.len(),
        failures.iter().take(25).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn shared_otp27_corpus() {
    check_corpus(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/conformance/otp27/random-seed1.terms"),
        20_000,
    );
}
