//! What the ops of a table program do on *encoded* terms: the one
//! definition the byte engines lower.
//!
//! A filter over external term format spends most of its time decoding
//! terms that the spec then rejects, or of which it keeps one part. On the
//! bytes, a term is a [`Position`] in them, and the spec's own IR runs on
//! positions: a head test reads a tag, a tuple's arity or an atom's text in
//! place; a guard compares an encoded integer with a constant; a result
//! that is a part of the input stays a position. A term is decoded only
//! where an op needs its value as a word (a body that builds, a guard
//! function without a reading here), and then only that part.
//! [`ir::Encoded`](crate::ir::Encoded) says which registers hold positions;
//! this module says what each op does with them:
//!
//! * [`read`]: the parts of a term (tuple elements, list cells, map
//!   values) and what guard functions read (sizes, lengths, type tests);
//! * [`order`]: `=:=`, `==` and the term order between an encoded term and
//!   a word, or two encoded terms.
//!
//! Every reading answers `None` where the bytes alone do not settle it;
//! the engine then decodes the operands and runs the op on words, so the
//! answer is always the decoded term's.
//!
//! ```
//! use matchspec::encoded::{Position, order, read};
//! use matchspec::{etf, term::Term};
//!
//! let bytes = etf::encode(Term::parse("{event, 42, <<\"ok\">>}")?.as_ref())?;
//! // A 3-tuple whose first element starts at byte 3.
//! let (arity, first) = read::tuple(&bytes, Position::INPUT).flatten().unwrap();
//! assert_eq!((arity, first), (3, 3));
//! let second = read::element(&bytes, first, 1).unwrap();
//! let answer = Term::parse("42")?;
//! assert_eq!(order::eq_exact(&bytes, Position::Term(second), answer.as_ref()), Some(true));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Plain terms
//!
//! The engines run on bytes only for *plain* terms ([`etf::scan`]'s
//! subset: integers of up to 32 bits, finite floats, atoms, `[]`,
//! strings, lists, tuples, binaries, pids and maps of up to 32 integer or
//! ASCII atom keys), checked once per term by a scan that builds nothing.
//! On them every term decodes without error and each encoding is of
//! exactly one term, so a reading is the decoded term's. Any other term is
//! decoded whole and run as before: the decoder then gives its value or
//! its error.
//!
//! [`etf::scan`]: crate::etf

pub mod built;
pub mod order;
pub mod print;
pub mod read;

use crate::term::Word;

/// An encoded term: where it is in the bytes of the input.
///
/// Most are the term whose tag is at a byte. A list's tail is not a term
/// of its own in the encoding (`LIST_EXT` writes the elements one after
/// another, then the tail), so the cells after a list's first are
/// positions of their own kind; a string's characters are small integers
/// no tag introduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// The term whose tag is at this byte.
    Term(u32),
    /// The cells of a `LIST_EXT` from one of its elements on: `left` (at
    /// least one) elements, the first at byte `at`, then the list's tail.
    ListRest {
        /// Where the next element starts.
        at: u32,
        /// How many elements are left.
        left: u32,
    },
    /// The cells of a `STRING_EXT` from one of its characters on: `left`
    /// (at least one) characters from byte `at`, then `[]`.
    StringRest {
        /// Where the next character is.
        at: u32,
        /// How many characters are left.
        left: u32,
    },
    /// An immediate that no tag writes: a string's character or the `[]`
    /// that ends it.
    Word(Word),
}

impl Position {
    /// The whole input: its tag follows the version byte.
    pub const INPUT: Position = Position::Term(1);
}
