//! [`Heap`]: the arena that boxed terms and cons cells live in.
//!
//! A heap is a `Vec` of [`Word`]s. Building a term appends its cells and
//! returns a word that points at them; nothing is ever freed on its own,
//! the whole heap is dropped (or [cleared](Heap::clear)) at once. That makes
//! building cheap, dropping a term of any depth trivial, and gives the JIT a
//! flat array it can index with inline code.
//!
//! Object layouts (the header kinds are in [`layout`]):
//!
//! ```text
//! cons      [head, tail]
//! tuple     [header(arity), e1, ..., en]
//! bignum    [header(limbs, sign), limb0 (least significant), ...]
//! float     [header, f64 bits]
//! bits      [header(bit length), bytes packed 8 per word, unused bits zero]
//! map       [header(n), k1..kn ascending in exact order, v1..vn]
//! pid       [header, node atom, id, serial, creation]
//! port      [header, node atom, id, creation]
//! ref       [header(n), node atom, creation, id word 0, ..., id word n-1]
//! export    [header, module atom, function atom, arity]
//! closure   [header(len), arity, module atom, index, old index, old uniq,
//!            uniq high, uniq low, pid, free variable count, free variables...]
//! ```

use num_bigint::{BigInt, Sign};

use super::word::{Header, Space, Word, layout::*};
use super::{Atom, TermRef};

/// An arena of terms. See the [module documentation](mod@crate::term).
///
/// Words returned by one heap's builders point into that heap and may only
/// be used with it (as children of other terms built in it, or read through
/// [`Heap::view`]). Immediates ([`Word::small`], atoms, [`Word::NIL`]) are
/// valid in every heap.
///
/// ```
/// use matchspec::term::{Atom, Heap, Word};
/// let mut heap = Heap::new();
/// let one = heap.int(1);
/// let name = heap.binary(b"x");
/// let list = heap.list(&[one, Word::NIL]);
/// let t = heap.tuple(&[Word::atom(Atom::OK), list, name]);
/// assert_eq!(heap.view(t).to_string(), "{ok,[1,[]],<<\"x\">>}");
/// ```
#[derive(Clone)]
pub struct Heap {
    space: Space,
    words: Vec<Word>,
}

/// The heaps a set of words may point into, one per [`Space`]: what a
/// [`TermRef`] needs to read a term.
#[derive(Clone, Copy)]
pub struct HeapSet<'a> {
    /// One slice per space, plus an empty fourth that the unused space
    /// number maps to, so decoding a pointer needs no branch.
    spaces: [&'a [Word]; 4],
}

impl Default for Heap {
    fn default() -> Heap {
        Heap::new()
    }
}

impl std::fmt::Debug for Heap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heap")
            .field("space", &self.space)
            .field("words", &self.words.len())
            .finish()
    }
}

impl Heap {
    /// An empty heap.
    #[inline]
    pub fn new() -> Heap {
        Heap::in_space(Space::Heap)
    }

    /// An empty heap with room for `words` words.
    #[inline]
    pub fn with_capacity(words: usize) -> Heap {
        Heap { space: Space::Heap, words: Vec::with_capacity(words) }
    }

    /// An empty heap whose pointers name `space`: for a term built around
    /// parts of terms that live elsewhere (see [`HeapSet::with`]).
    #[inline]
    pub fn in_space(space: Space) -> Heap {
        Heap { space, words: Vec::new() }
    }

    /// The space this heap's pointers name.
    pub fn space(&self) -> Space {
        self.space
    }

    /// Number of words in use.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// How many words the heap can hold before it grows.
    pub fn capacity(&self) -> usize {
        self.words.capacity()
    }

    /// Is the heap empty?
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The words of the heap (for the JIT, which reads them in place).
    pub fn words(&self) -> &[Word] {
        &self.words
    }

