//! Reading the parts of an encoded term, and what the guard functions
//! that only read say of it.
//!
//! Each function takes the bytes of one plain term (see the [module
//! documentation](super)) and positions in them. `None` means the bytes
//! do not settle it here (or are not what a plain term's are): the engine
//! then decodes and runs the op on words.

use super::Position;
use crate::bif::Bif;
use crate::etf::scan::{atom_at, skip, skip_plain, u16_at, u32_at};
use crate::etf::tag;
use crate::term::{Atom, Word};

/// The tag at `at`.
#[inline(always)]
pub(crate) fn tag_at(bytes: &[u8], at: u32) -> Option<u8> {
    bytes.get(at as usize).copied()
}

/// Where the term at `at` ends (in a term found plain: nothing is checked
/// again).
#[inline]
pub fn end(bytes: &[u8], at: u32) -> Option<u32> {
    skip_plain(bytes, at as usize).and_then(|end| u32::try_from(end).ok())
}

/// Where the term at `at` ends, if it is plain.
#[inline]
pub fn plain_end(bytes: &[u8], at: u32) -> Option<u32> {
    skip(bytes, at as usize).and_then(|end| u32::try_from(end).ok())
}

/// The arity of the tuple at `position` and where its first element
/// starts: `Some(None)` if it is no tuple.
#[inline(always)]
pub fn tuple(bytes: &[u8], position: Position) -> Option<Option<(u32, u32)>> {
    let Position::Term(at) = position else { return Some(None) };
    Some(match tag_at(bytes, at)? {
        tag::SMALL_TUPLE_EXT => Some((u32::from(tag_at(bytes, at + 1)?), at + 2)),
        tag::LARGE_TUPLE_EXT => Some((u32_at(bytes, at as usize + 1)?, at + 5)),
        _ => None,
    })
}

/// Where element `index` (from 0) starts, of a tuple whose first element
/// starts at `first`.
#[inline]
pub fn element(bytes: &[u8], first: u32, index: u32) -> Option<u32> {
    let mut at = first;
    for _ in 0..index {
        at = end(bytes, at)?;
    }
    Some(at)
}

/// The head and tail of the list cell at `position`: `Some(None)` if it
/// is no list cell.
#[inline]
pub fn list_cell(bytes: &[u8], position: Position) -> Option<Option<(Position, Position)>> {
    let rest = |next: u32, left: u32, of_string: bool| match (left, of_string) {
        (0, true) => Position::Word(Word::NIL),
        (0, false) => Position::Term(next),
        (left, true) => Position::StringRest { at: next, left },
        (left, false) => Position::ListRest { at: next, left },
    };
    let char_at =
        |at: u32| Some(Position::Word(Word::small_unchecked(i64::from(tag_at(bytes, at)?))));
    Some(match position {
        Position::Term(at) => match tag_at(bytes, at)? {
            tag::LIST_EXT => {
                let n = u32_at(bytes, at as usize + 1)?;
                let first = at + 5;
                (n > 0).then_some(())?;
                Some((Position::Term(first), rest(end(bytes, first)?, n - 1, false)))
            }
            tag::STRING_EXT => {
                let n = u32::from(u16_at(bytes, at as usize + 1)?);
                (n > 0).then(|| Some((char_at(at + 3)?, rest(at + 4, n - 1, true)))).flatten()
            }
            _ => None,
        },
        Position::ListRest { at, left } => {
            Some((Position::Term(at), rest(end(bytes, at)?, left - 1, false)))
        }
        Position::StringRest { at, left } => Some((char_at(at)?, rest(at + 1, left - 1, true))),
        Position::Word(_) => None,
    })
}

/// The number of keys of the map at `position` and where its first key
/// starts: `Some(None)` if it is no map.
#[inline]
pub fn map(bytes: &[u8], position: Position) -> Option<Option<(u32, u32)>> {
    let Position::Term(at) = position else { return Some(None) };
    Some(match tag_at(bytes, at)? {
        tag::MAP_EXT => Some((u32_at(bytes, at as usize + 1)?, at + 5)),
        _ => None,
    })
}

