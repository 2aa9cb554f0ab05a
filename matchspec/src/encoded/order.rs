//! Equality and Erlang's term order between an encoded term and a word, or
//! two encoded terms, as far as the bytes settle them.
//!
//! Scalars (integers, floats, atoms, `[]`) and the tuples, lists and
//! binaries made of them compare on the bytes; maps and pids, and terms
//! nested deeper than [`MAX_DEPTH`], answer `None` for the engine to
//! compare decoded terms.

use std::cmp::Ordering;

use super::Position;
use super::read::{
    self, Shape, atom_text, atom_text_is, atom_utf8, end, float, integer, list_cell,
};
use crate::etf::scan::u32_at;
use crate::etf::tag;
use crate::term::{Kind, TermRef, TypeOrder};

/// How deep an equality walks the bytes before it leaves the rest to the
/// decoded terms (whose comparison needs no recursion).
pub const MAX_DEPTH: u32 = 16;

/// Is the term at `position` exactly (`=:=`) the term `term`?
#[inline]
pub fn eq_exact(bytes: &[u8], position: Position, term: TermRef<'_>) -> Option<bool> {
    eq_at(bytes, position, term, 0)
}

fn eq_at(bytes: &[u8], position: Position, term: TermRef<'_>, depth: u32) -> Option<bool> {
    let word = term.word();
    let at = match position {
        Position::Term(at) => at,
        // An immediate equals exactly its own word.
        Position::Word(own) => return Some(own == word),
        Position::ListRest { .. } | Position::StringRest { .. } => {
            return eq_list(bytes, position, term, depth);
        }
    };
    if depth > MAX_DEPTH {
        return None;
    }
    // Immediates first: most comparisons are with a constant.
    match read::tag_at(bytes, at)? {
        tag::SMALL_INTEGER_EXT | tag::INTEGER_EXT => Some(word.as_small() == integer(bytes, at)),
        tag::NEW_FLOAT_EXT => Some(match term.kind() {
            Kind::Float(f) => f.to_bits() == float(bytes, at)?.to_bits(),
            _ => false,
        }),
        tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT => {
            let (text, utf8) = atom_text(bytes, at)?;
            Some(word.as_atom().is_some_and(|atom| atom_text_is(text, utf8, atom.name())))
        }
        tag::NIL_EXT => Some(word.is_nil()),
        tag::STRING_EXT | tag::LIST_EXT => eq_list(bytes, position, term, depth),
        tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT => {
            let Kind::Tuple(tuple) = term.kind() else { return Some(false) };
            let (arity, first) = read::tuple(bytes, position)??;
            if arity as usize != tuple.len() {
                return Some(false);
            }
            let mut at = first;
            for element in tuple.iter() {
                if !eq_at(bytes, Position::Term(at), element, depth + 1)? {
                    return Some(false);
                }
                at = end(bytes, at)?;
            }
            Some(true)
        }
        tag::BINARY_EXT => Some(match term.kind() {
            Kind::Bits(bits) => {
                let len = u32_at(bytes, at as usize + 1)? as usize;
                let own = bytes.get(at as usize + 5..at as usize + 5 + len)?;
                bits.is_binary() && bits.bytes() == own
            }
            _ => false,
        }),
        // Maps and pids of the same kind: left to the decoded terms.
        tag::MAP_EXT => {
            if matches!(term.kind(), Kind::Map(_)) {
                None
            } else {
                Some(false)
            }
        }
        tag::NEW_PID_EXT | tag::PID_EXT => {
            if matches!(term.kind(), Kind::Pid(_)) {
                None
            } else {
                Some(false)
            }
        }
        _ => None,
    }
}

/// [`eq_at`] of a list (any list position) and a term.
fn eq_list(bytes: &[u8], mut position: Position, term: TermRef<'_>, depth: u32) -> Option<bool> {
    let mut term = term;
    loop {
        match list_cell(bytes, position)? {
            Some((head, tail)) => {
                let Kind::Cons(cell) = term.kind() else { return Some(false) };
                if !eq_at(bytes, head, cell.head(), depth + 1)? {
                    return Some(false);
                }
                position = tail;
                term = cell.tail();
            }
            None => return eq_at(bytes, position, term, depth + 1),
        }
    }
}

