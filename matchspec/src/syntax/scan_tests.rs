//! Numbers against `erl_scan`: every case of `testdata/syntax/otpNN.cases`
//! (written by `testdata/syntax/gen.escript` running in OTP NN) lexed by
//! msc in that release's syntax.

use super::lexer::{Tokens, ends_form};
use super::scan::scan_number;
use super::token::{IntLit, Token};
use super::*;

/// msc's tokens of `text` in erl_scan's notation (see gen.escript), or
/// `Err` at the first error.
fn lex(text: &str, syntax: Syntax) -> Result<Vec<String>, ParseErrorKind> {
    let mut tokens = Tokens::new(text, syntax);
    let mut out = Vec::new();
    while let Some(token) = tokens.next() {
        let span = tokens.span();
        out.push(match token {
            Ok(Token::Int(IntLit::Small(v))) => format!("integer {v}"),
            Ok(Token::Int(IntLit::Big(v))) => format!("integer {v}"),
            Ok(Token::Float(f)) => format!("float 16#{:016X}", f.to_bits()),
            Ok(Token::Atom(a)) => format!("atom {}", a.name()),
            Ok(Token::Var(v)) => format!("var {v}"),
            Ok(Token::Reserved(w)) => w.to_owned(),
            Ok(Token::Dot) if ends_form(&text[span.end..]) => "dot".to_owned(),
            Ok(Token::Dot) => ".".to_owned(),
            Ok(Token::Hash) => "#".to_owned(),
            Ok(Token::Comma) => ",".to_owned(),
            Ok(Token::Minus) => "-".to_owned(),
            Ok(Token::Plus) => "+".to_owned(),
            Ok(Token::Slash) => "/".to_owned(),
            Ok(Token::RParen) => ")".to_owned(),
            Ok(other) => format!("{other:?}"),
            // erl_scan has a token `@`; msc's lexer has none.
            Err(ParseErrorKind::InvalidCharacter('@')) => "@".to_owned(),
            Err(kind) => return Err(kind),
        });
    }
    Ok(out)
}

fn check_release(release: Release, cases: &str) {
    let syntax = Syntax::of(release);
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines() {
        let (text, expected) = line.split_once('\t').expect("text<TAB>result");
        count += 1;
        let got = lex(text, syntax);
        let ok = match expected.split_once(' ') {
            Some(("ok", tokens)) => {
                // msc's `.` tokens stand for erl_scan's `..`.
                let want: Vec<&str> = tokens
                    .split(" | ")
                    .flat_map(|t| if t == ".." { vec![".", "."] } else { vec![t] })
                    .collect();
                matches!(&got, Ok(g) if *g == want)
            }
            // An erl_scan error, or erl_scan crashing: msc reports an
            // error (and did not panic on the way).
            Some(("error" | "crash", _)) => got.is_err(),
            _ => panic!("bad case line {line:?}"),
        };
        if !ok {
            failures.push(format!("{text:?}: erl_scan {expected}, msc {got:?}"));
        }
    }
    assert!(count > 4000, "{count} cases");
    assert!(
        failures.is_empty(),
        "{release}: {} of {count} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn numbers_scan_as_otp27_does() {
    check_release(Release::Otp27, include_str!("../../../testdata/syntax/otp27.cases"));
}

#[test]
fn numbers_scan_as_otp29_does() {
    check_release(Release::Otp29, include_str!("../../../testdata/syntax/otp29.cases"));
}

#[test]
fn number_errors_name_the_problem_with_a_caret() {
    let otp29 = Syntax::of(Release::Otp29);
    let err = otp29.parse_term("{a, 12abc}").unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: illegal integer: the number runs into `abc` (put a space between them)\n \
         --> 1:5\n  |\n1 | {a, 12abc}\n  |     ^^^^^"
    );
    let err = otp29.parse_term("[1.e5]").unwrap_err();
    assert_eq!(
        err.message(),
        "illegal float: the number runs into `.e5` (put a space between them)"
    );
    for text in ["16#1.8#e", "16#1.8#ex", "16#1.8#e-", "2#1.0#e1024"] {
        assert!(otp29.parse_term(text).is_err(), "{text}");
    }
    assert_eq!(
        otp29.parse_term("16#1.8#e").unwrap_err().message(),
        "illegal float: no digits in the exponent after `#e`"
    );
    assert_eq!(otp29.parse_term("2#1.0#e1024").unwrap_err().message(), "float out of range");
    // OTP 27 reads them as before.
    assert_eq!(parse_terms("1.0e5. 2#101.").unwrap()[1].to_string(), "5");
}

#[test]
fn based_floats_are_valued_as_erl_scan_values_them() {
    // `N * B^(E - D)` in floats: 2 * 2^-1075 is 0.0, not the 2^-1074 a
    // correct rounding of 2^-1074 would give.
    let otp29 = Release::Otp29;
    for (text, bits) in [("2#1.0#e-1074", 0u64), ("16#1.8", 0x3FF8_0000_0000_0000)] {
        let (number, len) = scan_number(text, otp29);
        assert_eq!(len, text.len());
        assert_eq!(number, Ok(scan::Number::Float(f64::from_bits(bits))), "{text}");
    }
}