/// Where the value of the key for which `is_key` holds starts, in a map of
/// `size` keys whose first key starts at `first`: `Some(None)` if no key
/// is it. `is_key` says `None` where it cannot tell, and so does this.
#[inline]
pub fn map_value(
    bytes: &[u8],
    size: u32,
    first: u32,
    mut is_key: impl FnMut(Position) -> Option<bool>,
) -> Option<Option<u32>> {
    let mut at = first;
    for _ in 0..size {
        let value = end(bytes, at)?;
        if is_key(Position::Term(at))? {
            return Some(Some(value));
        }
        at = end(bytes, value)?;
    }
    Some(None)
}

/// The integer at `at`, if it is one.
#[inline(always)]
pub fn integer(bytes: &[u8], at: u32) -> Option<i64> {
    match tag_at(bytes, at)? {
        tag::SMALL_INTEGER_EXT => Some(i64::from(tag_at(bytes, at + 1)?)),
        tag::INTEGER_EXT => Some(i64::from(u32_at(bytes, at as usize + 1)? as i32)),
        _ => None,
    }
}

/// The float at `at`, if it is one.
#[inline(always)]
pub fn float(bytes: &[u8], at: u32) -> Option<f64> {
    match tag_at(bytes, at)? {
        tag::NEW_FLOAT_EXT => {
            let bits = bytes.get(at as usize + 1..at as usize + 9)?;
            Some(f64::from_bits(u64::from_be_bytes(bits.try_into().ok()?)))
        }
        _ => None,
    }
}

/// The text of the atom at `at` and whether it is in UTF-8 (else
/// Latin-1), if it is an atom.
#[inline(always)]
pub fn atom_text(bytes: &[u8], at: u32) -> Option<(&[u8], bool)> {
    let tag = tag_at(bytes, at)?;
    let (_, text) = atom_at(bytes, at as usize)?;
    Some((text, matches!(tag, tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT)))
}

/// Is the atom text `text` (UTF-8 if `utf8`, else Latin-1) the name
/// `name`?
#[inline]
pub fn atom_text_is(text: &[u8], utf8: bool, name: &str) -> bool {
    if utf8 || name.is_ascii() {
        return text == name.as_bytes();
    }
    // Latin-1: one byte a character, each below 256.
    text.len() == name.chars().count()
        && text.iter().zip(name.chars()).all(|(&b, c)| u32::from(b) == u32::from(c))
}

/// The text of the atom at `at` in UTF-8, if it is an atom whose text is
/// (all atoms but the Latin-1 ones beyond ASCII).
#[inline]
pub fn atom_utf8(bytes: &[u8], at: u32) -> Option<&[u8]> {
    let (text, utf8) = atom_text(bytes, at)?;
    (utf8 || text.is_ascii()).then_some(text)
}

/// The kinds of term a plain encoding can be, for the type tests and the
/// order of types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// An atom.
    Atom,
    /// `[]`.
    Nil,
    /// A list cell.
    Cons,
    /// A tuple.
    Tuple,
    /// A map.
    Map,
    /// A binary.
    Binary,
    /// A bitstring that is not a binary.
    Bitstring,
    /// A pid.
    Pid,
}

/// What kind of term is at `position`.
#[inline]
pub fn shape(bytes: &[u8], position: Position) -> Option<Shape> {
    let at = match position {
        Position::Term(at) => at,
        Position::ListRest { .. } | Position::StringRest { .. } => return Some(Shape::Cons),
        Position::Word(word) if word.is_nil() => return Some(Shape::Nil),
        Position::Word(word) => return word.is_small().then_some(Shape::Integer),
    };
    Some(match tag_at(bytes, at)? {
        tag::SMALL_INTEGER_EXT | tag::INTEGER_EXT | tag::SMALL_BIG_EXT | tag::LARGE_BIG_EXT => {
            Shape::Integer
        }
        tag::NEW_FLOAT_EXT => Shape::Float,
        tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT => {
            Shape::Atom
        }
        tag::NIL_EXT => Shape::Nil,
        tag::STRING_EXT if u16_at(bytes, at as usize + 1)? == 0 => Shape::Nil,
        tag::STRING_EXT | tag::LIST_EXT => Shape::Cons,
        tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT => Shape::Tuple,
        tag::MAP_EXT => Shape::Map,
        tag::BINARY_EXT => Shape::Binary,
        // Eight bits in the last byte: a binary.
        tag::BIT_BINARY_EXT if tag_at(bytes, at + 5)? == 8 => Shape::Binary,
        tag::BIT_BINARY_EXT => Shape::Bitstring,
        tag::NEW_PID_EXT | tag::PID_EXT => Shape::Pid,
        _ => return None,
    })
}

