//! [`next_term_into`]: one term at a time from the front of a text that may
//! go on (a buffer of a stream being read), so that a reader can decide
//! terms as they arrive instead of reading the whole input first.

use super::plain::parse_plain;
use super::{ParseError, ParseErrorKind, Span, Splitter, Syntax, parse_tokens};
use crate::term::{Heap, Word};

/// What is at the front of the text.
#[derive(Debug)]
pub enum NextTerm {
    /// A term, decoded into the heap; the text up to `end` (its `.`
    /// included) is done with.
    Term {
        /// The term's word in the heap.
        root: Word,
        /// Where the next term's text starts.
        end: usize,
    },
    /// A term that does not parse; the text up to `end` (the `.` that ends
    /// it, after which parsing can go on) is done with.
    Error {
        /// Why, with a location in the whole text.
        error: ParseError,
        /// Where the next term's text starts.
        end: usize,
    },
    /// The term is not complete yet: read more and ask again (or, at the
    /// end of the input, ask with `complete`).
    More,
    /// Nothing but white space and comments is left (only when `complete`).
    Done,
}

/// Reusable space for [`next_term_into`].
#[derive(Debug, Default)]
pub struct TermScratch {
    pub(super) values: Vec<Word>,
    pub(super) open: Vec<super::plain::Open>,
    pub(super) pairs: Vec<(Word, Word)>,
    pub(super) binary: Vec<u8>,
}

/// The next term of `text` from byte `from`, as `file:consult/1` would read
/// it. `complete` says `text` is the rest of the input; otherwise a term
/// counts only once the character after its `.` has come (`1.` may yet be
/// `1.5`), and a term cut short is [`NextTerm::More`]. Errors locate in the
/// whole of `text`. Plain terms (tuples, lists, bare atoms, integers,
/// simple strings) are read by a fast path without tokens; every other
/// term by the full parser, so the answers are the same as
/// [`parse_terms_into`](super::parse_terms_into)'s.
///
/// ```
/// use matchspec::syntax::{NextTerm, TermScratch, next_term_into};
/// use matchspec::term::Heap;
///
/// let (mut heap, mut scratch) = (Heap::new(), TermScratch::default());
/// let text = "{a, 1}.\n{b, 2";
/// let NextTerm::Term { root, end } = next_term_into(text, 0, false, &mut heap, &mut scratch) else { panic!() };
/// assert_eq!(heap.view(root).to_string(), "{a,1}");
/// assert!(matches!(next_term_into(text, end, false, &mut heap, &mut scratch), NextTerm::More));
/// ```
///
/// This reads the default release's syntax; see [`Syntax::next_term_into`].
pub fn next_term_into(
    text: &str,
    from: usize,
    complete: bool,
    heap: &mut Heap,
    scratch: &mut TermScratch,
) -> NextTerm {
    next_term_in(text, from, complete, heap, scratch, Syntax::default())
}

/// [`next_term_into`] in `syntax`.
pub(super) fn next_term_in(
    text: &str,
    from: usize,
    complete: bool,
    heap: &mut Heap,
    scratch: &mut TermScratch,
    syntax: Syntax,
) -> NextTerm {
    let rest = &text[from..];
    if let Some((root, used)) = parse_plain(rest, complete, heap, scratch) {
        return NextTerm::Term { root, end: from + used };
    }
    let mut splitter = Splitter::new(rest, syntax);
    let Some(tokens) = splitter.next_term() else {
        return if complete { NextTerm::Done } else { NextTerm::More };
    };
    // How far the term went: past its `.`, or to the end of the text.
    let used = splitter.offset();
    let dotted = matches!(&tokens, Ok(t) if t.dotted) || (tokens.is_err() && used < rest.len());
    // A `.` that is the text's last character may not end the term yet;
    // nor may one inside a `#Ref<...>` literal that is not closed yet.
    if !complete && (!dotted || used >= rest.len() || open_identity_literal(rest, used)) {
        return NextTerm::More;
    }
    match parse_tokens(rest, tokens, heap, false, syntax) {
        Ok((root, _, _)) => NextTerm::Term { root, end: from + used },
        Err(error) => NextTerm::Error { error: error.rebased(text, from), end: from + used },
    }
}

