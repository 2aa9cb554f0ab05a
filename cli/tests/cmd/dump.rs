//! `msc dump`: the program's text form (the goldens are in `ir_golden`).

use crate::{assert_caret, msc, temp_file};

#[test]
fn prints_the_program() {
    let run = msc(&["dump", "[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]"]).ok();
    assert_eq!(
        run.out(),
        "\
table program: 1 clause, 7 registers
  r0 = input, r2 = '$1', r3 = '$2', r4 = true, r5 = 'EXIT', r6 = 100
clause 1:
  0: is_tuple r0, 2 else @5
  1: get_element r2 = r0[0]
  2: get_element r3 = r0[1]
  3: compare r3 > r6 else @5
  4: succeed r2
no match:
  5: no_match
"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn the_kind_comes_from_the_spec_or_the_flag() {
    let spec = "[{['$1'], [], [{message, '$1'}]}]";
    let first_line = |args: &[&str]| msc(args).ok().out().lines().next().map(str::to_owned);
    assert_eq!(
        first_line(&["dump", &format!("{{call, {spec}}}")]).as_deref(),
        Some("call program: 1 clause, 7 registers")
    );
    assert_eq!(
        first_line(&["dump", "--kind", "send", &format!("{{call, {spec}}}")]).as_deref(),
        Some("send program: 1 clause, 7 registers")
    );
    assert_eq!(
        first_line(&["dump", "--kind", "trace", spec]).as_deref(),
        Some("call program: 1 clause, 7 registers")
    );
    let run = msc(&["dump", spec]).code(1);
    assert_caret(
        &run.stderr,
        "Special form 'message' used in wrong dialect.",
        1,
        16,
        "{message, '$1'}",
    );
}

/// A spec inside `{Kind, Spec}` over several lines: errors point at their
/// line and column in the file, not in the spec alone.
#[test]
fn errors_point_into_the_file() {
    let file = temp_file(
        "dump_errors.ms",
        "%% A table spec with a trace action.\n{table,\n  [{'_', [], [{message, 1}]}]}.\n",
    );
    let run = msc(&["dump", &format!("@{file}")]).code(1);
    assert_caret(
        &run.stderr,
        "Special form 'message' used in wrong dialect.",
        3,
        15,
        "{message, 1}",
    );
    assert_eq!(run.out(), "");
}

/// `--clif` shows the Cranelift IR and `--asm` the machine code of the JIT.
#[test]
fn shows_what_the_jit_makes() {
    let spec = "[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]";
    let clif = msc(&["dump", "--clif", spec]).ok().out();
    assert!(clif.starts_with("function "), "{clif}");
    assert!(clif.contains("icmp"), "{clif}");
    let asm = msc(&["dump", "--asm", spec]).ok().out();
    assert!(asm.contains("ret"), "{asm}");
    msc(&["dump", "--clif", "--asm", spec]).code(2);
}
