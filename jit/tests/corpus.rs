//! The conformance corpora, run on the JIT: every answer must agree with
//! OTP 27's, as the interpreter's do (`matchspec/tests/corpus.rs` runs the
//! same files on the interpreter).

use matchspec::conformance::{Case, agrees, match_spec_test};
use matchspec::syntax::TermStream;
use matchspec_jit::{Engine, EngineRunner, JitError};

/// Runs every case of `path` on `engine`; `too_large` cases are expected
/// to be refused by the JIT as too large (they then run, and must agree,
/// in the interpreter).
#[track_caller]
fn check_corpus_with(path: &str, engine: Engine, too_large: usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut runner = EngineRunner::new(engine);
    let mut failures = Vec::new();
    let mut count = 0;
    let mut not_compiled = 0;
    for result in TermStream::new(&text) {
        let (term, span) = result.unwrap_or_else(|e| panic!("{path}: {e}"));
        let case =
            Case::from_term(term.as_ref()).unwrap_or_else(|| panic!("{path}: not a case: {term}"));
        let got = match_spec_test(case.input, case.spec, case.kind, &mut runner);
        count += 1;
        match runner.last_jit_error() {
            Some(JitError::TooLarge { .. }) => not_compiled += 1,
            Some(err) => failures.push(format!("{path} byte {}: not compiled: {err}", span.start)),
            None => {}
        }
        if let Some(expected) = case.expected
            && !agrees(expected, got.as_ref())
        {
            failures.push(format!(
                "{path} byte {}: {{{}, {}, {}}}\n  expected {expected}\n  got      {got}",
                span.start, case.kind, case.spec, case.input
            ));
        }
    }
    assert!(count > 0, "{path} is empty");
    assert_eq!(not_compiled, too_large, "{path}: cases too large for the JIT");
    assert!(
        failures.is_empty(),
        "{} of {count} cases fail on {}:\n{}",
        failures.len(),
        engine.name(),
        failures.iter().take(25).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[track_caller]
fn check_corpus(path: &str, engine: Engine) {
    check_corpus_with(path, engine, 0);
}

fn shared(name: &str) -> String {
    format!("{}/../testdata/conformance/otp27-{name}", env!("CARGO_MANIFEST_DIR"))
}

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shared_otp27_corpus() {
    check_corpus(&shared("random-seed1.terms"), Engine::Jit);
}

#[test]
fn functions_in_every_context() {
    check_corpus(&testdata("otp/functions.terms"), Engine::Jit);
}

#[test]
fn every_error_message() {
    check_corpus(&testdata("otp/errors.terms"), Engine::Jit);
}

#[test]
fn heads() {
    check_corpus(&testdata("otp/heads.terms"), Engine::Jit);
}

#[test]
fn bodies_and_evaluation_order() {
    check_corpus(&testdata("otp/bodies.terms"), Engine::Jit);
}

#[test]
fn quirks() {
    check_corpus(&testdata("otp/quirks.terms"), Engine::Jit);
}

#[test]
fn send_and_receive_restrictions() {
    check_corpus(&testdata("otp/sendrecv.terms"), Engine::Jit);
}

#[test]
fn random_seeds_2_and_3() {
    check_corpus(&testdata("otp/random-seed2.terms"), Engine::Jit);
    check_corpus(&testdata("otp/random-seed3.terms"), Engine::Jit);
}

#[test]
fn random_deep_seed_4() {
    check_corpus(&testdata("otp/random-deep-seed4.terms"), Engine::Jit);
}

#[test]
fn nesting_limits() {
    // Six heads nested 100,000 deep compile to over 200,000 ops each.
    check_corpus_with(&testdata("otp/nesting.terms"), Engine::Jit, 6);
}

#[test]
fn numbers_at_fast_path_edges() {
    check_corpus(&testdata("otp/numbers.terms"), Engine::Jit);
}

#[test]
fn cases_that_crash_erts() {
    check_corpus(&testdata("decided/erts-crashes.terms"), Engine::Jit);
}
