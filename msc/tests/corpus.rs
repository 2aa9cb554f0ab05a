//! The conformance corpora, run on every engine for every release: every
//! answer must agree with that release's, computed as
//! `erlang:match_spec_test/3` would.

use matchspec::conformance::{Case, agrees, match_spec_test_with, test_config};
use matchspec::syntax::TermStream;
use msc::{Engine, JitError, Release, Spec, TestHost};

/// The engines a corpus runs on: [`Engine::Auto`] interprets every case
/// (each runs once), so it adds nothing to [`Engine::Interp`].
const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

/// Runs every case of `path` on every engine, with the answers of
/// `release`. The file must hold `count` cases, of which the JIT refuses
/// `too_large` as too large (they then run, and must agree, in the
/// interpreter).
#[track_caller]
fn check_corpus_with(path: &str, count: usize, too_large: usize, release: Release) {
    check_corpus_pending(path, count, too_large, release, &[]);
}

/// [`check_corpus_with`], where the cases numbered `pending` (1-based)
/// are known to disagree, for a reason the caller names: they must all
/// still disagree (so the list shrinks as msc learns), and no other may.
#[track_caller]
fn check_corpus_pending(
    path: &str,
    count: usize,
    too_large: usize,
    release: Release,
    pending: &[usize],
) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    for engine in ENGINES {
        let mut failures = Vec::new();
        let mut disagreeing = Vec::new();
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
                &test_config().release(release),
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
                disagreeing.push(cases);
                if !pending.contains(&cases) {
                    failures.push(format!(
                        "{path} case {cases} (byte {}): {{{}, {}, {}}}\n  expected {expected}\n  got      {got}",
                        span.start, case.kind, case.spec, case.input
                    ));
                }
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
        let now_agreeing: Vec<usize> =
            pending.iter().copied().filter(|n| !disagreeing.contains(n)).collect();
        assert!(
            now_agreeing.is_empty(),
            "{path}: pending cases {now_agreeing:?} agree on {engine} now: take them off the list"
        );
    }
}

#[track_caller]
fn check_corpus(path: &str, count: usize) {
    check_corpus_with(path, count, 0, Release::Otp27);
}

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A file of `testdata/otp/`, for `release`: OTP 27's are at the top,
/// every other release's in `otp<N>/`, made by the same scripts.
fn otp_file(release: Release, name: &str) -> String {
    match release {
        Release::Otp27 => testdata(&format!("otp/{name}")),
        Release::Otp29 => testdata(&format!("otp/otp29/{name}")),
    }
}

/// Tests of a corpus of `testdata/otp/`, one per release, named
/// `corpus::release`: `file, cases, cases too large for the JIT`.
macro_rules! otp_corpus {
    ($($(#[$doc:meta])* $test:ident: $file:literal, $count:expr, $too_large:expr;)*) => {$(
        $(#[$doc])*
        mod $test {
            use super::*;

            #[test]
            fn otp27() {
                check_corpus_with(&otp_file(Release::Otp27, $file), $count, $too_large, Release::Otp27);
            }

            #[test]
            fn otp29() {
                check_corpus_with(&otp_file(Release::Otp29, $file), $count, $too_large, Release::Otp29);
            }
        }
    )*};
}

/// The 20,000 random cases answered by OTP 27.3.4 (`testdata/refresh-shared.sh`).
#[test]
fn otp27_random_seed1() {
    check_corpus(&testdata("conformance/otp27-random-seed1.terms"), 20_000);
}

/// The same cases answered by OTP 29.1.2 (`testdata/conformance/replay.escript`).
///
/// Pending: 22 error texts that print a map whose keys are the atoms `k1`
/// to `k35`, which ERTS does not create at boot: 17 maps of at most 32 keys
/// (printed in the order of the atoms' indices) and 5 of more (in the order
/// of a hash of those indices). The replay read this file line by line, so
/// its node created these atoms in the order they first appear in the file,
/// not in the order of the node that generated the cases (and printed the
/// specs msc reads). The texts depend on that node's atom table, not on the
/// release: `replay.escript` under OTP 27 changes the same 22 texts of
/// OTP 27's file, 17 of them to exactly this file's. msc knows the index of
/// boot atoms only (docs/releases.md), so these stay pending.
#[test]
fn otp29_random_seed1() {
    const REPLAY_ATOM_ORDER: [usize; 22] = [
        143, 259, 396, 3005, 3738, 3909, 4819, 5364, 5530, 6268, 8273, 9061, 9506, 10670, 11361,
        12466, 13003, 17011, 17367, 17829, 19365, 19889,
    ];
    let path = testdata("conformance/otp29-random-seed1.terms");
    check_corpus_pending(&path, 20_000, 0, Release::Otp29, &REPLAY_ATOM_ORDER);
}

// The project's own corpora, generated from each release by `testdata/otp/*.escript`.
otp_corpus! {
    functions_in_every_context: "functions.terms", 14_831, 0;
    every_error_message: "errors.terms", 2_537, 0;
    heads: "heads.terms", 7_556, 0;
    quirks: "quirks.terms", 290, 0;
    send_and_receive_restrictions: "sendrecv.terms", 1_585, 0;
    random_seed_2: "random-seed2.terms", 5_000, 0;
    random_seed_3: "random-seed3.terms", 5_000, 0;
    random_deep_seed_4: "random-deep-seed4.terms", 3_000, 0;
    /// Six heads nested 100,000 deep compile to over 200,000 ops each.
    nesting_limits: "nesting.terms", 60, 6;
    numbers_at_fast_path_edges: "numbers.terms", 12_370, 0;
    /// Bodies, and the order their parts run in: a map of over 32 keys
    /// runs in the order of its keys' ERTS hash, which changed in OTP 29.
    bodies_and_evaluation_order: "bodies.terms", 883, 0;
}

/// Cases OTP 27 crashes on, with answers decided by hand (see
/// `testdata/decided/README.md`).
#[test]
fn cases_that_crash_erts() {
    check_corpus(&testdata("decided/erts-crashes.terms"), 17);
}
