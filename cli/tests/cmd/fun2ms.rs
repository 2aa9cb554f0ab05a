//! `msc fun2ms`, funs where specs go, and `msc dump --fun`.

use crate::{msc, temp_file, testdata};

#[test]
fn translates_a_fun_and_checks_it_for_the_kind() {
    let run = msc(&["fun2ms", "fun({K, V}) when V > 100 -> {K, V * 2} end"]).ok();
    assert_eq!(run.out(), "[{{'$1','$2'},[{'>','$2',100}],[{{'$1',{'*','$2',2}}}]}].\n");
    let run = msc(&[
        "fun2ms",
        "--kind",
        "call",
        "--bind",
        "Tag={x, 1}",
        "fun([A]) -> message({Tag, A}) end",
    ])
    .ok();
    assert_eq!(run.out(), "[{['$1'],[],[{message,{{{const,{x,1}},'$1'}}}]}].\n");
    // ms_transform's error, with a caret under the offending text.
    let run = msc(&["fun2ms", "fun({A}) -> A = 1 end"]).code(1);
    assert!(
        run.stderr.starts_with(
            "error: fun with body matching ('=' in body) is illegal as match_spec\n --> 1:13\n"
        ),
        "{}",
        run.stderr
    );
    // ERTS's error in the translated spec points into the fun.
    let run = msc(&["fun2ms", "fun({A}) ->\n  return_trace() end"]).code(1);
    assert!(run.stderr.contains("--> 2:3"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Special form 'return_trace' used in wrong dialect."),
        "{}",
        run.stderr
    );
    // Records: ms_transform's text, and why msc cannot do better.
    let run = msc(&["fun2ms", "fun(#r{a = A}) -> A end"]).code(1);
    assert!(run.stderr.contains("fun head contains unknown record type r"), "{}", run.stderr);
    assert!(run.stderr.contains("msc reads no record definitions"), "{}", run.stderr);
    msc(&["fun2ms", "--bind", "lower=1", "fun(X) -> X end"]).code(1);
}

#[test]
fn a_batch_prints_a_line_per_case_and_checks_expected_answers() {
    let cases = temp_file(
        "fun2ms-batch.terms",
        "{table, \"fun({A, B}) -> {B, A} end\"}.\n\
         {trace, \"fun([X]) -> Y end\", [{'Y', 7}]}.\n\
         {table, \"fun({A}) -> foo(A) end\", {error, \"fun containing the local function call 'foo/1' (called in body) cannot be translated into match_spec\"}}.\n",
    );
    let run = msc(&["fun2ms", "--batch", &cases]).ok();
    assert_eq!(
        run.out(),
        "{ok,[{{'$1','$2'},[],[{{'$2','$1'}}]}]}.\n\
         {ok,[{['$1'],[],[{const,7}]}]}.\n\
         {error,\"fun containing the local function call 'foo/1' (called in body) cannot be translated into match_spec\"}.\n"
    );
    // The OTP corpus agrees, run through the command line.
    msc(&["fun2ms", "--batch", &testdata("otp/fun2ms/suite.cases")]).ok();
    let wrong = temp_file("fun2ms-wrong.terms", "{table, \"fun(X) -> X end\", {ok, [x]}}.\n");
    let run = msc(&["fun2ms", "--batch", &wrong]).code(1);
    assert!(run.stderr.contains("1 of 1 cases disagree"), "{}", run.stderr);
}

#[test]
fn a_fun_goes_where_a_spec_goes() {
    let run = msc(&["test", "fun({K, V}) when V > 1 -> K end", "{a, 2}"]).ok();
    assert_eq!(run.out(), "{ok,a,[],[]}.\n");
    let spec = temp_file(
        "fun2ms-filter.ms",
        "% a fun in a spec file\nfun({K, V}) when V > 100 -> K end.\n",
    );
    let input = temp_file("fun2ms-input.terms", "{a, 5}.\n{b, 200}.\n");
    let run = msc(&["run", "--spec", &spec, "--input", &input, "--quiet"]).ok();
    assert_eq!(run.out(), "b.\n");
    let run = msc(&["dump", "fun({K, V}) -> K end"]).ok();
    assert!(run.out().starts_with("table program"), "{}", run.out());
}

#[test]
fn dump_fun_prints_the_fun_of_a_spec() {
    let run = msc(&["dump", "--fun", "[{{'$1','$2'},[{'>','$2',{const,{a,b}}}],['$1']}]"]).ok();
    assert_eq!(run.out(), "% Const1 = {a,b}\nfun({A, B}) when B > Const1 -> A end\n");
    let run = msc(&["dump", "--fun", "[{{'$2','$1'},[],['$1']}]"]).code(1);
    assert!(run.stderr.contains("numbers head variables in order of appearance"), "{}", run.stderr);
}
