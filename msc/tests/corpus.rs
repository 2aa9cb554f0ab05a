//! The conformance corpora, run on every engine: every answer must agree
//! with OTP 27's, computed as `erlang:match_spec_test/3` would.

use matchspec::conformance::{Case, agrees, match_spec_test_with, test_config};
use matchspec::syntax::TermStream;
use msc::{Engine, JitError, Spec, TestHost};

/// The engines a corpus runs on: [`Engine::Auto`] interprets every case
/// (each runs once), so it adds nothing to [`Engine::Interp`].
const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

/// Runs every case of `path` on every engine. The file must hold `count`
/// cases, of which the JIT refuses `too_large` as too large (they then
/// run, and must agree, in the interpreter).
#[track_caller]
fn check_corpus_with(path: &str, count: usize, too_large: usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    for engine in ENGINES {
        let mut failures = Vec::new();
        let (mut cases, mut refused) = (0, 0);
        for result in TermStream::new(&text) {
            let (term, span) = result.unwrap_or_else(|e| panic!("{path}: {e}"));
            let case = Case::from_term(term.as_ref())
                .unwrap_or_else(|| panic!("{path}: not a case: {term}"));
            let mut jit_error = None;
            let got = match_spec_test_with(
                case.input,
                case.spec,
                case.kind,
                &test_config(),
                &mut TestHost::default(),
                |compiled| {
                    let spec = Spec::new(compiled, engine);
                    jit_error = spec.jit_error().cloned();
                    spec
                },
            );
            cases += 1;
            match jit_error {
                Some(JitError::TooLarge { .. }) => refused += 1,
                Some(err) => {
                    failures.push(format!("{path} byte {}: not compiled: {err}", span.start))
                }
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
        assert_eq!(cases, count, "{path}: cases");
        let expected_refused = if engine == Engine::Jit { too_large } else { 0 };
        assert_eq!(refused, expected_refused, "{path}: cases too large for the JIT");
        assert!(
            failures.is_empty(),
            "{} of {cases} cases fail on {engine}:\n{}",
            failures.len(),
            failures.iter().take(25).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

#[track_caller]
fn check_corpus(path: &str, count: usize) {
    check_corpus_with(path, count, 0);
}

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The 20,000 random cases answered by OTP 27.3.4 (`testdata/refresh-shared.sh`).
#[test]
fn otp27_random_seed1() {
    check_corpus(&testdata("conformance/otp27-random-seed1.terms"), 20_000);
}

// The project's own corpora, generated from OTP 27 by `testdata/otp/*.escript`.

#[test]
fn functions_in_every_context() {
    check_corpus(&testdata("otp/functions.terms"), 14_831);
}

#[test]
fn every_error_message() {
    check_corpus(&testdata("otp/errors.terms"), 2_537);
}

#[test]
fn heads() {
    check_corpus(&testdata("otp/heads.terms"), 7_556);
}

#[test]
fn bodies_and_evaluation_order() {
    check_corpus(&testdata("otp/bodies.terms"), 883);
}

#[test]
fn quirks() {
    check_corpus(&testdata("otp/quirks.terms"), 290);
}

#[test]
fn send_and_receive_restrictions() {
    check_corpus(&testdata("otp/sendrecv.terms"), 1_585);
}

#[test]
fn random_seeds_2_and_3() {
    check_corpus(&testdata("otp/random-seed2.terms"), 5_000);
    check_corpus(&testdata("otp/random-seed3.terms"), 5_000);
}

#[test]
fn random_deep_seed_4() {
    check_corpus(&testdata("otp/random-deep-seed4.terms"), 3_000);
}

#[test]
fn nesting_limits() {
    // Six heads nested 100,000 deep compile to over 200,000 ops each.
    check_corpus_with(&testdata("otp/nesting.terms"), 60, 6);
}

#[test]
fn numbers_at_fast_path_edges() {
    check_corpus(&testdata("otp/numbers.terms"), 12_370);
}

/// Cases OTP 27 crashes on, with answers decided by hand (see
/// `testdata/decided/README.md`).
#[test]
fn cases_that_crash_erts() {
    check_corpus(&testdata("decided/erts-crashes.terms"), 17);
}
