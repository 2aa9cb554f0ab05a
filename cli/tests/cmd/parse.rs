//! `msc parse`: canonical terms out, every error reported with a caret.

use crate::{assert_caret, msc, msc_with_stdin, temp_file};

#[test]
fn prints_canonical_terms() {
    let run = msc_with_stdin(&["parse"], b"{a, 'b', \"c\"}.\n[1 | [2]]. #{ k => 1.0e3 }.\n").ok();
    assert_eq!(run.out(), "{a,b,\"c\"}.\n[1,2].\n#{k => 1.0e3}.\n");
}

#[test]
fn reports_every_bad_term() {
    let file = temp_file("parse_bad.terms", "good.\n{bad, .\nalso_good.\n[1, 2.\n");
    let run = msc(&["parse", &file]).code(1);
    assert_eq!(run.out(), "good.\nalso_good.\n");
    assert_caret(&run.stderr, "unexpected end of input; expected a term", 2, 7, ".");
    assert_caret(&run.stderr, "unexpected end of input; expected `,`, `]` or `|`", 4, 6, ".");
    assert!(
        run.stderr.ends_with(&format!("msc: 2 term(s) in {file} did not parse\n")),
        "{}",
        run.stderr
    );
}
