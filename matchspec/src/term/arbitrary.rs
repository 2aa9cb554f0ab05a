//! Random terms for fuzzing: `arbitrary::Arbitrary` for [`Term`].
//!
//! [`Term::arbitrary`](arbitrary::Arbitrary::arbitrary) makes every kind of
//! term the text syntax (`syntax`) can write: atoms that need quotes,
//! reserved words and non-Latin-1 names; integers at every boundary that
//! matters (the 61-bit small range, OTP's 60-bit one, `i32`, `i64`, `u64`)
//! and bignums; floats including `-0.0`, subnormals and the largest
//! doubles; binaries and bitstrings; tuples, proper and improper lists,
//! strings and maps; pids, ports and references of this node and of others;
//! and export funs. [`Term::arbitrary_flavored`] with
//! [`ArbitraryFlavor::Etf`] makes what the external term format carries
//! unchanged instead: local funs too, and this node's identifiers only
//! within ERTS's limits.
//!
//! The bytes drive the shape. Generation recurses at most [`MAX_DEPTH`]
//! levels and builds at most [`MAX_NODES`] containers and leaves; deeper
//! terms come from wrapping the result in a chain of one-element
//! containers, which is a loop, not recursion. Terms go straight into one
//! [`Heap`], so nothing recursive is ever dropped.

use arbitrary::{Arbitrary, Result, Unstructured};
use num_bigint::{BigInt, Sign};

use super::heap::ClosureParts;
use super::{Atom, Heap, Term, Word};

/// Deepest the generator recurses.
pub const MAX_DEPTH: usize = 24;

/// Most terms (leaves and containers) one generated term is built from,
/// not counting the chain of [`MAX_WRAP`] wrappers.
pub const MAX_NODES: usize = 400;

/// Longest chain of one-element containers wrapped around a generated term.
pub const MAX_WRAP: usize = 2000;

/// Which terms [`Term::arbitrary_flavored`] makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArbitraryFlavor {
    /// Everything the text syntax can write (no local funs; identifiers of
    /// this node with any numbers the syntax takes).
    Text,
    /// Everything the external term format writes and reads back
    /// unchanged: local funs too, and this node's pids, ports and
    /// references only within ERTS's limits (a reference of this node has
    /// three id words).
    Etf,
}

impl<'a> Arbitrary<'a> for Term {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Term> {
        Term::arbitrary_flavored(u, ArbitraryFlavor::Text)
    }
}

impl Term {
    /// A random term of `flavor`, shaped by the bytes of `u`.
    pub fn arbitrary_flavored(u: &mut Unstructured<'_>, flavor: ArbitraryFlavor) -> Result<Term> {
        let mut heap = Heap::new();
        let mut g = Gen { u, heap: &mut heap, flavor, nodes: 0 };
        let mut root = g.term(0)?;
        root = g.wrap(root)?;
        Ok(Term::from_parts(heap, root))
    }
}

/// Atom names that exercise quoting, escapes and the reserved words.
const ATOMS: &[&str] = &[
    "ok",
    "a",
    "",
    "_",
    "$_",
    "$$",
    "$1",
    "'$1'",
    "Caps",
    "hello world",
    "it's",
    "back\\slash",
    "a>b",
    "node@host",
    "nonode@nohost",
    "a.b",
    "\n",
    "\t\r\u{0}\u{7f}\u{1b}",
    "\u{80}\u{9f}\u{a0}",
    "ß",
    "ñandú",
    "é",
    "\u{d7}",
    "\u{f7}x",
    "xÀ",
    "λ",
    "日本",
    "\u{10ffff}",
    "🙂",
    "after",
    "and",
    "andalso",
    "begin",
    "case",
    "catch",
    "cond",
    "div",
    "else",
    "end",
    "fun",
    "if",
    "let",
    "maybe",
    "not",
    "of",
    "receive",
    "when",
    "true",
    "false",
    "undefined",
    "const",
    "message",
    "is_integer",
];

/// Characters atom names, node names and strings are drawn from: what
/// quoting, escaping and the Latin-1 name rules tell apart.
const CHARS: &str = "abzAZ09_@. '\"\\><#$%,|\n\t\u{0}\u{7}\u{7f}\u{80}\u{9f}\u{a0}\u{bf}\u{c0}\u{d6}\
                     \u{d7}\u{d8}\u{de}\u{df}\u{f6}\u{f7}\u{f8}\u{ff}\u{100}\u{3bb}\u{2028}\u{fffd}\
                     \u{10000}\u{10ffff}";

/// Integers at the edges of every range the code distinguishes.
const INTS: &[i128] = &[
    0,
    1,
    -1,
    7,
    255,
    256,
    -256,
    65535,
    65536,
    (1 << 27) - 1,
    1 << 27,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    -(1 << 31) - 1,
    (1 << 32) - 1,
    1 << 32,
    (1 << 59) - 1,
    1 << 59,
    -(1 << 59),
    -(1 << 59) - 1,
    (1 << 60) - 1,
    1 << 60,
    -(1 << 60),
    -(1 << 60) - 1,
    (1 << 63) - 1,
    1 << 63,
    -(1 << 63),
    -(1 << 63) - 1,
    (1 << 64) - 1,
    1 << 64,
    -(1 << 64),
    i128::MAX,
    i128::MIN,
];

