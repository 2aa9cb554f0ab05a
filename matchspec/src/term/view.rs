//! [`TermRef`]: reading a term, and [`Kind`]: what kind of term it is.

use num_bigint::{BigInt, BigUint, Sign};

use super::heap::{CLOSURE_FIXED, HeapSet};
use super::word::{Header, Word, layout::*};
use super::{Atom, Heap, Term};

/// A term to read: a [`Word`] and the heaps it points into.
///
/// `TermRef` is `Copy` and cheap; it implements [`Display`](std::fmt::Display)
/// (Erlang syntax), [`Eq`]/[`Hash`] (exact equality, `=:=`) and [`Ord`] (the
/// exact total order, see [`TermRef::cmp_exact`]). Erlang's own term order,
/// where `1 == 1.0`, is [`TermRef::cmp_term`].
///
/// ```
/// use matchspec::term::{Kind, Term};
/// let t = Term::parse("{point, 3, 4.5}").unwrap();
/// let Kind::Tuple(tuple) = t.as_ref().kind() else { panic!() };
/// assert_eq!(tuple.len(), 3);
/// assert_eq!(tuple.get(1).and_then(|e| e.as_i64()), Some(3));
/// ```
#[derive(Clone, Copy)]
pub struct TermRef<'a> {
    heaps: HeapSet<'a>,
    word: Word,
}

/// What kind of term a [`TermRef`] is, with its contents.
#[derive(Clone, Copy, Debug)]
pub enum Kind<'a> {
    /// An integer that fits in a word.
    Small(i64),
    /// An integer that does not.
    Big(Big<'a>),
    /// A float.
    Float(f64),
    /// An atom.
    Atom(Atom),
    /// The empty list `[]`.
    Nil,
    /// A list cell `[H | T]`.
    Cons(Cons<'a>),
    /// A tuple.
    Tuple(Tuple<'a>),
    /// A map.
    Map(Map<'a>),
    /// A binary or bitstring.
    Bits(Bits<'a>),
    /// A process identifier.
    Pid(Pid),
    /// A port identifier.
    Port(Port),
    /// A reference.
    Ref(Ref<'a>),
    /// An external fun `fun M:F/A`.
    Export(Export),
    /// A local fun (closure).
    Closure(Closure<'a>),
}

/// A bignum: an integer outside the small range.
#[derive(Clone, Copy, Debug)]
pub struct Big<'a> {
    negative: bool,
    limbs: &'a [Word],
}

/// A cons cell.
#[derive(Clone, Copy, Debug)]
pub struct Cons<'a> {
    heaps: HeapSet<'a>,
    cell: &'a [Word],
}

/// A tuple.
#[derive(Clone, Copy, Debug)]
pub struct Tuple<'a> {
    heaps: HeapSet<'a>,
    elements: &'a [Word],
}

/// A map, keys in ascending exact order.
#[derive(Clone, Copy, Debug)]
pub struct Map<'a> {
    heaps: HeapSet<'a>,
    keys: &'a [Word],
    values: &'a [Word],
    /// Empty, or the sorted position of each key in the order given.
    order: &'a [Word],
}

/// A binary (a whole number of bytes) or bitstring.
#[derive(Clone, Copy, Debug)]
pub struct Bits<'a> {
    bit_len: u64,
    bytes: &'a [u8],
}

/// A process identifier: `<0.80.0>` on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pid {
    /// The node the process lives on.
    pub node: Atom,
    /// Process number.
    pub id: u32,
    /// Serial (wrap-around counter of the number).
    pub serial: u32,
    /// Incarnation of the node.
    pub creation: u32,
}

/// A port identifier: `#Port<0.5>` on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Port {
    /// The node the port lives on.
    pub node: Atom,
    /// Port number.
    pub id: u64,
    /// Incarnation of the node.
    pub creation: u32,
}

/// A reference: `#Ref<0.1.2.3>` on this node.
#[derive(Clone, Copy, Debug)]
pub struct Ref<'a> {
    /// The node that made the reference.
    pub node: Atom,
    /// Incarnation of the node.
    pub creation: u32,
    ids: &'a [Word],
}

/// An external fun `fun Module:Function/Arity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Export {
    /// The module.
    pub module: Atom,
    /// The function.
    pub function: Atom,
    /// The arity.
    pub arity: u8,
}

/// A local fun (closure).
#[derive(Clone, Copy, Debug)]
pub struct Closure<'a> {
    heaps: HeapSet<'a>,
    payload: &'a [Word],
}

