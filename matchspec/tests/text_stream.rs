//! `syntax::TermCursor` (over `next_term_into`): terms read from a text as it arrives, in any
//! pieces, are the terms `parse_terms_into` reads from the whole text, and
//! errors are located the same.

use matchspec::syntax::{NextTerm, TermCursor, TermScratch, parse_terms_into};
use matchspec::term::{Heap, Term};

fn testdata(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR")))
        .expect("readable")
}

/// The terms (or the first error, as `line:column message`) of `text`
/// handed over `step` bytes at a time.
fn streamed(text: &str, step: usize) -> Result<Vec<Term>, String> {
    let (mut heap, mut scratch, mut cursor) =
        (Heap::new(), TermScratch::default(), TermCursor::default());
    let mut terms = Vec::new();
    let (mut from, mut have) = (0, 0);
    loop {
        let complete = have >= text.len();
        let visible = &text[..have];
        match cursor.next(visible, from, complete, &mut heap, &mut scratch) {
            NextTerm::Term { root, end } => {
                terms.push(heap.view(root).to_owned());
                heap.clear();
                from = end;
            }
            NextTerm::Error { error, .. } => {
                return Err(format!("{} {}", error.location(), error.message()));
            }
            NextTerm::More => {
                assert!(!complete, "More at the end of the input");
                have = (have + step).min(text.len());
                while !text.is_char_boundary(have) {
                    have += 1;
                }
            }
            NextTerm::Done => return Ok(terms),
        }
    }
}

fn whole(text: &str) -> Result<Vec<Term>, String> {
    let mut heap = Heap::new();
    parse_terms_into(text, &mut heap)
        .map(|roots| roots.iter().map(|&r| heap.view(r).to_owned()).collect())
        .map_err(|error| format!("{} {}", error.location(), error.message()))
}

#[test]
fn corpora_stream_as_they_parse_whole() {
    let files = [
        "conformance/otp27-random-seed1.terms",
        "bench/multi_clause.terms",
        "bench/deep_head.terms",
        "otp/numbers.terms",
        "otp/quirks.terms",
        "cli/orders.terms",
    ];
    for file in files {
        let text = testdata(file);
        let expected = whole(&text);
        assert!(expected.is_ok(), "{file}: {expected:?}");
        for step in [1 << 16, 4096, 97] {
            if step < 4096 && text.len() > 200_000 {
                continue;
            }
            assert!(streamed(&text, step) == expected, "{file} in pieces of {step}");
        }
    }
}

#[test]
fn tricky_texts_stream_as_they_parse_whole() {
    let texts = [
        "1.5. 2.\n3.",
        "{a, \"x. y\"}. 'q. r'. $. . [1|2].",
        "a. % a comment. with dots.\nb.",
        "\"ab\" \"cd\". -5. - 5. 16#ff. 1_000. 2.0e3.",
        "{a,}. b.",
        "{a, [1, 2}, 3}. c.",
        "a.b. c.",
        "x.",
        "[a|b]. [a,b|[c]]. {}. []. {{}}. [[]].",
        "maybe. 'maybe'. fun. end_. a@b. aB_9.",
        "99999999999999999999. -1152921504606846976. 1152921504606846975. 1152921504606846976.",
        "{é}. \"é\". <<\"b\">>. #{a => 1}.",
        "a.\u{a0}b.",
        "  \n\t ",
        "",
        "{a,\n b}.\n{c,\n d.\n",
        // Found by the parse_text fuzz target: the location in the message
        // of a missing dot counts from the start of the text.
        "x.\u{15}bad\nox\u{5}l",
        "a.\nb. {c}\n{d}.",
        // Events as `io:format("~p")` writes them: maps, floats, quoted
        // atoms, byte binaries, pids.
        "{event,1,payment_authorized,#{account => 14250,amount => 428.5,currency => eur},\
         #{node => 'app@web-eu-west-1',seq => 1}}.\n\
         {error,2,{closed,<<117,112,115,116,32>>}}.\n\
         {trace_ts,<0.259.0>,call,{ets,insert,[user_table,{key,779},<<\"v\">>]},{1764,7,3}}.",
    ];
    for text in texts {
        let expected = whole(text);
        for step in [1, 2, 3, 5, 1000] {
            assert_eq!(streamed(text, step), expected, "{text:?} in pieces of {step}");
        }
    }
}

/// The terms the fast path reads, and ones near them that it leaves to the
/// full parser (each its own text: the first error ends a text).
#[test]
fn terms_near_the_fast_paths_stream_as_they_parse_whole() {
    let terms = [
        // Maps: empty, nested, a key twice, `:=`, a key without a value.
        "#{}.",
        "#{a => #{b => []}}.",
        "#{a => 1, a => 2}.",
        "#{a := 1}.",
        "#{a}.",
        "#{a => 1,}.",
        "#{1 => 2}#{}.",
        "#{ a=>1 ,b =>2 }.",
        "#{a => 1 b}.",
        // Floats: exponents, signs, out of range, underscores, cut short.
        "1.5e3.",
        "1.5E-3.",
        "-0.0.",
        "- 1.5.",
        "1.0e400.",
        "1.5_0.",
        "2.5e.",
        "1.5.0.",
        "3.0x.",
        "0.1.",
        "{1.5,-2.25e+2}.",
        "1.5e3e3.",
        "007.5.",
        // Quoted atoms: escapes, empty, long, not ASCII, reserved.
        "'a b'.",
        "''.",
        "'it''s'.",
        "'a\\'b'.",
        "'caf\u{e9}'.",
        "'maybe'.",
        "'a'b.",
        // Binaries: empty, spaced, too big a byte, segments, strings.
        "<<>>.",
        "<< >>.",
        "<< 1 , 2 >>.",
        "<<256>>.",
        "<<1:8>>.",
        "<<\"ab\">>.",
        "<<\"a\" \"b\">>.",
        "<<\"a\",1>>.",
        "<<-1>>.",
        "<<0255>>.",
        "<<1,>>.",
        "<<1 2>>.",
        // Pids: of this node, out of range, another node's.
        "<0.80.0>.",
        "<0.4294967296.0>.",
        "<1.2.3>.",
        "<00.1.2>.",
        "<0.1.2>>.",
        "#Pid<'n@h'.1.2.3>.",
        "<0.1>.",
        "[<0.1.2>|<0.3.4>].",
    ];
    for text in terms {
        let expected = whole(text);
        for step in [1, 2, 3, 1000] {
            assert_eq!(streamed(text, step), expected, "{text:?} in pieces of {step}");
        }
    }
}