/// What the type test `test` (one of [`Bif::is_type_test`]'s) says of the
/// term at `position`.
#[inline]
pub fn type_test(bytes: &[u8], position: Position, test: Bif) -> Option<bool> {
    let shape = shape(bytes, position)?;
    Some(match test {
        Bif::IsAtom => shape == Shape::Atom,
        Bif::IsBoolean => {
            let Position::Term(at) = position else { return Some(false) };
            shape == Shape::Atom && matches!(atom_text(bytes, at)?.0, b"true" | b"false")
        }
        Bif::IsInteger => shape == Shape::Integer,
        Bif::IsFloat => shape == Shape::Float,
        Bif::IsNumber => matches!(shape, Shape::Integer | Shape::Float),
        Bif::IsList => matches!(shape, Shape::Nil | Shape::Cons),
        Bif::IsTuple => shape == Shape::Tuple,
        Bif::IsMap => shape == Shape::Map,
        Bif::IsBinary => shape == Shape::Binary,
        Bif::IsBitstring => matches!(shape, Shape::Binary | Shape::Bitstring),
        Bif::IsPid => shape == Shape::Pid,
        Bif::IsPort | Bif::IsReference | Bif::IsFunction1 => false,
        _ => return None,
    })
}

/// What a guard function that only reads its encoded argument gives: a
/// small integer or a boolean (`Some(Ok(word))`), its failure
/// (`Some(Err(()))`), or `None` when the bytes do not settle it.
pub type Reading = Option<Result<Word, ()>>;

/// `byte_size/1`, `size/1`, `tuple_size/1`, `map_size/1` or `length/1` of
/// the term at `position`; `None` for any other function, and for a
/// bitstring or a term of no [`Shape`].
#[inline]
pub fn size(bytes: &[u8], bif: Bif, position: Position) -> Reading {
    let small = |n: u32| Ok(Word::small_unchecked(i64::from(n)));
    let shape = shape(bytes, position)?;
    match (bif, shape) {
        (Bif::Length, _) => length(bytes, position),
        (Bif::ByteSize | Bif::Size, Shape::Binary) => {
            let Position::Term(at) = position else { return None };
            Some(small(u32_at(bytes, at as usize + 1)?))
        }
        (Bif::TupleSize | Bif::Size, Shape::Tuple) => Some(small(tuple(bytes, position)??.0)),
        (Bif::MapSize, Shape::Map) => Some(small(map(bytes, position)??.0)),
        // Its bytes rounded up: left to the decoded term.
        (Bif::ByteSize | Bif::Size, Shape::Bitstring) => None,
        (Bif::ByteSize | Bif::Size | Bif::TupleSize | Bif::MapSize, _) => Some(Err(())),
        _ => None,
    }
}

/// `length/1` of the list at `position`: its length if it is proper.
fn length(bytes: &[u8], mut position: Position) -> Reading {
    let mut n: u64 = 0;
    loop {
        match position {
            Position::Term(at) => match tag_at(bytes, at)? {
                tag::NIL_EXT => break,
                tag::STRING_EXT => {
                    n += u64::from(u16_at(bytes, at as usize + 1)?);
                    break;
                }
                tag::LIST_EXT => {
                    let count = u32_at(bytes, at as usize + 1)?;
                    let mut next = at + 5;
                    for _ in 0..count {
                        next = end(bytes, next)?;
                    }
                    n += u64::from(count);
                    position = Position::Term(next);
                }
                _ => return Some(Err(())),
            },
            Position::ListRest { at, left } => {
                let mut next = at;
                for _ in 0..left {
                    next = end(bytes, next)?;
                }
                n += u64::from(left);
                position = Position::Term(next);
            }
            Position::StringRest { left, .. } => {
                n += u64::from(left);
                break;
            }
            Position::Word(word) if word.is_nil() => break,
            Position::Word(_) => return Some(Err(())),
        }
    }
    Some(Ok(Word::small(i64::try_from(n).ok()?)?))
}

/// Is the atom at `at` the atom `atom`?
#[inline]
pub fn is_atom(bytes: &[u8], at: u32, atom: Atom) -> Option<bool> {
    match atom_text(bytes, at) {
        Some((text, utf8)) => Some(atom_text_is(text, utf8, atom.name())),
        None => Some(false),
    }
}
