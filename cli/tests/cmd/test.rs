//! `msc test`: answers as `erlang:match_spec_test/3` gives them.

use matchspec::term::Term;

use crate::{assert_caret, msc, temp_file, testdata};

const SPEC: &str = "[{{'$1', '$2'}, [{'>', '$2', 1}], ['$1']}]";

#[track_caller]
fn check(args: &[&str], expected: &str) {
    let run = msc(args).ok();
    assert_eq!(run.out(), format!("{expected}.\n"), "msc {args:?}");
    assert_eq!(run.stderr, "", "msc {args:?}");
}

#[test]
fn single_cases() {
    check(&["test", SPEC, "{a, 2}"], "{ok,a,[],[]}");
    check(&["test", SPEC, "{a, 0}"], "{ok,false,[],[]}");
    check(&["test", "--kind", "table", SPEC, "not_a_tuple"], "{ok,false,[],[]}");
    check(
        &["test", "[{'_', [], ['$_']}]", "#{b => 1, a => [x | y]}"],
        "{ok,#{a => [x|y],b => 1},[],[]}",
    );
    check(
        &[
            "test",
            "--kind",
            "call",
            "[{['$1', '_'], [], [{message, '$1'}, {return_trace}]}]",
            "[a, b]",
        ],
        "{ok,a,[return_trace],[]}",
    );
    check(&["test", "--kind", "call", "[{['$1'], [], [true]}]", "[a, b]"], "{ok,false,[],[]}");
    check(
        &["test", "--kind", "send", "[{['_', '$1'], [], [{message, '$1'}]}]", "[self, hi]"],
        "{ok,hi,[],[]}",
    );
}

#[test]
fn spec_and_input_from_files() {
    let spec = temp_file("test_spec_file.ms", format!("%% A spec in a file.\n{SPEC}.\n"));
    let input = temp_file("test_input_file.term", "{b, 10}.");
    check(&["test", &format!("@{spec}"), &format!("@{input}")], "{ok,b,[],[]}");
}

/// An invalid spec is an answer, not a failure: ERTS's error list on
/// standard output (exit code 0), and where each error is on standard error.
#[test]
fn invalid_spec_answers_as_erts() {
    let run = msc(&["test", "--kind", "table", "[{{a,b},[],[{message,1}]}]", "{a,b}"]).ok();
    let expected = r#"{error,[{error,"Special form 'message' used in wrong dialect."}]}"#;
    assert_eq!(run.out(), format!("{expected}.\n"));
    assert_caret(
        &run.stderr,
        "Special form 'message' used in wrong dialect.",
        1,
        13,
        "{message,1}",
    );

    // The answer reads back as the term ERTS gives.
    let term = Term::parse(&run.out()).expect("the answer is a term");
    let answer = term.as_ref().as_tuple().expect("a tuple");
    assert_eq!(
        answer.get(0).and_then(|t| t.as_atom()).map(|a| a.name().to_owned()),
        Some("error".into())
    );
    let errors: Vec<_> = answer.get(1).expect("an error list").list_items().collect();
    assert_eq!(errors.len(), 1);
    let error = errors[0].as_tuple().expect("{error, Message}");
    assert_eq!(
        error.get(0).and_then(|t| t.as_atom()).map(|a| a.name().to_owned()),
        Some("error".into())
    );
    let message: String = error
        .get(1)
        .expect("a message")
        .list_items()
        .map(|c| char::from_u32(c.as_i64().expect("a character") as u32).expect("a char"))
        .collect();
    assert_eq!(message, "Special form 'message' used in wrong dialect.");
}

#[test]
fn every_error_in_erts_order() {
    let run = msc(&["test", "[{'_', [{foo, 1}], [{message, x}]}]", "a"]).ok();
    assert_eq!(
        run.out(),
        "{error,[{error,\"Function foo/1 does_not_exist.\"},\
         {error,\"Special form 'message' used in wrong dialect.\"}]}.\n"
    );
    assert_caret(&run.stderr, "Function foo/1 does_not_exist.", 1, 9, "{foo, 1}");
    assert_caret(&run.stderr, "Special form 'message'", 1, 21, "{message, x}");
}

#[test]
fn display_goes_to_stderr() {
    let run = msc(&["test", "--kind", "call", "[{'_', [], [{display, hello}]}]", "[]"]).ok();
    assert_eq!(run.out(), "{ok,true,[],[]}.\n");
    assert_eq!(run.stderr, "display: hello\n");
}

#[test]
fn parse_errors_point_at_the_column() {
    let run = msc(&["test", "[{'$1', [], ['$1']]", "a"]).code(1);
    assert!(run.stderr.starts_with("<argument>:\n"), "{}", run.stderr);
    assert_caret(&run.stderr, "unexpected `]`", 1, 19, "]");
    let run = msc(&["test", SPEC, "{a, [1, 2}, 3}"]).code(1);
    assert_caret(&run.stderr, "unexpected `}`", 1, 10, "}");
}

#[test]
fn batch_prints_one_answer_per_case() {
    let cases = testdata("cli/cases.terms");
    let run = msc(&["test", "--batch", &cases]).ok();
    assert_eq!(
        run.out(),
        "{ok,a,[],[]}.\n\
         {ok,false,[],[]}.\n\
         {error,[{error,\"Special form 'message' used in wrong dialect.\"}]}.\n\
         {ok,hello,[return_trace],[]}.\n"
    );
    assert_eq!(run.stderr, "");
    let answers = matchspec::syntax::parse_terms(&run.out()).expect("the answers are terms");
    assert_eq!(answers.len(), 4);

    let run = msc(&["test", "--batch", &cases, "--check"]).ok();
    assert_eq!(run.stderr, "4 passed, 0 failed\n");
}