/// The place of each kind in Erlang's term order: number < atom < reference
/// < fun < port < pid < tuple < map < nil < list < bitstring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TypeOrder {
    /// Integers and floats.
    Number,
    /// Atoms.
    Atom,
    /// References.
    Reference,
    /// Funs.
    Fun,
    /// Ports.
    Port,
    /// Pids.
    Pid,
    /// Tuples.
    Tuple,
    /// Maps.
    Map,
    /// `[]`.
    Nil,
    /// Non-empty lists.
    List,
    /// Binaries and bitstrings.
    Bitstring,
}

impl<'a> TermRef<'a> {
    /// `word` read through `heaps`.
    #[inline]
    pub fn new(heaps: HeapSet<'a>, word: Word) -> TermRef<'a> {
        TermRef { heaps, word }
    }

    /// The word.
    #[inline]
    pub fn word(self) -> Word {
        self.word
    }

    /// The heaps the word points into.
    #[inline]
    pub fn heaps(self) -> HeapSet<'a> {
        self.heaps
    }

    /// Another word read through the same heaps.
    #[inline]
    pub fn with_word(self, word: Word) -> TermRef<'a> {
        TermRef { heaps: self.heaps, word }
    }

    /// Makes this view read `word` through the same heaps, in place: what
    /// [`with_word`](Self::with_word) gives, without copying the heaps (an
    /// engine handing many results of one run over by reference rewrites
    /// only the word).
    #[inline]
    pub fn set_word(&mut self, word: Word) {
        self.word = word;
    }

    /// Decodes the term's kind and contents.
    #[inline]
    pub fn kind(self) -> Kind<'a> {
        let w = self.word;
        match w.tag() {
            TAG_SMALL => Kind::Small((w.to_bits() as i64) >> TAG_BITS),
            TAG_ATOM => Kind::Atom(Atom::from_index((w.to_bits() >> TAG_BITS) as u32)),
            TAG_CONS => Kind::Cons(Cons { heaps: self.heaps, cell: &self.heaps.cells(w)[..2] }),
            TAG_BOXED => self.boxed_kind(),
            // `NONE` and invalid tags can only come from forged words; read them as `[]`.
            _ => Kind::Nil,
        }
    }

    fn boxed_kind(self) -> Kind<'a> {
        let cells = self.heaps.cells(self.word);
        let header = Header::from_word(cells[0]);
        let size = header.size() as usize;
        match header.kind() {
            HEADER_TUPLE => Kind::Tuple(Tuple { heaps: self.heaps, elements: &cells[1..=size] }),
            HEADER_POS_BIG => Kind::Big(Big { negative: false, limbs: &cells[1..=size] }),
            HEADER_NEG_BIG => Kind::Big(Big { negative: true, limbs: &cells[1..=size] }),
            HEADER_FLOAT => Kind::Float(f64::from_bits(cells[1].to_bits())),
            HEADER_BITS => {
                let bit_len = header.size();
                let n_bytes = bit_len.div_ceil(8) as usize;
                let n_words = n_bytes.div_ceil(8);
                let bytes = &bytemuck::cast_slice::<Word, u8>(&cells[1..=n_words])[..n_bytes];
                Kind::Bits(Bits { bit_len, bytes })
            }
            HEADER_MAP => {
                let n = (header.size() & !MAP_IN_ORDER) as usize;
                let order = if header.size() & MAP_IN_ORDER != 0 {
                    &cells[1 + 2 * n..=3 * n]
                } else {
                    &[][..]
                };
                Kind::Map(Map {
                    heaps: self.heaps,
                    keys: &cells[1..=n],
                    values: &cells[1 + n..=2 * n],
                    order,
                })
            }
            HEADER_PID => Kind::Pid(Pid {
                node: atom_of(cells[1]),
                id: cells[2].to_bits() as u32,
                serial: cells[3].to_bits() as u32,
                creation: cells[4].to_bits() as u32,
            }),
            HEADER_PORT => Kind::Port(Port {
                node: atom_of(cells[1]),
                id: cells[2].to_bits(),
                creation: cells[3].to_bits() as u32,
            }),
            HEADER_REF => Kind::Ref(Ref {
                node: atom_of(cells[1]),
                creation: cells[2].to_bits() as u32,
                ids: &cells[3..3 + size],
            }),
            HEADER_EXPORT => Kind::Export(Export {
                module: atom_of(cells[1]),
                function: atom_of(cells[2]),
                arity: cells[3].to_bits() as u8,
            }),
            HEADER_CLOSURE => {
                Kind::Closure(Closure { heaps: self.heaps, payload: &cells[1..=size] })
            }
            // Only a forged word can point at something that is not a header.
            _ => Kind::Nil,
        }
    }

    /// Where the term sits in Erlang's term order of types.
    pub fn type_order(self) -> TypeOrder {
        match self.kind() {
            Kind::Small(_) | Kind::Big(_) | Kind::Float(_) => TypeOrder::Number,
            Kind::Atom(_) => TypeOrder::Atom,
            Kind::Ref(_) => TypeOrder::Reference,
            Kind::Export(_) | Kind::Closure(_) => TypeOrder::Fun,
            Kind::Port(_) => TypeOrder::Port,
            Kind::Pid(_) => TypeOrder::Pid,
            Kind::Tuple(_) => TypeOrder::Tuple,
            Kind::Map(_) => TypeOrder::Map,
            Kind::Nil => TypeOrder::Nil,
            Kind::Cons(_) => TypeOrder::List,
            Kind::Bits(_) => TypeOrder::Bitstring,
        }
    }

    /// The value of an integer that fits in an `i64`.
    pub fn as_i64(self) -> Option<i64> {
        match self.kind() {
            Kind::Small(v) => Some(v),
            Kind::Big(b) => i64::try_from(b.to_bigint()).ok(),
            _ => None,
        }
    }

    /// The value of any integer.
    pub fn as_bigint(self) -> Option<BigInt> {
        match self.kind() {
            Kind::Small(v) => Some(BigInt::from(v)),
            Kind::Big(b) => Some(b.to_bigint()),
            _ => None,
        }
    }

    /// The atom, if this is one.
    #[inline]
    pub fn as_atom(self) -> Option<Atom> {
        self.word.as_atom()
    }

    /// The value of a float.
    pub fn as_f64(self) -> Option<f64> {
        match self.kind() {
            Kind::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The tuple, if this is one.
    #[inline]
    pub fn as_tuple(self) -> Option<Tuple<'a>> {
        if !self.word.is_boxed() {
            return None;
        }
        let cells = self.heaps.cells(self.word);
        let header = Header::from_word(cells[0]);
        (header.kind() == HEADER_TUPLE)
            .then(|| Tuple { heaps: self.heaps, elements: &cells[1..=header.size() as usize] })
    }

    /// The map, if this is one.
    #[inline]
    pub fn as_map(self) -> Option<Map<'a>> {
        match self.kind() {
            Kind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The binary or bitstring, if this is one.
    pub fn as_bits(self) -> Option<Bits<'a>> {
        match self.kind() {
            Kind::Bits(b) => Some(b),
            _ => None,
        }
    }

    /// The cons cell, if this is one.
    #[inline]
    pub fn as_cons(self) -> Option<Cons<'a>> {
        self.word
            .is_cons()
            .then(|| Cons { heaps: self.heaps, cell: &self.heaps.cells(self.word)[..2] })
    }

    /// Is this `[]`?
    #[inline]
    pub fn is_nil(self) -> bool {
        self.word.is_nil()
    }

    /// Is this an integer (small or big)?
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Small(_) | Kind::Big(_))
    }

    /// Is this an integer or a float?
    pub fn is_number(self) -> bool {
        matches!(self.kind(), Kind::Small(_) | Kind::Big(_) | Kind::Float(_))
    }

    /// The elements of a list, front to back, and what ends it (`[]` for a
    /// proper list). Walks iteratively, so any length is fine.
    pub fn list_items(self) -> ListItems<'a> {
        ListItems { rest: self }
    }

    /// The elements of a proper list, or `None` if this is not one.
    pub fn proper_list(self) -> Option<Vec<TermRef<'a>>> {
        let mut items = self.list_items();
        let elements: Vec<TermRef<'a>> = items.by_ref().collect();
        items.tail().is_nil().then_some(elements)
    }

    /// The length of a proper list, or `None` if this is not one.
    pub fn list_len(self) -> Option<usize> {
        let mut items = self.list_items();
        let n = items.by_ref().count();
        items.tail().is_nil().then_some(n)
    }

    /// Copies the term into a fresh [`Term`] that owns its heap.
    pub fn to_owned(self) -> Term {
        let mut heap = Heap::new();
        let root = super::copy::copy_into(self, &mut heap);
        Term::from_parts(heap, root)
    }

    /// Displays the term with every list and binary printed as its
    /// elements, as `~w` does (`[104,105]`, not `"hi"`; `<<104,105>>`, not
    /// `<<"hi">>`).
    pub fn without_strings(self) -> super::display::WithoutStrings<'a> {
        super::display::WithoutStrings(self)
    }

    /// Copies the term into `heap` and returns its word there (immediates
    /// are returned as they are).
    #[inline]
    pub fn copy_to(self, heap: &mut Heap) -> Word {
        super::copy::copy_into(self, heap)
    }
}