/// Are the terms at `a` and `b` exactly (`=:=`) equal?
#[inline]
pub fn eq_exact_encoded(bytes: &[u8], a: Position, b: Position) -> Option<bool> {
    if a == b {
        return Some(true);
    }
    match (a, b) {
        (Position::Term(x), Position::Term(y)) => {
            let (ex, ey) = (end(bytes, x)?, end(bytes, y)?);
            // One term has one plain encoding but for its atoms' (and
            // integers'): equal bytes are equal terms.
            if bytes.get(x as usize..ex as usize)? == bytes.get(y as usize..ey as usize)? {
                return Some(true);
            }
            let (sx, sy) = (read::shape(bytes, a)?, read::shape(bytes, b)?);
            if sx != sy {
                return Some(false);
            }
            match sx {
                Shape::Integer => Some(integer(bytes, x)? == integer(bytes, y)?),
                Shape::Atom => {
                    let (p, q) = (atom_utf8(bytes, x)?, atom_utf8(bytes, y)?);
                    Some(p == q)
                }
                // Both `[]` (`NIL_EXT` or an empty `STRING_EXT`).
                Shape::Nil => Some(true),
                // One encoding each: different bytes, different floats.
                Shape::Float => Some(false),
                Shape::Binary | Shape::Bitstring => {
                    let tags = (read::tag_at(bytes, x)?, read::tag_at(bytes, y)?);
                    (tags == (tag::BINARY_EXT, tag::BINARY_EXT)).then_some(false)
                }
                Shape::Cons | Shape::Tuple | Shape::Map | Shape::Pid => None,
            }
        }
        (Position::Word(p), Position::Word(q)) => Some(p == q),
        _ => None,
    }
}

/// The order of types of the term at `position` (a plain term's).
fn type_order(bytes: &[u8], position: Position) -> Option<TypeOrder> {
    Some(match read::shape(bytes, position)? {
        Shape::Integer | Shape::Float => TypeOrder::Number,
        Shape::Atom => TypeOrder::Atom,
        Shape::Nil => TypeOrder::Nil,
        Shape::Cons => TypeOrder::List,
        Shape::Tuple => TypeOrder::Tuple,
        Shape::Map => TypeOrder::Map,
        Shape::Binary | Shape::Bitstring => TypeOrder::Bitstring,
        Shape::Pid => TypeOrder::Pid,
    })
}

/// How the term at `position` compares with `term` in Erlang's term order
/// (numbers by value: `1 == 1.0`), where the bytes settle it.
#[inline]
pub fn compare(bytes: &[u8], position: Position, term: TermRef<'_>) -> Option<Ordering> {
    let word = term.word();
    // Two integers, the usual guard: no kinds at all.
    if let (Position::Term(at), Some(q)) = (position, word.as_small())
        && let Some(p) = integer(bytes, at)
    {
        return Some(p.cmp(&q));
    }
    let own = type_order(bytes, position)?;
    let other = term.type_order();
    if own != other {
        return Some(own.cmp(&other));
    }
    match (position, own) {
        (Position::Word(p), _) if p.is_nil() => Some(Ordering::Equal),
        (Position::Word(p), _) => compare_numbers(p.as_small().map(Number::Integer)?, term),
        (Position::Term(at), TypeOrder::Number) => {
            let number = match integer(bytes, at) {
                Some(n) => Number::Integer(n),
                None => Number::Float(float(bytes, at)?),
            };
            compare_numbers(number, term)
        }
        (Position::Term(at), TypeOrder::Atom) => {
            let text = atom_utf8(bytes, at)?;
            let Kind::Atom(atom) = term.kind() else { return None };
            Some(text.cmp(atom.name().as_bytes()))
        }
        (Position::Term(_), TypeOrder::Nil) => Some(Ordering::Equal),
        _ => None,
    }
}

/// A number read from the bytes.
#[derive(Clone, Copy)]
enum Number {
    Integer(i64),
    Float(f64),
}

/// How `own` compares with the number `term` (`1 == 1.0`), where exact
/// in `f64`.
fn compare_numbers(own: Number, term: TermRef<'_>) -> Option<Ordering> {
    /// Integers within this are exact as `f64`.
    const EXACT: i64 = 1 << 53;
    let exact = |n: i64| (-EXACT..=EXACT).contains(&n).then_some(n as f64);
    match (own, term.kind()) {
        (Number::Integer(p), Kind::Small(q)) => Some(p.cmp(&q)),
        (Number::Integer(p), Kind::Float(q)) => exact(p)?.partial_cmp(&q),
        (Number::Float(p), Kind::Float(q)) => p.partial_cmp(&q),
        (Number::Float(p), Kind::Small(q)) => p.partial_cmp(&exact(q)?),
        _ => None,
    }
}
