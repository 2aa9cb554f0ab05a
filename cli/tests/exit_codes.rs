//! Exit codes: 0 for success, 1 for a user error with a readable message,
//! 2 for bad usage (clap's code and message).

use crate::{msc, temp_file};

const SPEC: &str = "[{{'$1', '$2'}, [{'>', '$2', 1}], ['$1']}]";

#[test]
fn success_is_zero() {
    let run = msc(&["test", SPEC, "{a, 2}"]).ok();
    assert_eq!(run.out(), "{ok,a,[],[]}.\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn user_errors_are_one_with_a_readable_message() {
    let unknown_kind = temp_file("exit_unknown_kind.ms", "{tabel, [{'_', [], [true]}]}.");
    let not_a_case = temp_file("exit_not_a_case.terms", "{table, [], {a}}.\nfoo.\n");
    let input = temp_file("exit_input.terms", "a.\n");
    let cases: &[(&[&str], &str)] = &[
        (&["parse", "/nonexistent/msc-input"], "msc: /nonexistent/msc-input: No such file"),
        (&["dump", "[{'_', [], [true]}"], "<argument>:\nerror: unexpected end of input"),
        (&["dump", "[{'_', [], [{message, 1}]}]"], "error: Special form 'message' used in wrong"),
        (&["test", "@/nonexistent/spec", "a"], "msc: /nonexistent/spec: No such file"),
        (&["dump", &format!("@{unknown_kind}")], "unknown kind `tabel` in {Kind, Spec}"),
        (&["run", "--spec", "-", "--input", "-"], "msc: --spec and --input cannot both read"),
        (&["run", "--spec", &unknown_kind, "--input", &input], "unknown kind `tabel`"),
        (&["test", "--batch", &not_a_case], "2:1: not a {Kind, Spec, Input} case: foo"),
        (&["etf", "decode", &input], "msc: "),
        (&["parse", &temp_file("exit_bad.terms", "a.\n{b.\nc.\n")], "1 term(s)"),
    ];
    for (args, needle) in cases {
        let run = msc(args).code(1);
        assert!(
            run.stderr.contains(needle),
            "msc {args:?}: no `{needle}` in the message:\n{}",
            run.stderr
        );
        assert!(!run.stderr.contains("Error {"), "msc {args:?}: a Debug message:\n{}", run.stderr);
    }
}

#[test]
fn usage_errors_are_two() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "Usage: msc [OPTIONS] <COMMAND>"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (&["test", "--kind", "tabel", SPEC, "a"], "invalid value 'tabel' for '--kind <KIND>'"),
        (&["test", "--engine", "fast", SPEC, "a"], "invalid value 'fast' for '--engine"),
        (&["test", SPEC], "required arguments were not provided"),
        (&["test", "--batch", "f", SPEC, "a"], "cannot be used with"),
        (&["test", "--check", SPEC, "a"], "'--check' cannot be used with"),
        (&["test", "--check"], "--batch <FILE>"),
        (&["run", "--spec", "s.ms"], "--input <FILE>"),
        (&["bench", "--spec", "s.ms", "--input", "i", "--rounds", "many"], "invalid value"),
    ];
    for (args, needle) in cases {
        let run = msc(args).code(2);
        assert!(run.stderr.contains(needle), "msc {args:?}: no `{needle}` in\n{}", run.stderr);
    }
}

#[test]
fn kind_names_trace_and_call_alike() {
    let spec = "[{['$1'], [], [{message, '$1'}]}]";
    let call = msc(&["test", "--kind", "call", spec, "[x]"]).ok();
    let trace = msc(&["test", "--kind", "trace", spec, "[x]"]).ok();
    assert_eq!(call.out(), "{ok,x,[],[]}.\n");
    assert_eq!(trace.out(), call.out());
}