/// Could a `#Pid<`, `#Port<` or `#Ref<` before `used` still become one
/// literal token reaching past `used` once more text comes? Such a token
/// runs to its `>` and may hold `.`s (`#Ref<a@b.1.2.3>`), so a `.` after an
/// unclosed one ends nothing yet: only its `>` or a line break (outside a
/// quoted node name) settles it, as the lexer's pattern reads it.
fn open_identity_literal(rest: &str, used: usize) -> bool {
    ["#Pid<", "#Port<", "#Ref<"].iter().any(|opener| {
        rest[..used].match_indices(opener).any(|(at, _)| unsettled(&rest[at + opener.len()..]))
    })
}

/// Does `body`, what follows a `#Ref<`, end before its `>` or a line
/// break (quoted atoms, with their escapes, skipped)?
fn unsettled(body: &str) -> bool {
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '>' | '\n' => return false,
            '\'' => loop {
                match chars.next() {
                    None => return true,
                    Some('\'') => break,
                    Some('\\') => {
                        if chars.next().is_none() {
                            return true;
                        }
                    }
                    Some(_) => {}
                }
            },
            _ => {}
        }
    }
    true
}

impl ParseError {
    /// This error, found in `text[from..]`, located in the whole `text`.
    fn rebased(self, text: &str, from: usize) -> ParseError {
        let span = self.span();
        let mut kind: ParseErrorKind = self.kind().clone();
        // A location inside the message counts from `from` too.
        if let ParseErrorKind::MissingDot { after } = &mut kind {
            let before = &text[..from];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            if after.line == 1 {
                after.column += before[line_start..].chars().count() as u32;
            }
            after.line += before.bytes().filter(|&b| b == b'\n').count() as u32;
        }
        let span = Span::new(span.start as usize + from, span.end as usize + from);
        ParseError::new(kind, span, text)
    }
}

/// [`next_term_into`] over a text read from its start, keeping count of
/// its lines: an error is then located by looking at its own line only,
/// where locating it in the whole text would cost the text's length (and a
/// text of many bad terms the square of it).
///
/// ```
/// use matchspec::syntax::{NextTerm, TermCursor, TermScratch};
/// use matchspec::term::Heap;
///
/// let text = "a.\nb.\n{c,,}.\n";
/// let (mut heap, mut scratch, mut cursor) = (Heap::new(), TermScratch::default(), TermCursor::default());
/// let mut from = 0;
/// loop {
///     match cursor.next(text, from, true, &mut heap, &mut scratch) {
///         NextTerm::Term { end, .. } => from = end,
///         NextTerm::Error { error, .. } => {
///             assert_eq!(error.location().to_string(), "3:4");
///             break;
///         }
///         NextTerm::More | NextTerm::Done => unreachable!(),
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TermCursor {
    /// Where the line of the last term that did not parse starts, and the
    /// lines before it.
    line_start: usize,
    lines: u32,
    /// How terms are read (the default is the default release's syntax).
    syntax: Syntax,
}

impl TermCursor {
    /// A cursor reading `syntax` (the default reads the default release's).
    pub fn new(syntax: Syntax) -> TermCursor {
        TermCursor { line_start: 0, lines: 0, syntax }
    }

    /// [`next_term_into`] of `text` from byte `from`, which is at or after
    /// where this cursor's last term ended. Offsets are in `text`.
    pub fn next(
        &mut self,
        text: &str,
        from: usize,
        complete: bool,
        heap: &mut Heap,
        scratch: &mut TermScratch,
    ) -> NextTerm {
        let start = self.line_start.min(from);
        match next_term_in(&text[start..], from - start, complete, heap, scratch, self.syntax) {
            NextTerm::Term { root, end } => NextTerm::Term { root, end: end + start },
            NextTerm::Error { error, end } => {
                let error = error.with_line_offset(self.lines);
                // Move on to this term's line, so that the next error is
                // located from here: every byte is counted once however
                // many errors there are (terms that parse cost nothing).
                if let Some(newline) = text.get(start..from).and_then(|t| t.rfind('\n')) {
                    let passed = &text[start..=start + newline];
                    let newlines: usize = passed.bytes().map(|b| usize::from(b == b'\n')).sum();
                    self.lines = self.lines.saturating_add(newlines as u32);
                    self.line_start = start + newline + 1;
                }
                NextTerm::Error { error, end: end + start }
            }
            other => other,
        }
    }
}
