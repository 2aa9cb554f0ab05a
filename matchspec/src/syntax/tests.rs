//! Table-driven tests of the term parser: text in, canonical text out.

use super::*;

#[track_caller]
fn check(input: &str, expect: &str) {
    match parse_term(input) {
        Ok(t) => assert_eq!(t.to_string(), expect, "input {input:?}"),
        Err(e) => panic!("input {input:?} failed:\n{e}"),
    }
}

#[test]
fn otp27_numbers_run_into_names() {
    // As OTP 27's erl_scan reads them: `2#10` then `2`, `1` then `e5`.
    let otp27 = Syntax::of(Release::Otp27);
    for (input, expect) in [("2#102", "unexpected `2`"), ("1e5", "unexpected `e5`")] {
        match otp27.parse_term(input) {
            Ok(t) => panic!("input {input:?} parsed as {t}"),
            Err(e) => assert_eq!(e.message(), expect, "input {input:?}\n{e}"),
        }
    }
}

#[track_caller]
fn check_error(input: &str, expect: &str) {
    match parse_term(input) {
        Ok(t) => panic!("input {input:?} parsed as {t}"),
        Err(e) => assert_eq!(e.message(), expect, "input {input:?}\n{e}"),
    }
}

#[test]
fn atoms() {
    for (input, expect) in [
        ("ok", "ok"),
        ("'hello world'", "'hello world'"),
        ("'ok'", "ok"),
        ("'and'", "'and'"),
        ("a@b", "a@b"),
        ("'a\\nb'", "'a\\nb'"),
        ("'\\x{100}'", "'Ā'"),
        ("é", "é"),
        ("''", "''"),
        ("'\\''", "'\\''"),
        ("true", "true"),
    ] {
        check(input, expect);
    }
}

