//! [`Built`]: a match's result as the byte engine leaves it, parts of the
//! input still encoded, for a caller that writes it out.
//!
//! A projection (`{{'$1', '$2', {byte_size, '$3'}}}`) builds a tuple of
//! parts of the input and a few computed words. Decoding the parts to
//! build it, and then encoding or printing the tuple, reads every byte of
//! them twice and makes their atoms. The byte engine keeps such a tuple as
//! its pieces instead ([`ir::Encoded::keeps_parts`] says which), and
//! [`Built`] writes it: parts copied as bytes or printed from the bytes,
//! words as any term. What is written is the result's term, exactly as
//! the term printer prints it; an encoding keeps each part's bytes as the
//! input wrote them (an atom in Latin-1 stays Latin-1), so it decodes to
//! the same term as encoding the decoded result does.
//!
//! ```
//! use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, etf, spec::Kind};
//! use matchspec::term::{Heap, Term};
//! use matchspec::encoded::built::EncodedOutcome;
//!
//! let spec = CompiledSpec::compile("[{{'$1', '$2'}, [], [{{'$2', '$1'}}]}]", Kind::Table, &Config::default())?;
//! let bytes = etf::encode(Term::parse("{\"a string\", {nested, 1.5}}")?.as_ref())?;
//! let verdict = spec.wire().unwrap().decide(&bytes, &mut Scratch::new());
//! let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
//! let outcome = spec.run_verdict_built(&bytes, verdict, &mut heap, &mut scratch, &mut TestHost::default())??;
//! let EncodedOutcome::Built(built) = outcome else { panic!("a match, left in the bytes") };
//! let mut text = String::new();
//! built.write_text(&mut text)?;
//! assert_eq!(text, "{{nested,1.5},\"a string\"}");
//! let mut encoded = Vec::new();
//! built.write_etf(&mut encoded)?;
//! assert_eq!(etf::decode(&encoded)?, Term::parse("{{nested, 1.5}, \"a string\"}")?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`ir::Encoded::keeps_parts`]: crate::ir::Encoded::keeps_parts

use std::fmt::{self, Write};

use super::Position;
use super::print::print_part;
use super::read;
use crate::Release;
use crate::etf::{self, DecodeError, EncodeError, tag};
use crate::outcome::Outcome;
use crate::term::display::{Node, Printer, Task, Walk};
use crate::term::{Heap, HeapSet, Term, Word};

/// What a spec made of an encoded term when its result may stay in the
/// bytes (what `Run::run_verdict_built` gives).
#[derive(Debug)]
pub enum EncodedOutcome<'a> {
    /// The outcome as any run gives it: no match, or a match whose result
    /// is a decoded term (a term that is not plain, a trace kind, a result
    /// the engine had to build as a word).
    Outcome(Outcome<'a>),
    /// A match whose result is (made of) parts of the input's bytes.
    Built(Built<'a>),
}

/// One piece of a [`Built`] result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A part of the input, in its bytes.
    Part(Position),
    /// A word: a constant, a guard function's value, a decoded part.
    Word(Word),
    /// A tuple of the pieces `first..first + arity`.
    Tuple {
        /// Where its elements start in the pieces.
        first: u32,
        /// How many.
        arity: u32,
    },
}

/// A match's result left in the input's bytes: a part of them, or a tuple
/// of parts and words (see the [module documentation](self)).
#[derive(Clone, Copy)]
pub struct Built<'a> {
    bytes: &'a [u8],
    pieces: &'a [Piece],
    root: Piece,
    heaps: HeapSet<'a>,
    /// Whose `term_to_binary` writes the parts that are not copied.
    release: Release,
}

impl fmt::Debug for Built<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        match self.write_text(&mut text) {
            Ok(()) => write!(f, "Built({text})"),
            Err(_) => f.write_str("Built(<not a term>)"),
        }
    }
}

impl<'a> Built<'a> {
    /// The part of the plain term `bytes` (version byte first) whose tag is
    /// at byte `at`.
    pub fn part(bytes: &'a [u8], at: u32) -> Built<'a> {
        let heaps = HeapSet::new(&[], &[], &[]);
        // A part is copied as it is: no release writes it differently.
        let release = Release::default();
        Built { bytes, pieces: &[], root: Piece::Part(Position::Term(at)), heaps, release }
    }

    /// The result `root` of a run on `bytes` by a program of `release`:
    /// its tuples' pieces in `pieces`, its words terms of `heaps`.
    pub(crate) fn new(
        bytes: &'a [u8],
        pieces: &'a [Piece],
        root: Piece,
        heaps: HeapSet<'a>,
        release: Release,
    ) -> Built<'a> {
        Built { bytes, pieces, root, heaps, release }
    }

    /// Where the result starts in the input's bytes, if it is a part of
    /// the input (not a tuple built of parts).
    pub fn as_part(&self) -> Option<u32> {
        match self.root {
            Piece::Part(Position::Term(at)) => Some(at),
            Piece::Part(_) | Piece::Word(_) | Piece::Tuple { .. } => None,
        }
    }

    /// Writes the result as [`TermRef::write_text`] writes the decoded
    /// term. Bytes that are not a term (the caller's, for a part) are an
    /// error.
    ///
    /// [`TermRef::write_text`]: crate::term::TermRef::write_text
    pub fn write_text(&self, out: &mut impl Write) -> fmt::Result {
        Printer::new(out, true).print(Walked { built: *self, piece: self.root })
    }

