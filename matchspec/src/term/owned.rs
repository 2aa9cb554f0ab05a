//! [`Term`]: a term that owns its heap.

use std::fmt;
use std::hash::{Hash, Hasher};

use num_bigint::BigInt;

use super::{Atom, Heap, TermRef, Word};

/// A term together with the heap it lives in: the convenient, owned form.
///
/// Parsing and decoding return `Term`s; build them with the constructors
/// below, the [`term!`](crate::term!) macro, or in bulk in a [`Heap`]. For
/// hot paths over many terms, keep them in one heap and pass
/// [`TermRef`]s around instead.
///
/// Equality and hashing are exact (`=:=`), and `Ord` is the exact total
/// order; [`TermRef::cmp_term`] gives Erlang's order.
///
/// ```
/// use matchspec::term::{Atom, Term};
/// let t = Term::tuple([Term::atom(Atom::OK), Term::from(42), Term::string("hi")]);
/// assert_eq!(t.to_string(), r#"{ok,42,"hi"}"#);
/// assert_eq!(t, Term::parse(r#"{ok, 42, [$h, $i]}"#).unwrap());
/// ```
#[derive(Clone)]
pub struct Term {
    heap: Heap,
    root: Word,
}

impl Term {
    /// A term made of `root` in `heap`.
    pub fn from_parts(heap: Heap, root: Word) -> Term {
        Term { heap, root }
    }

    /// The heap and the root word.
    pub fn into_parts(self) -> (Heap, Word) {
        (self.heap, self.root)
    }

    /// Reads the term.
    #[inline]
    pub fn as_ref(&self) -> TermRef<'_> {
        self.heap.view(self.root)
    }

    /// The root word (valid in [`Term::heap`]).
    pub fn word(&self) -> Word {
        self.root
    }

    /// The heap the term lives in.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    fn immediate(word: Word) -> Term {
        Term { heap: Heap::new(), root: word }
    }

    fn build(f: impl FnOnce(&mut Heap) -> Word) -> Term {
        let mut heap = Heap::new();
        let root = f(&mut heap);
        Term { heap, root }
    }

    /// The atom `atom`.
    pub fn atom(atom: Atom) -> Term {
        Term::immediate(Word::atom(atom))
    }

    /// `[]`.
    pub fn nil() -> Term {
        Term::immediate(Word::NIL)
    }

    /// The float `value`.
    ///
    /// # Panics
    ///
    /// If `value` is NaN or infinite.
    #[track_caller]
    pub fn float(value: f64) -> Term {
        Term::build(|h| h.float(value))
    }

    /// The string `text` as a list of code points.
    pub fn string(text: &str) -> Term {
        Term::build(|h| h.string(text))
    }

    /// The binary holding `bytes`.
    pub fn binary(bytes: &[u8]) -> Term {
        Term::build(|h| h.binary(bytes))
    }

    /// The tuple of `elements`.
    pub fn tuple(elements: impl IntoIterator<Item = Term>) -> Term {
        Term::build(|h| {
            let words: Vec<Word> = elements.into_iter().map(|e| e.copy_to(h)).collect();
            h.tuple(&words)
        })
    }

    /// The proper list of `elements`.
    pub fn list(elements: impl IntoIterator<Item = Term>) -> Term {
        Term::build(|h| {
            let words: Vec<Word> = elements.into_iter().map(|e| e.copy_to(h)).collect();
            h.list(&words)
        })
    }

    /// The map of `pairs` (a later key wins over an equal earlier one).
    pub fn map(pairs: impl IntoIterator<Item = (Term, Term)>) -> Term {
        Term::build(|h| {
            let words: Vec<(Word, Word)> =
                pairs.into_iter().map(|(k, v)| (k.copy_to(h), v.copy_to(h))).collect();
            h.map(&words)
        })
    }

    /// Copies the term into `heap` and returns its word there.
    pub fn copy_to(&self, heap: &mut Heap) -> Word {
        super::copy::copy_into(self.as_ref(), heap)
    }
}

impl From<i64> for Term {
    fn from(value: i64) -> Term {
        Term::build(|h| h.int(value))
    }
}

impl From<i32> for Term {
    fn from(value: i32) -> Term {
        Term::from(i64::from(value))
    }
}

impl From<u64> for Term {
    fn from(value: u64) -> Term {
        Term::from(&BigInt::from(value))
    }
}

impl From<&BigInt> for Term {
    fn from(value: &BigInt) -> Term {
        Term::build(|h| h.bigint(value))
    }
}

impl From<Atom> for Term {
    fn from(atom: Atom) -> Term {
        Term::atom(atom)
    }
}

impl From<bool> for Term {
    fn from(value: bool) -> Term {
        Term::atom(if value { Atom::TRUE } else { Atom::FALSE })
    }
}

impl From<TermRef<'_>> for Term {
    fn from(term: TermRef<'_>) -> Term {
        term.to_owned()
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_ref(), f)
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Term({})", self.as_ref())
    }
}

impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        self.as_ref() == other.as_ref()
    }
}

impl Eq for Term {}

impl PartialOrd for Term {
    fn partial_cmp(&self, other: &Term) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Term {
    fn cmp(&self, other: &Term) -> std::cmp::Ordering {
        self.as_ref().cmp(&other.as_ref())
    }
}

impl Hash for Term {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_ref().hash(state);
    }
}