#[test]
fn numbers() {
    for (input, expect) in [
        ("42", "42"),
        ("-7", "-7"),
        ("- 1", "-1"),
        ("+1", "1"),
        ("-(1)", "-1"),
        ("1_000", "1000"),
        ("16#FF", "255"),
        ("16#f_f", "255"),
        ("2#1010", "10"),
        ("36#ZZ", "1295"),
        ("- 16#10", "-16"),
        ("$a", "97"),
        ("$\\n", "10"),
        ("$ ", "32"),
        ("$\\^A", "1"),
        ("$\\177", "127"),
        ("$\\x{1F600}", "128512"),
        ("-$a", "-97"),
        ("00012", "12"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        ("-123456789012345678901234567890", "-123456789012345678901234567890"),
        ("1152921504606846975", "1152921504606846975"),
        ("1152921504606846976", "1152921504606846976"),
        ("-1152921504606846976", "-1152921504606846976"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("2.5", "2.5"),
        ("1.0e-5", "1.0e-5"),
        ("1.5E3", "1.5e3"),
        ("1.0e+3", "1.0e3"),
        ("1_000.0_1", "1000.01"),
        ("-0.0", "-0.0"),
        ("1.0e-400", "0.0"),
    ] {
        check(input, expect);
    }
}

#[test]
fn strings_lists_tuples_maps() {
    for (input, expect) in [
        ("\"abc\"", "\"abc\""),
        ("\"\"", "[]"),
        ("\"a\" \"b\"", "\"ab\""),
        ("\"\\x{1F600}\"", "[128512]"),
        ("\"\\e\\d\\s\"", "[27,127,32]"),
        ("\"\\q\"", "\"q\""),
        ("\"\\1011\"", "\"A1\""),
        ("[1|2]", "[1|2]"),
        ("[1,2|3]", "[1,2|3]"),
        ("[1|[2]]", "[1,2]"),
        ("[$a|\"bc\"]", "\"abc\""),
        ("{}", "{}"),
        ("{a,{b,c}}", "{a,{b,c}}"),
        ("{(a), b}", "{a,b}"),
        ("#{}", "#{}"),
        ("#{b => 1, a => 2}", "#{a => 2,b => 1}"),
        ("#{1=>2, 1=>3}", "#{1 => 3}"),
        ("#{1.0 => a, 1 => b}", "#{1 => b,1.0 => a}"),
        ("# {a => 1}", "#{a => 1}"),
        ("fun lists:map/2", "fun lists:map/2"),
        ("fun 'A':b/1", "fun 'A':b/1"),
        ("[a, b] % comment\n", "[a,b]"),
        ("{a, b}.", "{a,b}"),
        ("{a, b}.\n% trailing comment", "{a,b}"),
    ] {
        check(input, expect);
    }
}

#[test]
fn binaries() {
    for (input, expect) in [
        ("<<>>", "<<>>"),
        ("<< >>", "<<>>"),
        ("<<1,2>>", "<<1,2>>"),
        ("<<\"abc\">>", "<<\"abc\">>"),
        ("<<1:3>>", "<<1:3>>"),
        ("<<1:65>>", "<<0,0,0,0,0,0,0,0,1:1>>"),
        ("<<1:0>>", "<<>>"),
        ("<<\"é\"/utf8>>", "<<\"é\"/utf8>>"),
        ("<<\"é\">>", "<<\"é\">>"),
        ("<<\"\\x{100}\">>", "<<0>>"),
        ("<<\"ab\"/utf16>>", "<<0,97,0,98>>"),
        ("<<256>>", "<<0>>"),
        ("<<-1>>", "<<\"ÿ\">>"),
        ("<<0,255>>", "<<0,255>>"),
        ("<<1:16/little>>", "<<1,0>>"),
        ("<<1.5/float>>", "<<63,248,0,0,0,0,0,0>>"),
        ("<<1.5:32/float>>", "<<63,192,0,0>>"),
        ("<<1.5:16/float>>", "<<62,0>>"),
        ("<<1.5/float-little>>", "<<0,0,0,0,0,0,248,63>>"),
        ("<<<<1>>/binary>>", "<<1>>"),
        ("<<65/utf8>>", "<<\"A\">>"),
        ("<<\"a\", 1>>", "<<97,1>>"),
    ] {
        check(input, expect);
    }
}

#[test]
fn identifiers() {
    for (input, expect) in [
        ("<0.80.0>", "<0.80.0>"),
        ("#Port<0.5>", "#Port<0.5>"),
        ("#Ref<0.1.2.3>", "#Ref<0.1.2.3>"),
        ("#Pid<'b@host'.3.80.0>", "#Pid<b@host.3.80.0>"),
        ("#Pid<b@host.3.80.1>", "#Pid<b@host.3.80.1>"),
        ("#Port<'b@host'.3.5>", "#Port<b@host.3.5>"),
        ("#Ref<'b@host'.3.1.2.3>", "#Ref<b@host.3.1.2.3>"),
        ("{<0.1.2>, a}", "{<0.1.2>,a}"),
    ] {
        check(input, expect);
    }
}

#[test]
fn errors() {
    for (input, expect) in [
        (
            "{ok, X}",
            "variable `X` in a term; terms cannot contain variables (quote it for an atom: 'X')",
        ),
        ("_", "variable `_` in a term; terms cannot contain variables (quote it for an atom: '_')"),
        ("{and, 1}", "`and` is a reserved word; quote it for an atom: 'and'"),
        ("maybe", "`maybe` is a reserved word; quote it for an atom: 'maybe'"),
        ("\"abc", "unterminated string"),
        ("'abc", "unterminated quoted atom"),
        ("37#1", "integer base 37 is not in 2..36"),
        ("2#102", "illegal integer: the number runs into `2` (put a space between them)"),
        ("1.0e309", "float out of range"),
        ("a.b", "`.` must end a term and be followed by white space or the end"),
        ("{a,}", "unexpected `}`; expected a term"),
        ("[a,b,]", "unexpected `]`; expected a term"),
        ("{a, b", "unexpected end of input; expected `,` or `}`"),
        ("a. b.", "unexpected text after the term"),
        ("", "no term in the input"),
        ("  % only a comment", "no term in the input"),
        ("<<1.5>>", "invalid binary segment: a float needs the /float type"),
        ("<<\"a\"/binary>>", "invalid binary segment: binary segment needs a binary value"),
        ("<<1:3/binary>>", "invalid binary segment: binary segment needs a binary value"),
        (
            "<5.1.2>",
            "pid numbers out of range (node 0, id and serial below 2^32); a pid of another node is written #Pid<'node@host'.Creation.Id.Serial>",
        ),
        ("- -1", "unexpected `-`; expected `(` or a number"),
        ("1e5", "illegal integer: the number runs into `e5` (put a space between them)"),
        ("#{a := 1}", "unexpected `:=`; expected `=>`"),
        ("{a, ~}", "invalid character '~'"),
        ("\"\\x{D800}\"", "invalid code point 0xd800"),
        ("$\\x{110000}", "invalid code point 0x110000"),
        ("\"a\"\"b\"", "adjacent strings need white space between them"),
        ("fun lists:map/256", "fun arity must be 0..255"),
    ] {
        check_error(input, expect);
    }
}

#[test]
fn atom_length_is_counted_in_characters() {
    check(&format!("'{}'", "😀".repeat(255)), &format!("'{}'", "😀".repeat(255)));
    check_error(&"a".repeat(256), "atom longer than 255 characters");
}

#[test]
fn errors_render_with_line_column_and_caret() {
    let err = parse_term("[1,\n  {a, b c}]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: unexpected `c`; expected `,` or `}`\n --> 2:9\n  |\n2 |   {a, b c}]\n  |         ^"
    );
}

#[test]
fn a_missing_dot_is_named_after_the_term_it_should_end() {
    let text = "{spawn, a}.\n{session_create, s1} % no dot\n  % a comment\n{process, s1}.\n";
    let err = parse_terms(text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: missing `.` after the term that ends at 2:20\n --> 2:21\n  |\n\
         2 | {session_create, s1} % no dot\n  |                     ^"
    );
    // Inside a term, the usual message.
    let err = parse_terms("{a, b c}.").unwrap_err();
    assert!(err.to_string().contains("unexpected `c`"), "{err}");
}

#[test]
fn streams_recover_after_errors() {
    let results: Vec<_> = TermStream::new("a.\n{b.\nc.\n[d|].\ne").collect();
    let shown: Vec<String> = results
        .iter()
        .map(|r| match r {
            Ok((t, _)) => t.to_string(),
            Err(e) => format!("error at {}", e.location()),
        })
        .collect();
    assert_eq!(shown, ["a", "error at 2:3", "c", "error at 4:4", "e"]);
}

#[test]
fn spans_point_into_the_source() {
    let text = "[{'$1', [{'>', '$1', 3}], ['$_']}]";
    let (term, map) = parse_term_with_spans(text).unwrap();
    let at = |path: &[Step]| &text[map.span_of(term.as_ref(), path).unwrap().range()];
    assert_eq!(at(&[]), text);
    assert_eq!(at(&[Step::Element(0), Step::Element(1)]), "[{'>', '$1', 3}]");
    assert_eq!(at(&[Step::Element(0), Step::Element(1), Step::Element(0), Step::Element(2)]), "3");
    assert_eq!(at(&[Step::Element(0), Step::Element(2), Step::Element(0)]), "'$_'");
}

#[test]
fn a_long_line_is_cut_around_the_caret() {
    // 100,000 deep: the error is at column 200,005, far from both ends.
    let text = format!("{}foo,{}", "[".repeat(200_000), "]".repeat(200_000));
    let err = parse_term(&text).unwrap_err();
    assert_eq!(err.location().to_string(), "1:200005");
    let shown = err.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[1], " --> 1:200005");
    assert!(lines.iter().all(|l| l.len() < 120), "{shown}");
    let (source, caret) = (lines[3], lines[4]);
    assert!(source.starts_with("1 | ...") && source.ends_with("..."), "{source}");
    let at = caret.find('^').unwrap();
    assert_eq!(&source[at..=at], "]", "{shown}");
    assert_eq!(&source[at - 4..at], "foo,", "{shown}");
    // Near the start of a long line, nothing is cut before the caret.
    let err = parse_term(&format!("{{a b{}", " ".repeat(500))).unwrap_err();
    let shown = err.to_string();
    assert!(shown.lines().nth(3).unwrap().starts_with("1 | {a b"), "{shown}");
}