    /// Appends the result's encoding, version byte first, to `out`: parts
    /// copied as the input wrote them, the rest as [`etf::encode_for`] the
    /// program's release writes it. On an error `out` is as it was.
    pub fn write_etf(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let len = out.len();
        out.push(etf::VERSION);
        let written = self.write_piece(self.root, out);
        if written.is_err() {
            out.truncate(len);
        }
        written
    }

    /// The result as a term of its own (decoding its parts): for a caller
    /// that wants terms after all.
    pub fn to_term(&self) -> Result<Term, DecodeError> {
        self.piece_term(self.root)
    }

    fn piece_term(&self, piece: Piece) -> Result<Term, DecodeError> {
        match piece {
            Piece::Part(Position::Term(at)) => {
                let mut heap = Heap::new();
                let word = etf::decode_subterm(self.bytes, at as usize, &mut heap)?;
                Ok(heap.view(word).to_owned())
            }
            Piece::Part(position) => {
                let mut encoded = vec![etf::VERSION];
                match write_part(self.bytes, position, &mut encoded, self.release) {
                    Some(()) => etf::decode(&encoded),
                    // (Only positions the engine found in plain bytes
                    // are not terms of their own: never here.)
                    None => etf::decode(self.bytes),
                }
            }
            Piece::Word(word) => Ok(self.heaps.term(word).to_owned()),
            Piece::Tuple { first, arity } => {
                let elements = self.elements(first, arity).unwrap_or_default();
                let elements: Result<Vec<_>, _> =
                    elements.iter().map(|&element| self.piece_term(element)).collect();
                Ok(Term::tuple(elements?))
            }
        }
    }

    fn write_piece(&self, piece: Piece, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match piece {
            Piece::Part(position) => write_part(self.bytes, position, out, self.release)
                .ok_or(EncodeError::PartNotATerm { at: position_byte(position) }),
            Piece::Word(word) => etf::encode_inside(self.heaps.term(word), out, self.release),
            Piece::Tuple { first, arity } => {
                let elements = self.elements(first, arity).unwrap_or_default();
                let arity = elements.len() as u32;
                match u8::try_from(arity) {
                    Ok(small) => out.extend_from_slice(&[tag::SMALL_TUPLE_EXT, small]),
                    Err(_) => {
                        out.push(tag::LARGE_TUPLE_EXT);
                        out.extend_from_slice(&arity.to_be_bytes());
                    }
                }
                // (As deep as the program's body nests tuples: bounded.)
                elements.iter().try_for_each(|&element| self.write_piece(element, out))
            }
        }
    }

    fn elements(&self, first: u32, arity: u32) -> Option<&'a [Piece]> {
        self.pieces.get(first as usize..first.checked_add(arity)? as usize)
    }
}

/// Appends the encoding of the part at `position` of the plain term
/// `bytes` (a word there as `release` writes it): `None` if the bytes are
/// not one.
fn write_part(bytes: &[u8], position: Position, out: &mut Vec<u8>, release: Release) -> Option<()> {
    match position {
        Position::Term(at) => {
            let end = read::plain_end(bytes, at)?;
            out.extend_from_slice(bytes.get(at as usize..end as usize)?);
        }
        Position::ListRest { at, left } => {
            // The rest of a `LIST_EXT`: its elements and its tail follow
            // one another.
            let mut end = at;
            for _ in 0..=left {
                end = read::plain_end(bytes, end)?;
            }
            out.push(tag::LIST_EXT);
            out.extend_from_slice(&left.to_be_bytes());
            out.extend_from_slice(bytes.get(at as usize..end as usize)?);
        }
        Position::StringRest { at, left } => {
            out.push(tag::STRING_EXT);
            out.extend_from_slice(&u16::try_from(left).ok()?.to_be_bytes());
            out.extend_from_slice(bytes.get(at as usize..at.checked_add(left)? as usize)?);
        }
        Position::Word(word) => {
            let heaps = HeapSet::new(&[], &[], &[]);
            etf::encode_inside(heaps.term(word), out, release).ok()?;
        }
    }
    Some(())
}

/// Where `position` is in the bytes.
fn position_byte(position: Position) -> u32 {
    match position {
        Position::Term(at) | Position::ListRest { at, .. } | Position::StringRest { at, .. } => at,
        Position::Word(_) => 0,
    }
}

/// A piece of a [`Built`], as the printer walks it.
#[derive(Clone, Copy)]
struct Walked<'a> {
    built: Built<'a>,
    piece: Piece,
}

/// The elements of a built tuple.
struct Elements<'a> {
    built: Built<'a>,
    pieces: std::slice::Iter<'a, Piece>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Walked<'a>;

    fn next(&mut self) -> Option<Walked<'a>> {
        self.pieces.next().map(|&piece| Walked { built: self.built, piece })
    }
}

impl<'a> Walk<'a> for Walked<'a> {
    type Elements = Elements<'a>;

    fn node(self) -> Node<'a, Self> {
        match self.piece {
            Piece::Tuple { first, arity } => match self.built.elements(first, arity) {
                Some(pieces) => Node::Tuple(Elements { built: self.built, pieces: pieces.iter() }),
                None => Node::Other,
            },
            // Printed whole, by the printer of their kind.
            Piece::Part(_) | Piece::Word(_) => Node::Other,
        }
    }

    fn write_other<W: Write>(
        self,
        printer: &mut Printer<'_, W>,
        _stack: &mut Vec<Task<Self>>,
    ) -> fmt::Result {
        match self.piece {
            Piece::Part(position) => print_part(self.built.bytes, position, printer),
            Piece::Word(word) => printer.print(self.built.heaps.term(word)),
            Piece::Tuple { .. } => Err(fmt::Error),
        }
    }
}