/// Floats at the edges of what printing and parsing distinguish.
const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    0.5,
    1.5,
    100.0,
    1000.0,
    1.0e15,
    1.0e16,
    9007199254740992.0,
    9007199254740993.0,
    123456789012.0,
    1.0e-4,
    1.0e-5,
    f64::EPSILON,
    f64::MIN_POSITIVE,
    5.0e-324,
    -5.0e-324,
    f64::MAX,
    f64::MIN,
    1.0e308,
    0.3333333333333333,
];

/// The generator's state: the bytes, the heap being built and the budget.
struct Gen<'u, 'a, 'h> {
    u: &'u mut Unstructured<'a>,
    heap: &'h mut Heap,
    flavor: ArbitraryFlavor,
    nodes: usize,
}

impl Gen<'_, '_, '_> {
    /// A term whose containers are `depth` levels down.
    fn term(&mut self, depth: usize) -> Result<Word> {
        self.nodes += 1;
        let leaf_only = depth >= MAX_DEPTH || self.nodes >= MAX_NODES || self.u.is_empty();
        let kinds = if leaf_only { 12 } else { 18 };
        match self.u.choose_index(kinds)? {
            0 => self.atom().map(Word::atom),
            1 | 2 => self.integer(),
            3 => self.float(),
            4 => self.bits(),
            5 => self.string(),
            6 => Ok(Word::NIL),
            7 => self.pid(),
            8 => self.port(),
            9 => self.reference(),
            10 => self.export(),
            11 => self.closure(depth),
            12 | 13 => {
                let elements = self.elements(depth)?;
                Ok(self.heap.tuple(&elements))
            }
            14 | 15 => {
                let elements = self.elements(depth)?;
                Ok(self.heap.list(&elements))
            }
            16 => {
                let elements = self.elements(depth)?;
                let tail = self.term(depth + 1)?;
                Ok(self.heap.list_with_tail(&elements, tail))
            }
            _ => self.map(depth),
        }
    }

    /// The elements of a container at `depth`.
    fn elements(&mut self, depth: usize) -> Result<Vec<Word>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.term(depth + 1)).collect()
    }

    /// A length up to `most`, mostly small.
    fn len(&mut self, most: usize) -> Result<usize> {
        let n = self.u.int_in_range(0..=most)?;
        Ok(n.min(MAX_NODES.saturating_sub(self.nodes)))
    }

    /// Wraps `word` in a chain of one-element containers.
    fn wrap(&mut self, mut word: Word) -> Result<Word> {
        if self.u.ratio(7u8, 8u8)? {
            return Ok(word);
        }
        let depth = self.u.int_in_range(1..=MAX_WRAP)?;
        let how = self.u.choose_index(5)?;
        for _ in 0..depth {
            word = match how {
                0 => self.heap.tuple(&[word]),
                1 => self.heap.list(&[word]),
                2 => self.heap.cons(Word::NIL, word),
                3 => self.heap.map(&[(Word::NIL, word)]),
                _ => self.heap.map(&[(word, Word::NIL)]),
            };
        }
        Ok(word)
    }

    fn atom(&mut self) -> Result<Atom> {
        let name = match self.u.choose_index(4)? {
            0 | 1 => (*self.u.choose(ATOMS)?).to_owned(),
            2 => self.text(12)?,
            _ => {
                // Long names, up to and at the 255-character limit.
                let c = self.char()?;
                let n = self.u.int_in_range(250..=255)?;
                std::iter::repeat_n(c, n).collect()
            }
        };
        // The atom table is bounded; once it is full, reuse an atom.
        Ok(Atom::try_new(&name).unwrap_or(Atom::OK))
    }

    /// Up to `most` characters, mostly from [`CHARS`].
    fn text(&mut self, most: usize) -> Result<String> {
        let n = self.u.int_in_range(0..=most)?;
        let mut text = String::with_capacity(n);
        for _ in 0..n {
            let c =
                if self.u.ratio(7u8, 8u8)? { self.char()? } else { self.u.arbitrary::<char>()? };
            text.push(c);
        }
        Ok(text)
    }

    /// One of [`CHARS`].
    fn char(&mut self) -> Result<char> {
        let i = self.u.choose_index(CHARS.chars().count())?;
        Ok(CHARS.chars().nth(i).unwrap_or('a'))
    }

    fn integer(&mut self) -> Result<Word> {
        let value = match self.u.choose_index(4)? {
            0 => BigInt::from(*self.u.choose(INTS)?),
            1 => BigInt::from(*self.u.choose(INTS)?) + self.u.int_in_range(-2i8..=2)?,
            2 => BigInt::from(self.u.arbitrary::<i64>()?),
            _ => {
                let n = self.u.int_in_range(1..=40)?;
                let limbs: Vec<u32> = (0..n).map(|_| self.u.arbitrary()).collect::<Result<_>>()?;
                let sign = if self.u.arbitrary()? { Sign::Minus } else { Sign::Plus };
                BigInt::from_slice(sign, &limbs)
            }
        };
        Ok(self.heap.bigint(&value))
    }

    fn float(&mut self) -> Result<Word> {
        let value = if self.u.arbitrary()? {
            *self.u.choose(FLOATS)?
        } else {
            f64::from_bits(self.u.arbitrary()?)
        };
        // Erlang has no NaN or infinity.
        let value = if value.is_finite() { value } else { 0.0 };
        Ok(self.heap.float(value))
    }

    fn bits(&mut self) -> Result<Word> {
        let bytes: Vec<u8> = match self.u.choose_index(3)? {
            0 => self.text(16)?.into_bytes(),
            1 => self.text(16)?.chars().map(|c| c as u32 as u8).collect(),
            _ => {
                let n = self.u.int_in_range(0..=24)?;
                self.u.bytes(n)?.to_vec()
            }
        };
        let rest = if bytes.is_empty() { 0 } else { self.u.int_in_range(0..=7u64)? };
        let bit_len = bytes.len() as u64 * 8 - if rest == 0 { 0 } else { 8 - rest };
        Ok(self.heap.bitstring(&bytes, bit_len))
    }

    fn string(&mut self) -> Result<Word> {
        let text = self.text(16)?;
        Ok(self.heap.string(&text))
    }

    /// A node and creation: this node's, or another's.
    fn node(&mut self) -> Result<(Atom, u32)> {
        if self.u.arbitrary()? {
            return Ok((Atom::NONODE, 0));
        }
        let node = if self.u.arbitrary()? {
            Atom::try_new("a@b").unwrap_or(Atom::OK)
        } else {
            self.atom()?
        };
        let creation = match self.u.choose_index(3)? {
            0 => 0,
            1 => self.u.int_in_range(0..=3)?,
            _ => self.u.arbitrary()?,
        };
        Ok((node, creation))
    }

    /// A number of up to 64 bits, often at an edge.
    fn number(&mut self, bits: u32) -> Result<u64> {
        let top = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
        Ok(match self.u.choose_index(4)? {
            0 => self.u.int_in_range(0..=16)?,
            1 => top,
            2 => top >> 1,
            _ => self.u.arbitrary::<u64>()? & top,
        })
    }

    /// Is `node` this node, whose identifiers ERTS limits (in the ETF flavor)?
    fn limited(&self, node: Atom, creation: u32) -> bool {
        self.flavor == ArbitraryFlavor::Etf && node == Atom::NONODE && creation == 0
    }

    fn pid(&mut self) -> Result<Word> {
        let (node, creation) = self.node()?;
        let id_bits = if self.limited(node, creation) { 28 } else { 32 };
        let id = self.number(id_bits)? as u32;
        let serial = self.number(32)? as u32;
        Ok(self.heap.pid(node, id, serial, creation))
    }

    fn port(&mut self) -> Result<Word> {
        let (node, creation) = self.node()?;
        let id_bits = if self.limited(node, creation) { 60 } else { 64 };
        let id = self.number(id_bits)?;
        Ok(self.heap.port(node, id, creation))
    }

    fn reference(&mut self) -> Result<Word> {
        let (node, creation) = self.node()?;
        let limited = self.limited(node, creation);
        let n = if limited { 3 } else { self.u.int_in_range(1..=5)? };
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            let bits = if limited && i == 0 { 18 } else { 32 };
            ids.push(self.number(bits)? as u32);
        }
        Ok(self.heap.reference(node, creation, &ids))
    }

    fn export(&mut self) -> Result<Word> {
        let module = self.atom()?;
        let function = self.atom()?;
        let arity = self.u.arbitrary()?;
        Ok(self.heap.export_fun(module, function, arity))
    }

    /// A local fun in the ETF flavor; an atom in the text flavor, which
    /// cannot write one.
    fn closure(&mut self, depth: usize) -> Result<Word> {
        if self.flavor == ArbitraryFlavor::Text {
            return self.atom().map(Word::atom);
        }
        let pid = self.pid()?;
        let n = if depth >= MAX_DEPTH { 0 } else { self.len(4)? };
        let free: Vec<Word> = (0..n).map(|_| self.term(depth + 1)).collect::<Result<_>>()?;
        let parts = ClosureParts {
            arity: self.u.arbitrary()?,
            uniq: self.u.arbitrary()?,
            index: self.u.arbitrary()?,
            module: self.atom()?,
            old_index: self.u.arbitrary()?,
            old_uniq: self.u.arbitrary()?,
            pid,
            free: &free,
        };
        Ok(self.heap.closure(&parts))
    }

    fn map(&mut self, depth: usize) -> Result<Word> {
        let n = self.len(8)?;
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.term(depth + 1)?;
            let value = self.term(depth + 1)?;
            pairs.push((key, value));
        }
        // A map read from text or bytes remembers its key order; one built
        // in code does not. Make both.
        Ok(if self.u.arbitrary()? { self.heap.map_in_order(&pairs) } else { self.heap.map(&pairs) })
    }
}