#[test]
fn batch_check_reports_disagreements() {
    let cases = temp_file(
        "test_batch_disagree.terms",
        "{table, [{'$1', [], ['$1']}], a, {ok, a, [], []}}.\n\
         {table, [{'$1', [], ['$1']}], b, {ok, a, [], []}}.\n\
         {table, [{'$1', [], ['$1']}], c}.\n",
    );
    let run = msc(&["test", "--batch", &cases, "--check"]).code(1);
    assert_eq!(run.out(), "{ok,a,[],[]}.\n{ok,b,[],[]}.\n{ok,c,[],[]}.\n");
    assert!(
        run.stderr.contains(":2:1: case 2: expected {ok,a,[],[]}\n  got {ok,b,[],[]}"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("2 passed, 1 failed"), "{}", run.stderr);
    assert!(run.stderr.contains("msc: 1 of 3 cases disagree"), "{}", run.stderr);
}

/// The shared OTP 27 corpus, through the command line: one answer per case,
/// every one agreeing with what OTP 27.3.4 returned.
#[test]
fn batch_agrees_with_otp_on_the_shared_corpus() {
    let corpus =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/conformance/otp27-random-seed1.terms");
    let run = msc(&["--otp", "27", "test", "--batch", corpus, "--check"]).ok();
    assert_eq!(run.out().lines().count(), 20_000);
    assert!(run.stderr.contains("20000 passed, 0 failed"), "{}", run.stderr);
}

/// Every engine gives the same answers, line for line.
#[test]
fn engines_agree_on_a_batch() {
    let cases = testdata("cli/cases.terms");
    let interp = msc(&["test", "--batch", &cases]).ok();
    for engine in ["jit", "auto"] {
        let other = msc(&["test", "--batch", &cases, "--engine", engine]).ok();
        assert_eq!(other.out(), interp.out(), "--engine {engine}");
    }
}

/// `--otp` picks the release whose answers are given (the newest by
/// default): OTP 29's corpus through the command line, and the cases that
/// show each release.
#[test]
fn otp_picks_the_release() {
    let prefix = "[{['$1' | '_'], [], [{message, '$1'}]}]";
    check(&["test", "--otp", "29", "--kind", "call", prefix, "[a, b, c]"], "{ok,a,[],[]}");
    check(&["test", "--kind", "call", prefix, "[a, b, c]"], "{ok,a,[],[]}");
    let run = msc(&["test", "--otp", "27", "--kind", "call", prefix, "[a, b, c]"]).ok();
    assert!(run.out().starts_with("{error,[{error,\"Match expression part"), "{}", run.out());
    check(
        &["--otp", "OTP 29", "test", "[{'_', [], [{is_integer, 5, 1, 9}]}]", "a"],
        "{ok,true,[],[]}",
    );

    let corpus = testdata("otp/otp29/errors.terms");
    let run = msc(&["test", "--otp", "29", "--batch", &corpus, "--check"]).ok();
    assert!(run.stderr.contains("2537 passed, 0 failed"), "{}", run.stderr);

    let run = msc(&["test", "--otp", "28", SPEC, "{a, 2}"]).code(2);
    assert!(run.stderr.contains("unknown OTP release \"28\" (known: 27, 29)"), "{}", run.stderr);
}

/// `--otp` also picks the Erlang syntax every input is read with: OTP 29
/// reads based floats and refuses a number run into a name, in specs,
/// funs and input files alike.
#[test]
fn otp_picks_the_syntax() {
    check(&["--otp", "29", "test", "[{'_', [], [16#1.8]}]", "a"], "{ok,1.5,[],[]}");
    check(&["test", "[{'_', [], [16#1.8]}]", "a"], "{ok,1.5,[],[]}");
    let run = msc(&["--otp", "27", "test", "[{'_', [], [16#1.8]}]", "a"]).code(1);
    assert!(run.stderr.contains("error"), "{}", run.stderr);

    let run = msc(&["--otp", "29", "fun2ms", "fun(X) -> 2#1.1#e2 end"]).ok();
    assert_eq!(run.out(), "[{'$1',[],[6.0]}].\n");
    let run = msc(&["--otp", "27", "fun2ms", "fun(X) -> 4div 2 end"]).ok();
    assert_eq!(run.out(), "[{'$1',[],[2]}].\n");
    let run = msc(&["--otp", "29", "fun2ms", "fun(X) -> 4div 2 end"]).code(1);
    assert!(run.stderr.contains("illegal integer"), "{}", run.stderr);

    let spec = temp_file("syntax.spec", "[{{'$1', '$2'}, [], ['$1']}].");
    let input = temp_file("syntax.terms", "{16#1.8, 2}.\n{1.5, 3}.\n");
    let run = msc(&["--otp", "29", "run", "--spec", &spec, "--input", &input]).ok();
    assert_eq!(run.out(), "1.5.\n1.5.\n");
    msc(&["--otp", "27", "run", "--spec", &spec, "--input", &input]).code(1);
}