    /// Forgets every term; words built before become dangling.
    #[inline]
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// Drops the words from `len` on (undoing what was built since).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.words.truncate(len);
    }

    /// Reads `word` (built in this heap) as a term.
    #[inline]
    pub fn view(&self, word: Word) -> TermRef<'_> {
        TermRef::new(HeapSet::single(self), word)
    }

    // ---- Low-level allocation ------------------------------------------------

    /// Appends `n` zero words and returns the offset of the first.
    #[inline]
    pub(crate) fn alloc(&mut self, n: usize) -> usize {
        let at = self.words.len();
        self.words.resize(at + n, Word::from_bits(0));
        at
    }

    /// Appends `words` and returns the offset of the first.
    #[inline]
    pub(crate) fn append(&mut self, words: &[Word]) -> usize {
        let at = self.words.len();
        self.words.extend_from_slice(words);
        at
    }

    /// Keeps exactly the first `n` words: drops the others, or appends zero
    /// words up to `n`.
    #[inline]
    pub(crate) fn keep_first(&mut self, n: usize) {
        if self.words.len() >= n {
            self.words.truncate(n);
        } else {
            self.words.resize(n, Word::from_bits(0));
        }
    }

    /// The address of the first word (it moves when the heap grows).
    #[inline]
    pub(crate) fn address(&mut self) -> *mut Word {
        self.words.as_mut_ptr()
    }

    #[inline]
    pub(crate) fn set(&mut self, offset: usize, word: Word) {
        self.words[offset] = word;
    }

    #[inline]
    pub(crate) fn push(&mut self, word: Word) {
        self.words.push(word);
    }

    #[inline]
    fn next_offset(&self) -> usize {
        self.words.len()
    }

    #[inline]
    pub(crate) fn boxed_at(&self, offset: usize) -> Word {
        Word::pointer(TAG_BOXED, self.space, offset)
    }

    #[inline]
    pub(crate) fn cons_at(&self, offset: usize) -> Word {
        Word::pointer(TAG_CONS, self.space, offset)
    }

    // ---- Builders --------------------------------------------------------------

    /// The integer `value`: a small word, or a bignum if it does not fit.
    pub fn int(&mut self, value: i64) -> Word {
        match Word::small(value) {
            Some(w) => w,
            None => self.big_from_parts(value < 0, &[value.unsigned_abs()]),
        }
    }

    /// The integer `value`: a small word, or a bignum if it does not fit.
    pub fn int128(&mut self, value: i128) -> Word {
        let magnitude = value.unsigned_abs();
        self.big_from_parts(value < 0, &[magnitude as u64, (magnitude >> 64) as u64])
    }

    /// The integer `value` (any size).
    pub fn bigint(&mut self, value: &BigInt) -> Word {
        if let Ok(small) = i64::try_from(value) {
            return self.int(small);
        }
        let (sign, limbs) = value.to_u64_digits();
        self.big_from_parts(sign == Sign::Minus, &limbs)
    }

    /// The integer with magnitude `limbs` (least significant first), negated
    /// if `negative`. Normalises: trailing zero limbs are dropped and values in
    /// the small range become small words.
    pub(crate) fn big_from_parts(&mut self, negative: bool, limbs: &[u64]) -> Word {
        let len = limbs.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1);
        let limbs = &limbs[..len];
        match limbs {
            [] => return Word::small_unchecked(0),
            [one] if *one <= MAX_SMALL as u64 => {
                let v = *one as i64;
                return Word::small_unchecked(if negative { -v } else { v });
            }
            [one] if negative && *one == MIN_SMALL.unsigned_abs() => {
                return Word::small_unchecked(MIN_SMALL);
            }
            _ => {}
        }
        let kind = if negative { HEADER_NEG_BIG } else { HEADER_POS_BIG };
        let at = self.next_offset();
        self.push(Header::new(kind, limbs.len() as u64).to_word());
        self.words.extend(limbs.iter().map(|&l| Word::from_bits(l)));
        self.boxed_at(at)
    }

    /// The float `value`.
    ///
    /// # Panics
    ///
    /// If `value` is NaN or infinite (Erlang has no such floats); use
    /// [`Heap::try_float`] for values from outside.
    #[track_caller]
    pub fn float(&mut self, value: f64) -> Word {
        self.try_float(value).expect("Erlang floats are finite")
    }

    /// The float `value`, or `None` if it is NaN or infinite.
    pub fn try_float(&mut self, value: f64) -> Option<Word> {
        if !value.is_finite() {
            return None;
        }
        let at = self.next_offset();
        self.push(Header::new(HEADER_FLOAT, 1).to_word());
        self.push(Word::from_bits(value.to_bits()));
        Some(self.boxed_at(at))
    }

    /// The tuple of `elements`.
    #[inline]
    pub fn tuple(&mut self, elements: &[Word]) -> Word {
        let at = self.next_offset();
        self.push(Word::from_bits(tuple_header(elements.len() as u64)));
        self.words.extend_from_slice(elements);
        self.boxed_at(at)
    }

    /// The tuple of the words `elements` yields.
    pub(crate) fn tuple_from_iter(
        &mut self,
        elements: impl ExactSizeIterator<Item = Word>,
    ) -> Word {
        let at = self.next_offset();
        self.push(Word::from_bits(tuple_header(elements.len() as u64)));
        self.words.extend(elements);
        self.boxed_at(at)
    }

    /// The proper list of the words `elements` yields.
    pub(crate) fn list_from_iter(&mut self, elements: impl ExactSizeIterator<Item = Word>) -> Word {
        let n = elements.len();
        if n == 0 {
            return Word::NIL;
        }
        let at = self.alloc(2 * n);
        for (i, e) in elements.enumerate() {
            let cell = at + 2 * i;
            self.words[cell] = e;
            self.words[cell + 1] = if i + 1 < n { self.cons_at(cell + 2) } else { Word::NIL };
        }
        self.cons_at(at)
    }

    /// A tuple of `arity` elements, all `[]` for now; fill them in with
    /// [`Heap::set_element`]. Useful to build a tuple whose elements are not
    /// known yet without a temporary vector.
    pub fn tuple_uninit(&mut self, arity: usize) -> Word {
        let at = self.next_offset();
        self.push(Word::from_bits(tuple_header(arity as u64)));
        self.words.resize(at + 1 + arity, Word::NIL);
        self.boxed_at(at)
    }

    /// Sets element `index` (0-based) of a tuple built by this heap.
    ///
    /// # Panics
    ///
    /// If `tuple` is not a tuple of this heap or `index` is out of range.
    #[track_caller]
    pub fn set_element(&mut self, tuple: Word, index: usize, value: Word) {
        assert!(tuple.is_boxed(), "not a tuple");
        let (_, offset) = tuple.target();
        let header = Header::from_word(self.words[offset]);
        assert!(header.kind() == HEADER_TUPLE && (index as u64) < header.size(), "bad tuple index");
        self.words[offset + 1 + index] = value;
    }

    /// The cons cell `[head | tail]`.
    pub fn cons(&mut self, head: Word, tail: Word) -> Word {
        let at = self.next_offset();
        self.push(head);
        self.push(tail);
        self.cons_at(at)
    }

    /// The proper list of `elements`.
    pub fn list(&mut self, elements: &[Word]) -> Word {
        self.list_with_tail(elements, Word::NIL)
    }

    /// The list of `elements` ending in `tail` (improper unless `tail` is a list).
    pub fn list_with_tail(&mut self, elements: &[Word], tail: Word) -> Word {
        if elements.is_empty() {
            return tail;
        }
        // Cells are laid out head to tail so a list reads front to back in memory.
        let at = self.alloc(2 * elements.len());
        for (i, &e) in elements.iter().enumerate() {
            let cell = at + 2 * i;
            self.words[cell] = e;
            self.words[cell + 1] =
                if i + 1 < elements.len() { self.cons_at(cell + 2) } else { tail };
        }
        self.cons_at(at)
    }

    /// The string `text` as Erlang writes `"text"`: a list of code points.
    pub fn string(&mut self, text: &str) -> Word {
        let chars: Vec<Word> = text.chars().map(|c| Word::small_unchecked(c as i64)).collect();
        self.list(&chars)
    }

    /// The atom `name` (interned).
    ///
    /// # Panics
    ///
    /// As [`Atom::new`].
    #[track_caller]
    pub fn atom(&mut self, name: &str) -> Word {
        Word::atom(Atom::new(name))
    }

    /// The binary holding `bytes`.
    pub fn binary(&mut self, bytes: &[u8]) -> Word {
        self.bitstring(bytes, bytes.len() as u64 * 8)
    }

    /// The bitstring of the first `bit_len` bits of `bytes` (most significant
    /// bit first, as Erlang's bit syntax). Bits past `bit_len` are ignored.
    ///
    /// # Panics
    ///
    /// If `bytes` holds fewer than `bit_len` bits.
    #[track_caller]
    pub fn bitstring(&mut self, bytes: &[u8], bit_len: u64) -> Word {
        let n_bytes = bit_len.div_ceil(8) as usize;
        assert!(n_bytes <= bytes.len(), "bitstring longer than its bytes");
        let n_words = n_bytes.div_ceil(8);
        let at = self.next_offset();
        self.push(Header::new(HEADER_BITS, bit_len).to_word());
        let start = self.alloc(n_words);
        let dst = &mut bytemuck::cast_slice_mut::<Word, u8>(&mut self.words[start..])[..n_bytes];
        dst.copy_from_slice(&bytes[..n_bytes]);
        let rem = (bit_len % 8) as u32;
        if rem != 0
            && let Some(last) = dst.last_mut()
        {
            *last &= 0xffu8 << (8 - rem);
        }
        self.boxed_at(at)
    }

    /// The map of `pairs`; a later pair wins over an earlier one with an
    /// exactly equal key, as in `maps:from_list/1`.
    pub fn map(&mut self, pairs: &[(Word, Word)]) -> Word {
        let mut sorted: Vec<(Word, Word)> = pairs.to_vec();
        let view = HeapSet::single(self);
        // Stable sort keeps equal keys in input order, so the last one wins below.
        sorted.sort_by(|a, b| view.term(a.0).cmp_exact(&view.term(b.0)));
        let mut unique: Vec<(Word, Word)> = Vec::with_capacity(sorted.len());
        for (k, v) in sorted {
            match unique.last_mut() {
                Some(last) if view.term(last.0).eq_exact(&view.term(k)) => *last = (k, v),
                _ => unique.push((k, v)),
            }
        }
        self.map_from_sorted(unique.iter().map(|p| p.0), unique.iter().map(|p| p.1))
    }

    /// The map of `pairs` that also remembers the order the (surviving)
    /// keys were given in, to print and encode them in that order: how a
    /// map read from text or from the external term format keeps ERTS's own
    /// layout of it. Lookups, comparisons and hashing do not see the order.
    pub fn map_in_order(&mut self, pairs: &[(Word, Word)]) -> Word {
        let view = HeapSet::single(self);
        // Most maps come in key order already (ERTS writes small maps so,
        // and prints every map so): kept as they are.
        let ascending = pairs
            .windows(2)
            .all(|w| view.term(w[0].0).cmp_exact(&view.term(w[1].0)) == std::cmp::Ordering::Less);
        if ascending {
            let at = self.map_from_sorted(pairs.iter().map(|p| p.0), pairs.iter().map(|p| p.1));
            return self.remember_order(at, 0..pairs.len());
        }
        let mut indexed: Vec<(usize, Word, Word)> =
            pairs.iter().enumerate().map(|(i, &(k, v))| (i, k, v)).collect();
        indexed.sort_by(|a, b| view.term(a.1).cmp_exact(&view.term(b.1)));
        let mut unique: Vec<(usize, Word, Word)> = Vec::with_capacity(indexed.len());
        for entry in indexed {
            match unique.last_mut() {
                Some(last) if view.term(last.1).eq_exact(&view.term(entry.1)) => *last = entry,
                _ => unique.push(entry),
            }
        }
        // `order[i]` is the sorted position of the i-th key as given. It is
        // kept even when it is the sorted order: that too is a witness of how
        // the writer laid the map out.
        let mut order: Vec<usize> = (0..unique.len()).collect();
        order.sort_by_key(|&i| unique[i].0);
        let at = self.map_from_sorted(unique.iter().map(|e| e.1), unique.iter().map(|e| e.2));
        self.remember_order(at, order)
    }

    /// Marks the map `at`, just built, as keeping the order its keys were
    /// given in: `order` says where each sorted key was.
    fn remember_order(&mut self, at: Word, order: impl IntoIterator<Item = usize>) -> Word {
        let (_, offset) = at.target();
        let header = Header::from_word(self.words[offset]);
        if header.size() == 0 {
            return at;
        }
        self.words[offset] = Header::new(HEADER_MAP, header.size() | MAP_IN_ORDER).to_word();
        self.words.extend(order.into_iter().map(|j| Word::from_bits(j as u64)));
        at
    }

    /// The map with keys already sorted in exact order and unique.
    pub(crate) fn map_from_sorted(
        &mut self,
        keys: impl ExactSizeIterator<Item = Word>,
        values: impl ExactSizeIterator<Item = Word>,
    ) -> Word {
        let at = self.next_offset();
        self.push(Header::new(HEADER_MAP, keys.len() as u64).to_word());
        self.words.extend(keys);
        self.words.extend(values);
        self.boxed_at(at)
    }

    /// The pid `<node.id.serial>` of incarnation `creation` of `node`.
    #[inline]
    pub fn pid(&mut self, node: Atom, id: u32, serial: u32, creation: u32) -> Word {
        let at = self.next_offset();
        self.push(Header::new(HEADER_PID, 4).to_word());
        self.push(Word::atom(node));
        self.push(Word::from_bits(id.into()));
        self.push(Word::from_bits(serial.into()));
        self.push(Word::from_bits(creation.into()));
        self.boxed_at(at)
    }

    /// The port `id` of incarnation `creation` of `node`.
    pub fn port(&mut self, node: Atom, id: u64, creation: u32) -> Word {
        let at = self.next_offset();
        self.push(Header::new(HEADER_PORT, 3).to_word());
        self.push(Word::atom(node));
        self.push(Word::from_bits(id));
        self.push(Word::from_bits(creation.into()));
        self.boxed_at(at)
    }

    /// The reference with id words `ids` (least significant first, as in the
    /// external term format) of incarnation `creation` of `node`.
    pub fn reference(&mut self, node: Atom, creation: u32, ids: &[u32]) -> Word {
        let at = self.next_offset();
        self.push(Header::new(HEADER_REF, ids.len() as u64).to_word());
        self.push(Word::atom(node));
        self.push(Word::from_bits(creation.into()));
        self.words.extend(ids.iter().map(|&w| Word::from_bits(w.into())));
        self.boxed_at(at)
    }

    /// The external fun `fun module:function/arity`.
    pub fn export_fun(&mut self, module: Atom, function: Atom, arity: u8) -> Word {
        let at = self.next_offset();
        self.push(Header::new(HEADER_EXPORT, 3).to_word());
        self.push(Word::atom(module));
        self.push(Word::atom(function));
        self.push(Word::from_bits(arity.into()));
        self.boxed_at(at)
    }

    /// A local fun (closure) as the external term format describes it.
    pub fn closure(&mut self, closure: &ClosureParts<'_>) -> Word {
        let at = self.next_offset();
        let len = CLOSURE_FIXED + closure.free.len();
        self.push(Header::new(HEADER_CLOSURE, len as u64).to_word());
        self.push(Word::from_bits(closure.arity.into()));
        self.push(Word::atom(closure.module));
        self.push(Word::from_bits(closure.index.into()));
        self.push(Word::from_bits(closure.old_index.into()));
        self.push(Word::from_bits(closure.old_uniq.into()));
        let uniq = u128::from_be_bytes(closure.uniq);
        self.push(Word::from_bits((uniq >> 64) as u64));
        self.push(Word::from_bits(uniq as u64));
        self.push(closure.pid);
        self.push(Word::from_bits(closure.free.len() as u64));
        self.words.extend_from_slice(closure.free);
        self.boxed_at(at)
    }
}

