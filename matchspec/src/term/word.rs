//! The tagged 64-bit [`Word`]: one Erlang term, or a pointer to one.
//!
//! This file is the ABI shared by the interpreter and the JIT: the JIT emits
//! machine code that tests tags and unpacks words with exactly the shifts and
//! masks defined here, so every constant is `pub` and documented.
//!
//! ```text
//!  63                                              5 4 3 2 1 0
//! +-------------------------------------------------+---+-----+
//! | signed value (61 bits)                          |    000  |  small integer
//! | atom index (bits 3..35)                         |    001  |  atom
//! | word offset into the space (59 bits)            |spc| 010 |  cons cell -> [head, tail]
//! | word offset into the space (59 bits)            |spc| 011 |  boxed -> [header, payload...]
//! | 0                                               |    100  |  [] (nil)
//! | 0                                               |    111  |  NONE (no term; never user visible)
//! +-------------------------------------------------+---+-----+
//! ```
//!
//! Small integers keep their value in the top 61 bits, so two small words can
//! be added or subtracted as plain machine integers and the result is again a
//! small word (overflow is detected by the CPU's overflow flag). Pointers are
//! not machine addresses but word offsets into one of a few *spaces* (see
//! [`Space`]): the caller's heap, the compiled program's literals and the
//! per-run scratch heap. That keeps the interpreter free of `unsafe` and lets
//! the JIT bounds-check every access against the length of its space.

use bytemuck::{Pod, Zeroable};

/// One tagged machine word: an immediate term (small integer, atom, `[]`) or a
/// pointer to a cons cell or a boxed object in a [`Heap`](crate::term::Heap).
///
/// A `Word` on its own is only meaningful together with the heap(s) it points
/// into; read it through a [`TermRef`](crate::term::TermRef). Words of
/// immediates are the same in every heap, so they can be compared directly:
/// two atoms are equal exactly when their words are equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct Word(u64);

/// The address spaces a pointer word can point into.
///
/// A run of a compiled match spec reads terms from three places at once: the
/// input (in the caller's [`Heap`](crate::term::Heap)), the literals of the
/// compiled program, and the terms the run builds. Each pointer word names
/// its space in two bits, so results can share structure with all three
/// without copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Space {
    /// A heap built by the caller: parsed, decoded or constructed terms.
    Heap = 0,
    /// The literals of a compiled program.
    Literal = 1,
    /// Terms built while a program runs (reset before every run).
    Scratch = 2,
}

impl Space {
    /// Number of spaces a [`HeapSet`](crate::term::HeapSet) has a slot for.
    pub const COUNT: usize = 3;

    /// Decodes the two space bits of a pointer word.
    #[inline]
    pub(crate) fn from_bits(bits: u64) -> Option<Space> {
        match bits {
            0 => Some(Space::Heap),
            1 => Some(Space::Literal),
            2 => Some(Space::Scratch),
            _ => None,
        }
    }
}

/// Bit layout constants. The JIT's inline code uses these and nothing else.
pub mod layout {
    /// Number of tag bits at the bottom of every word.
    pub const TAG_BITS: u32 = 3;
    /// Mask selecting the tag bits.
    pub const TAG_MASK: u64 = 0b111;
    /// Tag of a small integer.
    pub const TAG_SMALL: u64 = 0b000;
    /// Tag of an atom.
    pub const TAG_ATOM: u64 = 0b001;
    /// Tag of a pointer to a cons cell (two words: head, tail).
    pub const TAG_CONS: u64 = 0b010;
    /// Tag of a pointer to a boxed object (a header word, then payload).
    pub const TAG_BOXED: u64 = 0b011;
    /// The whole word of `[]`.
    pub const NIL: u64 = 0b100;
    /// The whole word of "no term" (a failed computation, an empty slot).
    pub const NONE: u64 = 0b111;

    /// Shift of the space number in a pointer word.
    pub const SPACE_SHIFT: u32 = 3;
    /// Mask of the space number after shifting.
    pub const SPACE_MASK: u64 = 0b11;
    /// Shift of the word offset in a pointer word.
    pub const OFFSET_SHIFT: u32 = 5;
    /// Largest offset a pointer word can hold.
    pub const MAX_OFFSET: u64 = (1 << (64 - OFFSET_SHIFT)) - 1;

    /// Smallest small integer; anything below is a bignum.
    pub const MIN_SMALL: i64 = -(1 << 60);
    /// Largest small integer; anything above is a bignum.
    pub const MAX_SMALL: i64 = (1 << 60) - 1;