fn atom_of(word: Word) -> Atom {
    word.as_atom().unwrap_or(Atom::UNDEFINED)
}

/// Iterator over the elements of a list; see [`TermRef::list_items`].
#[derive(Clone, Debug)]
pub struct ListItems<'a> {
    rest: TermRef<'a>,
}

impl<'a> ListItems<'a> {
    /// What is left: after the iterator is done, the tail of the list (`[]`
    /// for a proper list, anything else for an improper one).
    pub fn tail(&self) -> TermRef<'a> {
        self.rest
    }
}

impl<'a> Iterator for ListItems<'a> {
    type Item = TermRef<'a>;

    fn next(&mut self) -> Option<TermRef<'a>> {
        let cons = self.rest.as_cons()?;
        self.rest = cons.tail();
        Some(cons.head())
    }
}

impl<'a> Big<'a> {
    /// Is the value negative?
    pub fn is_negative(self) -> bool {
        self.negative
    }

    /// The 64-bit limbs of the magnitude, least significant first.
    pub fn limbs(self) -> impl ExactSizeIterator<Item = u64> + DoubleEndedIterator + 'a {
        self.limbs.iter().map(|w| w.to_bits())
    }

    /// The value.
    pub fn to_bigint(self) -> BigInt {
        let mut bytes = Vec::with_capacity(self.limbs.len() * 8);
        for limb in self.limbs() {
            bytes.extend_from_slice(&limb.to_le_bytes());
        }
        let sign = if self.negative { Sign::Minus } else { Sign::Plus };
        BigInt::from_biguint(sign, BigUint::from_bytes_le(&bytes))
    }
}

