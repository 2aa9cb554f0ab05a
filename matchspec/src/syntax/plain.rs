//! A fast path for the plain terms most streams are made of: tuples,
//! lists, lowercase ASCII atoms, decimal integers and ASCII strings
//! without escapes, separated by `,` and white space, ended by a `.`.
//!
//! It reads such a term straight into the heap, without tokens or a
//! grammar. On anything else (a comment, a float, a quoted atom, an escape,
//! a map, a reserved word, an error) it gives up and the full parser reads
//! the term, so its answers are the full parser's (checked by
//! `matchspec/tests/text_stream.rs` and the `parse_text` fuzz target).

use super::TermScratch;
use crate::term::{Atom, Heap, Word};

/// Does `name` lex as a reserved word rather than an atom? (A `match`
/// compiles to a switch on the length, not a comparison per word.)
fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "after"
            | "and"
            | "andalso"
            | "band"
            | "begin"
            | "bnot"
            | "bor"
            | "bsl"
            | "bsr"
            | "bxor"
            | "case"
            | "catch"
            | "cond"
            | "div"
            | "else"
            | "end"
            | "fun"
            | "if"
            | "let"
            | "maybe"
            | "not"
            | "of"
            | "or"
            | "orelse"
            | "receive"
            | "rem"
            | "try"
            | "when"
            | "xor"
    )
}

/// What a container waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Open {
    /// A tuple whose elements start at this index of the value stack.
    Tuple(usize),
    /// A list's elements.
    List(usize),
    /// A list's tail, after `|`.
    Tail(usize),
}

/// The plain term at the start of `text` (after white space) and the
/// offset just past its `.`, if the term is plain and its `.` ends it: a
/// white space character follows, or nothing when `complete` (the text is
/// the rest of the input).
pub(crate) fn parse_plain(
    text: &str,
    complete: bool,
    heap: &mut Heap,
    scratch: &mut TermScratch,
) -> Option<(Word, usize)> {
    let bytes = text.as_bytes();
    let mark = heap.len();
    let TermScratch { values, open } = scratch;
    values.clear();
    open.clear();
    let mut pos = skip_space(bytes, 0);
    let result = (|| loop {
        // A value.
        let value = match *bytes.get(pos)? {
            b'{' => {
                pos = skip_space(bytes, pos + 1);
                if *bytes.get(pos)? == b'}' {
                    pos += 1;
                    heap.tuple(&[])
                } else {
                    open.push(Open::Tuple(values.len()));
                    continue;
                }
            }
            b'[' => {
                pos = skip_space(bytes, pos + 1);
                if *bytes.get(pos)? == b']' {
                    pos += 1;
                    Word::NIL
                } else {
                    open.push(Open::List(values.len()));
                    continue;
                }
            }
            b'a'..=b'z' => {
                let end = pos + bytes[pos..].iter().take_while(|&&b| is_name_byte(b)).count();
                if bytes.get(end).is_some_and(|&b| b >= 0x80) {
                    return None;
                }
                let name = &text[pos..end];
                if is_reserved(name) {
                    return None;
                }
                pos = end;
                Word::atom(Atom::try_new(name).ok()?)
            }
            b'0'..=b'9' | b'-' => {
                let digits_at = pos + usize::from(bytes[pos] == b'-');
                let end = digits_at
                    + bytes[digits_at..].iter().take_while(|b| b.is_ascii_digit()).count();
                // `1_000`, `16#ff`, `1.5`, `2e3`: the full parser's.
                match bytes.get(end) {
                    Some(b'_' | b'#') => return None,
                    Some(b'.') if bytes.get(end + 1).is_some_and(u8::is_ascii_digit) => {
                        return None;
                    }
                    Some(b) if b.is_ascii_alphabetic() || *b >= 0x80 => return None,
                    _ => {}
                }
                // At most 18 digits: no overflow, and the full parser's
                // bignums are not plain.
                if end == digits_at || end - digits_at > 18 {
                    return None;
                }
                let magnitude =
                    bytes[digits_at..end].iter().fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
                let value = if digits_at > pos { -magnitude } else { magnitude };
                pos = end;
                Word::small(value)?
            }
            b'"' => {
                let start = pos + 1;
                let len = bytes[start..]
                    .iter()
                    .take_while(|&&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
                    .count();
                if bytes.get(start + len) != Some(&b'"') {
                    return None;
                }
                pos = skip_space(bytes, start + len + 1);
                // Adjacent strings join: the full parser's.
                if bytes.get(pos) == Some(&b'"') {
                    return None;
                }
                let chars: Vec<Word> = bytes[start..start + len]
                    .iter()
                    .map(|&b| Word::small_unchecked(i64::from(b)))
                    .collect();
                heap.list(&chars)
            }
            _ => return None,
        };
        values.push(value);
        // What follows it: closing containers, a separator, or the end.
        loop {
            pos = skip_space(bytes, pos);
            let next = bytes.get(pos).copied();
            match (open.last().copied(), next) {
                (None, Some(b'.')) => {
                    let after = bytes.get(pos + 1).copied();
                    let ends = match after {
                        None => complete,
                        Some(b) => matches!(b, b' ' | b'\t' | b'\n' | b'\r'),
                    };
                    return if ends && values.len() == 1 {
                        Some((values[0], pos + 1))
                    } else {
                        None
                    };
                }
                (Some(Open::Tuple(_) | Open::List(_)), Some(b',')) => {
                    pos = skip_space(bytes, pos + 1);
                    break;
                }
                (Some(Open::List(start)), Some(b'|')) => {
                    open.pop();
                    open.push(Open::Tail(start));
                    pos = skip_space(bytes, pos + 1);
                    break;
                }
                (Some(Open::Tuple(start)), Some(b'}')) => {
                    open.pop();
                    let tuple = heap.tuple(&values[start..]);
                    values.truncate(start);
                    values.push(tuple);
                    pos += 1;
                }
                (Some(Open::List(start)), Some(b']')) => {
                    open.pop();
                    let list = heap.list(&values[start..]);
                    values.truncate(start);
                    values.push(list);
                    pos += 1;
                }
                (Some(Open::Tail(start)), Some(b']')) if values.len() >= start + 2 => {
                    open.pop();
                    let tail = values.pop()?;
                    let list = heap.list_with_tail(&values[start..], tail);
                    values.truncate(start);
                    values.push(list);
                    pos += 1;
                }
                _ => return None,
            }
        }
    })();
    if result.is_none() {
        heap.truncate(mark);
    }
    result
}

/// Skips the white space the fast path knows (anything else, such as a
/// comment, is the full parser's).
fn skip_space(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// Can this byte continue a bare atom?
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'@'
}
