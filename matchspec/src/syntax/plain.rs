//! A fast path for the plain terms most streams are made of: tuples,
//! lists, maps, ASCII atoms (bare or quoted), decimal integers and floats,
//! ASCII strings and binaries of a string or of bytes, and pids of this
//! node, without escapes, separated by `,` and white space, ended by a `.`.
//!
//! It reads such a term straight into the heap, without tokens or a
//! grammar. On anything else (a comment, an escape, a bignum, a record, a
//! bit-syntax segment, a reserved word, an error) it gives up and the full
//! parser reads the term, so its answers are the full parser's (checked
//! by `matchspec/tests/text_stream.rs` and the `parse_text` fuzz target).

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
    /// A map's keys and values, one after the other.
    Map(usize),
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
    let TermScratch { values, open, pairs, binary } = scratch;
    values.clear();
    open.clear();
    let mut pos = skip_space(bytes, 0);
    let result = (|| loop {
        // A value.
        let (value, end) = match *bytes.get(pos)? {
            b'{' => {
                pos = skip_space(bytes, pos + 1);
                if *bytes.get(pos)? == b'}' {
                    (heap.tuple(&[]), pos + 1)
                } else {
                    open.push(Open::Tuple(values.len()));
                    continue;
                }
            }
            b'[' => {
                pos = skip_space(bytes, pos + 1);
                if *bytes.get(pos)? == b']' {
                    (Word::NIL, pos + 1)
                } else {
                    open.push(Open::List(values.len()));
                    continue;
                }
            }
            b'#' if bytes.get(pos + 1) == Some(&b'{') => {
                pos = skip_space(bytes, pos + 2);
                if *bytes.get(pos)? == b'}' {
                    (heap.map_in_order(&[]), pos + 1)
                } else {
                    open.push(Open::Map(values.len()));
                    continue;
                }
            }
            b'a'..=b'z' => bare_atom(text, pos)?,
            b'\'' => quoted_atom(text, pos)?,
            b'0'..=b'9' | b'-' => number(text, pos, heap)?,
            b'"' => string(bytes, pos, heap)?,
            b'<' if bytes.get(pos + 1) == Some(&b'<') => binary_at(bytes, pos, heap, binary)?,
            b'<' => local_pid(text, pos, heap)?,
            _ => return None,
        };
        values.push(value);
        pos = end;
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
                // After a key, `=>`; after a value, `,` or `}`.
                (Some(Open::Map(start)), Some(b'=')) if (values.len() - start) % 2 == 1 => {
                    if bytes.get(pos + 1) != Some(&b'>') {
                        return None;
                    }
                    pos = skip_space(bytes, pos + 2);
                    break;
                }
                (Some(Open::Map(start)), Some(b',')) if (values.len() - start) % 2 == 0 => {
                    pos = skip_space(bytes, pos + 1);
                    break;
                }
                (Some(Open::Map(start)), Some(b'}')) if (values.len() - start) % 2 == 0 => {
                    open.pop();
                    pairs.clear();
                    pairs.extend(values[start..].chunks(2).map(|kv| (kv[0], kv[1])));
                    let map = heap.map_in_order(pairs);
                    values.truncate(start);
                    values.push(map);
                    pos += 1;
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

/// The bare atom at `pos` (a lowercase letter first), and where it ends.
fn bare_atom(text: &str, pos: usize) -> Option<(Word, usize)> {
    let bytes = text.as_bytes();
    let end = pos + bytes[pos..].iter().take_while(|&&b| is_name_byte(b)).count();
    if bytes.get(end).is_some_and(|&b| b >= 0x80) {
        return None;
    }
    let name = &text[pos..end];
    if is_reserved(name) {
        return None;
    }
    Some((Word::atom(Atom::try_new(name).ok()?), end))
}

/// The quoted atom at `pos`, if its name is printable ASCII without
/// escapes.
fn quoted_atom(text: &str, pos: usize) -> Option<(Word, usize)> {
    let bytes = text.as_bytes();
    let start = pos + 1;
    let len = bytes[start..].iter().take_while(|&&b| is_plain_char(b) && b != b'\'').count();
    if bytes.get(start + len) != Some(&b'\'') {
        return None;
    }
    let atom = Atom::try_new(&text[start..start + len]).ok()?;
    Some((Word::atom(atom), start + len + 1))
}

/// The decimal integer (of at most 18 digits) or float at `pos`, a `-`
/// right before its digits.
fn number(text: &str, pos: usize, heap: &mut Heap) -> Option<(Word, usize)> {
    let bytes = text.as_bytes();
    let negative = bytes[pos] == b'-';
    let digits_at = pos + usize::from(negative);
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut end = digits_at + digits(digits_at);
    if end == digits_at {
        return None;
    }
    let float = bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
    if float {
        end += 1 + digits(end + 1);
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
            let exponent = digits(end + 1 + sign);
            if exponent == 0 {
                return None;
            }
            end += 1 + sign + exponent;
        }
    }
    // `1_000`, `16#ff`, `2e3`, `1.5.0`: the full parser's.
    match bytes.get(end) {
        Some(b'_' | b'#') => return None,
        Some(b'.') if bytes.get(end + 1).is_some_and(u8::is_ascii_digit) => return None,
        Some(b) if b.is_ascii_alphabetic() || *b >= 0x80 => return None,
        _ => {}
    }
    if float {
        // As the lexer reads one; out of range is the full parser's error.
        let value: f64 = text[digits_at..end].parse().ok().filter(|v: &f64| v.is_finite())?;
        return Some((heap.try_float(if negative { -value } else { value })?, end));
    }
    // At most 18 digits: no overflow, and the full parser's bignums are
    // not plain.
    if end - digits_at > 18 {
        return None;
    }
    let magnitude = bytes[digits_at..end].iter().fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
    Some((Word::small(if negative { -magnitude } else { magnitude })?, end))
}

/// The string at `pos`, if it is printable ASCII without escapes and no
/// string follows it (adjacent strings join: the full parser's).
fn string(bytes: &[u8], pos: usize, heap: &mut Heap) -> Option<(Word, usize)> {
    let (text, end) = string_text(bytes, pos)?;
    if bytes.get(skip_space(bytes, end)) == Some(&b'"') {
        return None;
    }
    let chars: Vec<Word> = text.iter().map(|&b| Word::small_unchecked(i64::from(b))).collect();
    Some((heap.list(&chars), end))
}

/// The text of the plain string at `pos` and where it ends.
fn string_text(bytes: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let start = pos + 1;
    let len = bytes[start..].iter().take_while(|&&b| is_plain_char(b) && b != b'"').count();
    (bytes.get(start + len) == Some(&b'"')).then(|| (&bytes[start..start + len], start + len + 1))
}

/// The binary at `pos` (`<<`), if it is `<<>>`, one plain string or bytes
/// written as decimal integers below 256.
fn binary_at(
    bytes: &[u8],
    pos: usize,
    heap: &mut Heap,
    binary: &mut Vec<u8>,
) -> Option<(Word, usize)> {
    binary.clear();
    let mut at = skip_space(bytes, pos + 2);
    if bytes.get(at) == Some(&b'"') {
        let (text, end) = string_text(bytes, at)?;
        binary.extend_from_slice(text);
        at = skip_space(bytes, end);
    } else if bytes.get(at) != Some(&b'>') {
        loop {
            let len = bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
            if len == 0 || len > 3 {
                return None;
            }
            let value = bytes[at..at + len].iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
            binary.push(u8::try_from(value).ok()?);
            at = skip_space(bytes, at + len);
            match bytes.get(at) {
                Some(b',') => at = skip_space(bytes, at + 1),
                Some(b'>') => break,
                _ => return None,
            }
        }
    }
    if bytes.get(at..at + 2) != Some(b">>") {
        return None;
    }
    Some((heap.binary(binary), at + 2))
}

/// The pid of this node at `pos`, written `<0.Id.Serial>`, if its numbers
/// are in range (else the full parser's error).
fn local_pid(text: &str, pos: usize, heap: &mut Heap) -> Option<(Word, usize)> {
    let bytes = text.as_bytes();
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    if bytes.get(pos + 1..pos + 3) != Some(b"0.") {
        return None;
    }
    let id_at = pos + 3;
    let id_end = id_at + digits(id_at);
    if id_end == id_at || bytes.get(id_end) != Some(&b'.') {
        return None;
    }
    let serial_at = id_end + 1;
    let serial_end = serial_at + digits(serial_at);
    if serial_end == serial_at || bytes.get(serial_end) != Some(&b'>') {
        return None;
    }
    let id: u32 = text[id_at..id_end].parse().ok()?;
    let serial: u32 = text[serial_at..serial_end].parse().ok()?;
    Some((heap.pid(Atom::NONODE, id, serial, 0), serial_end + 1))
}

/// Skips the white space the fast path knows (anything else, such as a
/// comment, is the full parser's).
fn skip_space(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// Is this byte a character the fast path reads inside quotes (printable
/// ASCII but the escape character)?
fn is_plain_char(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'\\'
}

/// Can this byte continue a bare atom?
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'@'
}