impl<'a> Cons<'a> {
    /// The head.
    #[inline]
    pub fn head(self) -> TermRef<'a> {
        TermRef::new(self.heaps, self.cell[0])
    }

    /// The tail.
    #[inline]
    pub fn tail(self) -> TermRef<'a> {
        TermRef::new(self.heaps, self.cell[1])
    }
}

impl<'a> Tuple<'a> {
    /// Number of elements.
    #[inline]
    pub fn len(self) -> usize {
        self.elements.len()
    }

    /// Is this `{}`?
    #[inline]
    pub fn is_empty(self) -> bool {
        self.elements.is_empty()
    }

    /// Element `index`, 0-based (Erlang's `element/2` is 1-based).
    #[inline]
    pub fn get(self, index: usize) -> Option<TermRef<'a>> {
        self.elements.get(index).map(|&w| TermRef::new(self.heaps, w))
    }

    /// The elements.
    pub fn iter(self) -> impl ExactSizeIterator<Item = TermRef<'a>> + DoubleEndedIterator + 'a {
        let heaps = self.heaps;
        self.elements.iter().map(move |&w| TermRef::new(heaps, w))
    }

    /// The element words.
    #[inline]
    pub fn words(self) -> &'a [Word] {
        self.elements
    }
}

impl<'a> Map<'a> {
    /// Number of keys.
    #[inline]
    pub fn len(self) -> usize {
        self.keys.len()
    }

    /// Is this `#{}`?
    #[inline]
    pub fn is_empty(self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, ascending in exact order.
    pub fn keys(self) -> impl ExactSizeIterator<Item = TermRef<'a>> + DoubleEndedIterator + 'a {
        let heaps = self.heaps;
        self.keys.iter().map(move |&w| TermRef::new(heaps, w))
    }

    /// The values, in the order of their keys.
    pub fn values(self) -> impl ExactSizeIterator<Item = TermRef<'a>> + DoubleEndedIterator + 'a {
        let heaps = self.heaps;
        self.values.iter().map(move |&w| TermRef::new(heaps, w))
    }

    /// The pairs, ascending by key.
    pub fn iter(
        self,
    ) -> impl ExactSizeIterator<Item = (TermRef<'a>, TermRef<'a>)> + DoubleEndedIterator + 'a {
        self.keys().zip(self.values())
    }