/// Number of payload words of a closure before its free variables.
pub(crate) const CLOSURE_FIXED: usize = 9;

/// The parts of a local fun, for [`Heap::closure`]. These come from the
/// external term format (`NEW_FUN_EXT`); Erlang source cannot write them.
#[derive(Clone, Copy, Debug)]
pub struct ClosureParts<'a> {
    /// Number of arguments the fun takes.
    pub arity: u8,
    /// The 16-byte MD5 of the module that defined the fun.
    pub uniq: [u8; 16],
    /// Index of the fun in the module's fun table.
    pub index: u32,
    /// The module that defined the fun.
    pub module: Atom,
    /// Old-style index.
    pub old_index: u32,
    /// Old-style uniq (hash of the fun's code).
    pub old_uniq: u32,
    /// The pid of the process that created the fun (a pid word of the same heap).
    pub pid: Word,
    /// The captured free variables (words of the same heap).
    pub free: &'a [Word],
}

impl<'a> HeapSet<'a> {
    /// The heap set of one heap; the other spaces are empty.
    #[inline]
    pub fn single(heap: &'a Heap) -> HeapSet<'a> {
        let mut spaces: [&'a [Word]; 4] = [&[]; 4];
        spaces[heap.space as usize] = &heap.words;
        HeapSet { spaces }
    }

    /// A heap set of a heap, a program's literals and a run's scratch heap.
    pub(crate) fn new(heap: &'a [Word], literal: &'a [Word], scratch: &'a [Word]) -> HeapSet<'a> {
        HeapSet { spaces: [heap, literal, scratch, &[]] }
    }

    /// The words of `space`.
    #[inline]
    pub fn space(&self, space: Space) -> &'a [Word] {
        self.spaces[space as usize]
    }

    /// The set with `heap` as the heap of its space: words pointing into
    /// that space read `heap` from now on. For a set with nothing in that
    /// space ([`HeapSet::space`] is empty), this reads terms built in
    /// `heap` around terms of the set without copying them.
    ///
    /// ```
    /// use matchspec::term::{Atom, Heap, Space, Term, Word};
    /// let args = Term::parse("[1, {x}]").unwrap();
    /// let mut around = Heap::in_space(Space::Scratch);
    /// let call = around.tuple(&[Word::atom(Atom::OK), args.as_ref().word()]);
    /// let call = args.as_ref().heaps().with(&around).term(call);
    /// assert_eq!(call.to_string(), "{ok,[1,{x}]}");
    /// ```
    #[inline]
    pub fn with(mut self, heap: &'a Heap) -> HeapSet<'a> {
        self.spaces[heap.space as usize] = &heap.words;
        self
    }

    /// Is everything outside the caller's heap space empty? Then every word
    /// read through this set points into one [`Heap`].
    #[inline]
    pub fn is_single(&self) -> bool {
        self.spaces[1..Space::COUNT].iter().all(|s| s.is_empty())
    }

    /// `word` read through this heap set.
    #[inline]
    pub fn term(self, word: Word) -> TermRef<'a> {
        TermRef::new(self, word)
    }

    /// The cells a pointer word points at, from its first word on.
    #[inline]
    pub(crate) fn cells(&self, word: Word) -> &'a [Word] {
        let (space, offset) = word.target();
        &self.spaces[space as usize][offset..]
    }
}

impl std::fmt::Debug for HeapSet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lens: Vec<usize> = self.spaces.iter().map(|s| s.len()).collect();
        f.debug_struct("HeapSet").field("words", &lens).finish()
    }
}
