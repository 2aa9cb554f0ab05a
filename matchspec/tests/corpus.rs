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
        concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/conformance/otp27-random-seed1.terms"),
        20_000,
    );
}

/// The project's own corpora, generated from OTP 27 by `testdata/otp/*.escript`.
fn otp_corpus(name: &str) -> String {
    format!("{}/../testdata/otp/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn functions_in_every_context() {
    check_corpus(&otp_corpus("functions.terms"), 14_831);
}

#[test]
fn every_error_message() {
    check_corpus(&otp_corpus("errors.terms"), 2_537);
}

#[test]
fn heads() {
    check_corpus(&otp_corpus("heads.terms"), 7_556);
}

#[test]
fn bodies_and_evaluation_order() {
    check_corpus(&otp_corpus("bodies.terms"), 883);
}

#[test]
fn quirks() {
    check_corpus(&otp_corpus("quirks.terms"), 290);
}

#[test]
fn send_and_receive_restrictions() {
    check_corpus(&otp_corpus("sendrecv.terms"), 1_585);
}

#[test]
fn random_seed2() {
    check_corpus(&otp_corpus("random-seed2.terms"), 5_000);
}

#[test]
fn random_seed3() {
    check_corpus(&otp_corpus("random-seed3.terms"), 5_000);
}

#[test]
fn random_deep_seed4() {
    check_corpus(&otp_corpus("random-deep-seed4.terms"), 3_000);
}

#[test]
fn nesting_limits() {
    check_corpus(&otp_corpus("nesting.terms"), 60);
}

#[test]
fn numbers_at_fast_path_edges() {
    check_corpus(&otp_corpus("numbers.terms"), 11_470);
}

/// Cases OTP 27 crashes on, with answers decided by hand (see
/// `testdata/decided/README.md`).
#[test]
fn cases_that_crash_erts() {
    check_corpus(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/decided/erts-crashes.terms"),
        17,
    );
}
