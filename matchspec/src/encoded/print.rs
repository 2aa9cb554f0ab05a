//! Printing an encoded term straight from its bytes, exactly as the term
//! printer prints the decoded term: the same printer walks both (the
//! term printer's `Walk`), and a term that has no reading here (a map,
//! whose keys print in term order; a pid, a bignum) is decoded, alone, and
//! printed by it.
//!
//! ```
//! use matchspec::{encoded, etf, term::Term};
//!
//! let term = Term::parse("{ok, \"hi\", [1.5, <<\"b\">>], #{a => 1}}")?;
//! let bytes = etf::encode(term.as_ref())?;
//! let mut text = String::new();
//! encoded::print::write_text(&bytes, 1, &mut text)?;
//! assert_eq!(text, term.to_string());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fmt::{self, Write};

use super::Position;
use super::read::{self, atom_text, end, float, integer, list_cell, plain_end};
use crate::etf::scan::{u16_at, u32_at};
use crate::etf::{self, tag};
use crate::term::Heap;
use crate::term::display::{Node, Printer, Task, Walk};

/// The longest encoding printed from its bytes.
const MAX_PRINTED: u32 = 4096;

/// Writes the term whose tag is at byte `at` of `bytes` (a whole term,
/// version byte first) as [`TermRef::write_text`] writes it decoded.
/// Bytes that do not decode are an error.
///
/// [`TermRef::write_text`]: crate::term::TermRef::write_text
pub fn write_text(bytes: &[u8], at: usize, out: &mut impl Write) -> fmt::Result {
    let at = u32::try_from(at).map_err(|_| fmt::Error)?;
    print_part(bytes, Position::Term(at), &mut Printer::new(out, true))
}

/// Prints the part of `bytes` at `position` with `printer`, as
/// [`write_text`] does a term. A term that is not plain has no readings,
/// and a long one is read faster decoded (a list's rest is found by
/// skipping its head, so nested lists take time of their length times
/// their depth).
pub(crate) fn print_part<W: Write>(
    bytes: &[u8],
    position: Position,
    printer: &mut Printer<'_, W>,
) -> fmt::Result {
    match position {
        Position::Term(at) => {
            if plain_end(bytes, at).is_none_or(|end| end - at > MAX_PRINTED) {
                return decoded(bytes, at, printer);
            }
            printer.print(Encoded { bytes, position })
        }
        Position::ListRest { .. } | Position::StringRest { .. } | Position::Word(_) => {
            printer.print(Encoded { bytes, position })
        }
    }
}

/// A part of a plain term's bytes, as the printer walks it.
#[derive(Clone, Copy, Debug)]
struct Encoded<'b> {
    bytes: &'b [u8],
    position: Position,
}

impl<'b> Encoded<'b> {
    fn at(self, position: Position) -> Encoded<'b> {
        Encoded { position, ..self }
    }
}

/// The elements of an encoded tuple.
struct Elements<'b> {
    bytes: &'b [u8],
    next: u32,
    left: u32,
}

impl<'b> Iterator for Elements<'b> {
    type Item = Encoded<'b>;

    fn next(&mut self) -> Option<Encoded<'b>> {
        if self.left == 0 {
            return None;
        }
        let at = self.next;
        self.left -= 1;
        // (A plain term's elements all end; past the end, none follow.)
        self.next = if self.left > 0 { end(self.bytes, at)? } else { at };
        Some(Encoded { bytes: self.bytes, position: Position::Term(at) })
    }
}

impl<'b> Walk<'b> for Encoded<'b> {
    type Elements = Elements<'b>;

    fn node(self) -> Node<'b, Self> {
        self.read().unwrap_or(Node::Other)
    }

    fn write_other<W: Write>(
        self,
        printer: &mut Printer<'_, W>,
        _stack: &mut Vec<Task<Self>>,
    ) -> fmt::Result {
        match self.position {
            Position::Term(at) => decoded(self.bytes, at, printer),
            // (Always read: a list's rest and a string's character.)
            Position::ListRest { .. } | Position::StringRest { .. } | Position::Word(_) => {
                Err(fmt::Error)
            }
        }
    }
}

impl<'b> Encoded<'b> {
    /// The node at the position, if it has a reading here.
    fn read(self) -> Option<Node<'b, Self>> {
        let bytes = self.bytes;
        let at = match self.position {
            Position::Term(at) => at,
            Position::Word(word) => {
                return Some(match word.as_small() {
                    Some(v) => Node::Small(v),
                    None => Node::Nil,
                });
            }
            Position::ListRest { .. } | Position::StringRest { .. } => {
                let (head, tail) = list_cell(bytes, self.position)??;
                return Some(Node::Cons(self.at(head), self.at(tail)));
            }
        };
        Some(match read::tag_at(bytes, at)? {
            tag::SMALL_INTEGER_EXT | tag::INTEGER_EXT => Node::Small(integer(bytes, at)?),
            tag::NEW_FLOAT_EXT => Node::Float(float(bytes, at)?),
            tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT => {
                let (text, utf8) = atom_text(bytes, at)?;
                Node::Atom(match utf8 {
                    true => Cow::Borrowed(std::str::from_utf8(text).ok()?),
                    false => Cow::Owned(text.iter().map(|&b| char::from(b)).collect()),
                })
            }
            tag::NIL_EXT => Node::Nil,
            tag::STRING_EXT if u16_at(bytes, at as usize + 1)? == 0 => Node::Nil,
            tag::STRING_EXT | tag::LIST_EXT => {
                let (head, tail) = list_cell(bytes, self.position)??;
                Node::Cons(self.at(head), self.at(tail))
            }
            tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT => {
                let (arity, first) = read::tuple(bytes, self.position)??;
                Node::Tuple(Elements { bytes, next: first, left: arity })
            }
            tag::BINARY_EXT => {
                let len = u32_at(bytes, at as usize + 1)? as usize;
                Node::Binary(bytes.get(at as usize + 5..at as usize + 5 + len)?)
            }
            _ => Node::Other,
        })
    }
}

/// Decodes the term at `at` and prints it with `printer`.
fn decoded<W: Write>(bytes: &[u8], at: u32, printer: &mut Printer<'_, W>) -> fmt::Result {
    let mut heap = Heap::new();
    let word = etf::decode_subterm(bytes, at as usize, &mut heap).map_err(|_| fmt::Error)?;
    printer.print(heap.view(word))
}
