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
    ];
    for text in texts {
        let expected = whole(text);
        for step in [1, 2, 3, 5, 1000] {
            assert_eq!(streamed(text, step), expected, "{text:?} in pieces of {step}");
        }
    }
}