    /// Number of kind bits at the bottom of a header word.
    pub const HEADER_KIND_BITS: u32 = 6;
    /// Mask selecting the kind of a header word.
    pub const HEADER_KIND_MASK: u64 = (1 << HEADER_KIND_BITS) - 1;
    /// Header kind of a tuple; the size field is the arity.
    pub const HEADER_TUPLE: u64 = 0;
    /// Header kind of a non-negative bignum; the size is the number of 64-bit limbs.
    pub const HEADER_POS_BIG: u64 = 1;
    /// Header kind of a negative bignum; the size is the number of 64-bit limbs.
    pub const HEADER_NEG_BIG: u64 = 2;
    /// Header kind of a float; one payload word holds the IEEE 754 bits.
    pub const HEADER_FLOAT: u64 = 3;
    /// The whole header word of every float (a one-word payload).
    pub const FLOAT_HEADER: u64 = (1 << HEADER_KIND_BITS) | HEADER_FLOAT;
    /// Header kind of a binary or bitstring; the size is the length in bits.
    pub const HEADER_BITS: u64 = 4;
    /// Header kind of a map; the size is the number of keys. The payload is
    /// the keys in ascending [exact order](crate::term::TermRef::cmp_exact),
    /// then the values in the same order. If [`MAP_IN_ORDER`] is set in the
    /// size, there follow as many raw words giving the keys' original order
    /// (see [`Map::in_order`](crate::term::Map::in_order)).
    pub const HEADER_MAP: u64 = 5;
    /// The bit of a map header's size field that says the map remembers the
    /// order its keys were given in.
    pub const MAP_IN_ORDER: u64 = 1 << 56;
    /// Header kind of a pid; payload `[node atom, id, serial, creation]`.
    pub const HEADER_PID: u64 = 6;
    /// Header kind of a port; payload `[node atom, id, creation]`.
    pub const HEADER_PORT: u64 = 7;
    /// Header kind of a reference; the size is the number of 32-bit id words.
    /// Payload `[node atom, creation, id words...]`.
    pub const HEADER_REF: u64 = 8;
    /// Header kind of an external fun `fun M:F/A`; payload `[module atom,
    /// function atom, arity]`.
    pub const HEADER_EXPORT: u64 = 9;
    /// Header kind of a local fun (closure); the size is the payload length.
    pub const HEADER_CLOSURE: u64 = 10;

    /// The header word of a tuple of `arity` elements.
    #[inline]
    pub const fn tuple_header(arity: u64) -> u64 {
        (arity << HEADER_KIND_BITS) | HEADER_TUPLE
    }
}

use layout::*;

impl Word {
    /// The empty list `[]`.
    pub const NIL: Word = Word(NIL);
    /// "No term": marks an empty slot or a failed computation. Never part of
    /// a term a caller can see.
    pub const NONE: Word = Word(NONE);

    /// The raw bits, for the JIT and for hashing.
    #[inline]
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// Rebuilds a word from raw bits.
    ///
    /// Nothing checks that the bits make sense: a made-up pointer word may
    /// point past the end of its heap, and reading it then panics (it is never
    /// undefined behaviour). Only the JIT and tests need this.
    #[inline]
    pub const fn from_bits(bits: u64) -> Word {
        Word(bits)
    }

    /// The small integer `value`, or `None` if it is outside
    /// [`MIN_SMALL`]`..=`[`MAX_SMALL`] (such integers are boxed bignums).
    #[inline]
    pub const fn small(value: i64) -> Option<Word> {
        if value >= MIN_SMALL && value <= MAX_SMALL {
            Some(Word((value << TAG_BITS) as u64))
        } else {
            None
        }
    }

    /// The small integer `value`, which the caller knows is in range.
    #[inline]
    pub(crate) const fn small_unchecked(value: i64) -> Word {
        debug_assert!(value >= MIN_SMALL && value <= MAX_SMALL);
        Word((value << TAG_BITS) as u64)
    }

    /// The atom `atom`.
    #[inline]
    pub const fn atom(atom: crate::term::Atom) -> Word {
        Word(((atom.index() as u64) << TAG_BITS) | TAG_ATOM)
    }

    /// A pointer word with tag `tag` to `offset` in `space`.
    #[inline]
    pub(crate) const fn pointer(tag: u64, space: Space, offset: usize) -> Word {
        Word(((offset as u64) << OFFSET_SHIFT) | ((space as u64) << SPACE_SHIFT) | tag)
    }

