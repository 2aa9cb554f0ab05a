//! The Erlang term model shared by every stage and engine.
//!
//! # Representation
//!
//! Terms are stored the way the BEAM stores them, because both the
//! interpreter and the JIT read them, and the JIT must test a term's type,
//! read tuple elements and list cells, and do small-integer arithmetic with
//! inline machine code:
//!
//! * A term is one tagged 64-bit [`Word`] (see [`word`] for the bit layout).
//!   Small integers (61 bits), atoms and `[]` are immediates: the value is in
//!   the word. Everything else is a pointer word to cells in a [`Heap`].
//! * A [`Heap`] is a flat `Vec<Word>` arena. A cons cell is two words (head,
//!   tail); a boxed object is a header word (kind and size) followed by its
//!   payload: tuple elements, bignum limbs, float bits, packed bytes, map keys
//!   and values. Building appends; nothing is freed until the heap is.
//! * Pointers are offsets, not addresses, tagged with the [`Space`] they point
//!   into: the caller's heap, a compiled program's literals or a run's scratch
//!   heap. A result can share structure with the input and with literals
//!   without copying, and no code outside the JIT needs `unsafe`.
//!
//! Atoms are interned process-wide ([`Atom`]), so atom equality is word
//! equality. Bignums are limbs in the heap (arithmetic on them goes through
//! `num-bigint`). Floats are boxed IEEE doubles; `-0.0` and `0.0` are
//! different terms (`=:=`) but equal numbers (`==`).
//!
//! # Reading and owning
//!
//! * [`TermRef`] reads a word through the heaps it points into: [`Kind`]
//!   tells what it is, [`Display`](std::fmt::Display) prints Erlang syntax,
//!   and it has Erlang's term order ([`TermRef::cmp_term`]), exact equality
//!   and a hash consistent with it.
//! * [`Term`] owns its heap: what parsing and decoding return, and the easy
//!   way to build small terms.
//!
//! Everything walks terms with explicit stacks: a list or tuple nested a
//! million levels deep builds, compares, hashes, prints and drops without
//! growing the call stack.
//!
//! ```
//! use matchspec::term;
//! use matchspec::term::{Kind, Term};
//!
//! let t = term!({user, "ann", [42, 3.5], #{role => admin}});
//! let Kind::Tuple(tuple) = t.as_ref().kind() else { unreachable!() };
//! assert_eq!(tuple.len(), 4);
//! assert_eq!(t.to_string(), r#"{user,"ann",[42,3.5],#{role => admin}}"#);
//! assert!(t.as_ref().cmp_term(&Term::from(1).as_ref()).is_gt()); // tuple > number
//! ```

#[cfg(feature = "arbitrary")]
mod arbitrary;
mod atom;
mod copy;
pub(crate) mod display;
mod erts_atoms;
mod erts_atoms29;
pub(crate) mod erts_hash;
pub(crate) mod erts_layout;
pub(crate) mod erts_text;
mod heap;
mod order;
mod owned;
mod view;
pub mod word;

#[cfg(feature = "arbitrary")]
pub use arbitrary::{ArbitraryFlavor, MAX_DEPTH, MAX_NODES, MAX_WRAP};
pub use atom::{Atom, AtomError, MAX_ATOM_CHARS, MAX_ATOMS};
pub use display::WithoutStrings;
pub use heap::{ClosureParts, Heap, HeapSet};
pub use owned::Term;
pub use view::{
    Big, Bits, Closure, Cons, Export, Kind, ListItems, Map, Pid, Port, Ref, TermRef, Tuple,
    TypeOrder,
};
pub use word::{Space, Word};

pub(crate) use copy::map_atoms;
pub(crate) use order::compare_int_float_i64;

/// Builds a [`Term`] from Erlang syntax written inline.
///
/// The tokens are turned into text and parsed, so anything Rust can tokenize
/// works: atoms, numbers, strings, tuples, lists with `|` tails, maps,
/// binaries. (Quoted atoms such as `'hello world'` are not Rust tokens; use
/// [`Term::parse`] for those.)
///
/// # Panics
///
/// If the text is not a valid term.
///
/// ```
/// use matchspec::term;
/// let t = term!({ok, [1, 2 | more], <<"bin">>});
/// assert_eq!(t.to_string(), r#"{ok,[1,2|more],<<"bin">>}"#);
/// ```
#[macro_export]
macro_rules! term {
    ($($tokens:tt)+) => {
        match $crate::term::Term::parse(stringify!($($tokens)+)) {
            Ok(term) => term,
            Err(err) => panic!("term!: {err}"),
        }
    };
}