    /// The key words.
    #[inline]
    pub(crate) fn key_words(self) -> &'a [Word] {
        self.keys
    }

    /// The value words.
    #[inline]
    pub(crate) fn value_words(self) -> &'a [Word] {
        self.values
    }

    /// The (key, value) pairs in the order the keys were given in when the
    /// map was read from text or decoded (the order ERTS laid them out in,
    /// if ERTS wrote them), else ascending.
    pub fn in_order(self) -> impl ExactSizeIterator<Item = (TermRef<'a>, TermRef<'a>)> + 'a {
        let heaps = self.heaps;
        let (keys, values, order) = (self.keys, self.values, self.order);
        (0..keys.len()).map(move |i| {
            let j = order.get(i).map_or(i, |w| w.to_bits() as usize).min(keys.len() - 1);
            (TermRef::new(heaps, keys[j]), TermRef::new(heaps, values[j]))
        })
    }

    /// The positions (in ascending key order) of the keys in the order the
    /// map remembers (ascending if it remembers none).
    pub(crate) fn own_order_positions(self) -> impl ExactSizeIterator<Item = usize> + 'a {
        let (n, order) = (self.keys.len(), self.order);
        (0..n)
            .map(move |i| order.get(i).map_or(i, |w| w.to_bits() as usize).min(n.saturating_sub(1)))
    }

    /// Does the map remember the order its keys were given in?
    pub fn has_own_order(self) -> bool {
        !self.order.is_empty()
    }

    /// The value of the key exactly equal (`=:=`) to `key`.
    pub fn get(self, key: TermRef<'_>) -> Option<TermRef<'a>> {
        // Immediates are equal exactly when their words are, which is the
        // common case (atom and small integer keys) and needs no ordering.
        if key.word().is_immediate() && self.keys.len() <= 8 {
            let i = self.keys.iter().position(|&k| k == key.word())?;
            return Some(TermRef::new(self.heaps, self.values[i]));
        }
        let i =
            self.keys.binary_search_by(|&k| TermRef::new(self.heaps, k).cmp_exact(&key)).ok()?;
        Some(TermRef::new(self.heaps, self.values[i]))
    }
}

impl<'a> Bits<'a> {
    /// Length in bits.
    #[inline]
    pub fn bit_len(self) -> u64 {
        self.bit_len
    }

    /// Length in whole or partial bytes (`byte_size/1`).
    #[inline]
    pub fn byte_len(self) -> usize {
        self.bytes.len()
    }

    /// Is this a binary (a whole number of bytes)?
    #[inline]
    pub fn is_binary(self) -> bool {
        self.bit_len.is_multiple_of(8)
    }

    /// The bytes; in a bitstring the last byte holds the trailing bits in its
    /// most significant bits and zeros below.
    #[inline]
    pub fn bytes(self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a> Ref<'a> {
    /// The id words, least significant first (as in the external term format).
    pub fn ids(self) -> impl ExactSizeIterator<Item = u32> + DoubleEndedIterator + 'a {
        self.ids.iter().map(|w| w.to_bits() as u32)
    }
}

impl<'a> Closure<'a> {
    /// Number of arguments the fun takes.
    pub fn arity(self) -> u8 {
        self.payload[0].to_bits() as u8
    }

    /// The defining module.
    pub fn module(self) -> Atom {
        atom_of(self.payload[1])
    }

    /// Index in the module's fun table.
    pub fn index(self) -> u32 {
        self.payload[2].to_bits() as u32
    }

    /// Old-style index.
    pub fn old_index(self) -> u32 {
        self.payload[3].to_bits() as u32
    }

    /// Old-style uniq.
    pub fn old_uniq(self) -> u32 {
        self.payload[4].to_bits() as u32
    }

    /// The 16-byte MD5 of the defining module.
    pub fn uniq(self) -> [u8; 16] {
        let hi = u128::from(self.payload[5].to_bits()) << 64;
        (hi | u128::from(self.payload[6].to_bits())).to_be_bytes()
    }

    /// The pid of the creating process.
    pub fn pid(self) -> TermRef<'a> {
        TermRef::new(self.heaps, self.payload[7])
    }

    /// The captured free variables.
    pub fn free(self) -> impl ExactSizeIterator<Item = TermRef<'a>> + DoubleEndedIterator + 'a {
        let heaps = self.heaps;
        self.payload[CLOSURE_FIXED..].iter().map(move |&w| TermRef::new(heaps, w))
    }
}

impl std::fmt::Debug for TermRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TermRef({self})")
    }
}