    /// The tag bits.
    #[inline]
    pub const fn tag(self) -> u64 {
        self.0 & TAG_MASK
    }

    /// Is this a small integer?
    #[inline]
    pub const fn is_small(self) -> bool {
        self.tag() == TAG_SMALL
    }

    /// The value of a small integer word, if it is one.
    #[inline]
    pub const fn as_small(self) -> Option<i64> {
        if self.is_small() { Some((self.0 as i64) >> TAG_BITS) } else { None }
    }

    /// The atom of an atom word, if it is one.
    #[inline]
    pub fn as_atom(self) -> Option<crate::term::Atom> {
        if self.tag() == TAG_ATOM {
            Some(crate::term::Atom::from_index((self.0 >> TAG_BITS) as u32))
        } else {
            None
        }
    }

    /// Is this `[]`?
    #[inline]
    pub const fn is_nil(self) -> bool {
        self.0 == NIL
    }

    /// Is this the "no term" marker?
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == NONE
    }

    /// Is this a pointer to a cons cell?
    #[inline]
    pub const fn is_cons(self) -> bool {
        self.tag() == TAG_CONS
    }

    /// Is this a pointer to a boxed object?
    #[inline]
    pub const fn is_boxed(self) -> bool {
        self.tag() == TAG_BOXED
    }

    /// Is this an immediate (small, atom, `[]`), equal to another term exactly
    /// when the words are equal?
    #[inline]
    pub const fn is_immediate(self) -> bool {
        !self.is_cons() && !self.is_boxed()
    }

    /// Space and word offset of a pointer word.
    #[inline]
    pub(crate) fn target(self) -> (Space, usize) {
        debug_assert!(self.is_cons() || self.is_boxed());
        // An invalid space number can only come from `from_bits`; map it to a
        // space whose lookups then fail the bounds check instead of
        // misbehaving.
        let space =
            Space::from_bits((self.0 >> SPACE_SHIFT) & SPACE_MASK).unwrap_or(Space::Scratch);
        (space, (self.0 >> OFFSET_SHIFT) as usize)
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.tag() {
            TAG_SMALL => write!(f, "Word(small {})", (self.0 as i64) >> TAG_BITS),
            TAG_ATOM => write!(f, "Word(atom #{})", self.0 >> TAG_BITS),
            TAG_CONS | TAG_BOXED => {
                let kind = if self.is_cons() { "cons" } else { "boxed" };
                let space = (self.0 >> SPACE_SHIFT) & SPACE_MASK;
                write!(f, "Word({kind} space {space} @{})", self.0 >> OFFSET_SHIFT)
            }
            _ if self.is_nil() => f.write_str("Word([])"),
            _ if self.is_none() => f.write_str("Word(NONE)"),
            _ => write!(f, "Word({:#x})", self.0),
        }
    }
}

/// A header word of a boxed object: a kind and a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header(u64);

impl Header {
    #[inline]
    pub(crate) const fn new(kind: u64, size: u64) -> Header {
        Header((size << HEADER_KIND_BITS) | kind)
    }

    #[inline]
    pub(crate) const fn from_word(word: Word) -> Header {
        Header(word.0)
    }

    #[inline]
    pub(crate) const fn to_word(self) -> Word {
        Word(self.0)
    }

    #[inline]
    pub(crate) const fn kind(self) -> u64 {
        self.0 & HEADER_KIND_MASK
    }

    #[inline]
    pub(crate) const fn size(self) -> u64 {
        self.0 >> HEADER_KIND_BITS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_round_trip_and_bounds() {
        for v in [0, 1, -1, 42, MIN_SMALL, MAX_SMALL] {
            assert_eq!(Word::small(v).and_then(Word::as_small), Some(v));
        }
        assert_eq!(Word::small(MAX_SMALL + 1), None);
        assert_eq!(Word::small(MIN_SMALL - 1), None);
    }

    #[test]
    fn tagged_small_addition_is_machine_addition() {
        let (a, b) = (Word::small(40).unwrap(), Word::small(2).unwrap());
        assert_eq!(Word::from_bits(a.to_bits().wrapping_add(b.to_bits())).as_small(), Some(42));
    }

    #[test]
    fn pointer_fields() {
        let w = Word::pointer(TAG_BOXED, Space::Literal, 12345);
        assert!(w.is_boxed() && !w.is_immediate());
        assert_eq!(w.target(), (Space::Literal, 12345));
    }
}
