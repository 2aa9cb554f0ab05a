//! Interned atoms.
//!
//! As in the BEAM, atoms live in one process-wide table and are never freed:
//! an [`Atom`] is a 32-bit index into it, so comparing two atoms for equality
//! is comparing two integers and an atom fits in a [`Word`](crate::term::Word).
//! Reading an atom's name takes no lock (the names are kept in an append-only
//! [`boxcar::Vec`]); interning a new name takes a short write lock.
//!
//! The table starts with the atoms ERTS creates at boot, in ERTS's order, so
//! that an atom's index orders atoms the way ERTS's index does for every
//! atom ERTS knows from the start (which matters where ERTS orders by index:
//! the layout of small maps).
//!
//! Like the BEAM's, the table is bounded ([`MAX_ATOMS`]) so that untrusted
//! input cannot grow it without limit, and names are at most
//! [`MAX_ATOM_CHARS`] characters.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hasher;
use std::sync::{LazyLock, RwLock};

use super::erts_atoms::ERTS_ATOMS;

/// Most characters an atom name may have (Erlang's limit).
pub const MAX_ATOM_CHARS: usize = 255;

/// Most atoms the table holds (the BEAM's default limit).
pub const MAX_ATOMS: usize = 1 << 20;

/// An interned atom. `Copy`, 4 bytes, equal exactly when the names are equal.
///
/// ```
/// use matchspec::term::Atom;
/// let ok = Atom::new("ok");
/// assert_eq!(ok, Atom::OK);
/// assert_eq!(ok.name(), "ok");
/// assert_eq!(Atom::new("héllo wörld").name(), "héllo wörld");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Atom(u32);

/// Why a name could not become an atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AtomError {
    /// The name has more than [`MAX_ATOM_CHARS`] characters.
    #[error("atom too long (more than {MAX_ATOM_CHARS} characters)")]
    TooLong,
    /// The table already holds [`MAX_ATOMS`] atoms.
    #[error("system_limit: the atom table is full ({MAX_ATOMS} atoms)")]
    TableFull,
}

/// The index of `name` in ERTS's boot atoms, found at compile time.
const fn erts_index(name: &str) -> u32 {
    let mut i = 0;
    while i < ERTS_ATOMS.len() {
        let candidate = ERTS_ATOMS[i].as_bytes();
        let wanted = name.as_bytes();
        if candidate.len() == wanted.len() {
            let mut j = 0;
            while j < wanted.len() && candidate[j] == wanted[j] {
                j += 1;
            }
            if j == wanted.len() {
                return i as u32;
            }
        }
        i += 1;
    }
    panic!("not one of ERTS's boot atoms")
}

macro_rules! predefined_atoms {
    ($($konst:ident = $text:literal,)*) => {
        impl Atom {
            $(
                #[doc = concat!("The atom `", $text, "`.")]
                pub const $konst: Atom = Atom(erts_index($text));
            )*
        }
    };
}

predefined_atoms! {
    TRUE = "true",
    FALSE = "false",
    OK = "ok",
    ERROR = "error",
    UNDEFINED = "undefined",
    EXIT = "EXIT",
    UNDERSCORE = "_",
    DOLLAR_UNDERSCORE = "$_",
    DOLLAR_DOLLAR = "$$",
    CONST = "const",
    NONODE = "nonode@nohost",
    TABLE = "table",
    TRACE = "trace",
    CALL = "call",
    SEND = "send",
    RECEIVE = "receive",
    MESSAGE = "message",
    BADARG = "badarg",
    SYSTEM_LIMIT = "system_limit",
    RETURN_TRACE = "return_trace",
    EXCEPTION_TRACE = "exception_trace",
    SET_TCW_FAKE = "set_tcw_fake",
}

/// Atoms of our own that code names directly, interned right after ERTS's
/// boot atoms so that naming them can never fail on a full table.
const OWN_ATOMS: &[&str] = &["raised"];

impl Atom {
    /// The atom `raised` (what `match_spec_test` answers carry for a raised
    /// exception).
    pub const RAISED: Atom = Atom(ERTS_ATOMS.len() as u32);
}

struct Table {
    names: boxcar::Vec<&'static str>,
    index: RwLock<HashMap<&'static str, u32, rustc_hash::FxBuildHasher>>,
}

/// Slots of the per-thread cache of recently interned atoms.
const RECENT_SLOTS: usize = 256;

thread_local! {
    /// Per hash slot, the index of the atom last interned there (or
    /// `u32::MAX`): names are never removed, so a hit is checked by name.
    static RECENT: [Cell<u32>; RECENT_SLOTS] = const { [const { Cell::new(u32::MAX) }; RECENT_SLOTS] };
}

/// The cache slot of `name`.
fn recent_slot(name: &str) -> usize {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(name.as_bytes());
    hasher.finish() as usize % RECENT_SLOTS
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let table = Table { names: boxcar::Vec::new(), index: RwLock::new(HashMap::default()) };
    {
        let mut index = table.index.write().unwrap_or_else(|poison| poison.into_inner());
        // ERTS's boot atoms come first, at ERTS's own indices: ERTS lays
        // out small maps by atom index, and so do we.
        for (i, name) in ERTS_ATOMS.iter().chain(OWN_ATOMS).enumerate() {
            let pushed = table.names.push(name);
            debug_assert_eq!(pushed, i);
            index.insert(name, i as u32);
        }
    }
    table
});

impl Atom {
    /// Interns `name`.
    ///
    /// # Panics
    ///
    /// If `name` is longer than [`MAX_ATOM_CHARS`] characters or the table is
    /// full; use [`Atom::try_new`] for names that come from outside.
    #[track_caller]
    pub fn new(name: &str) -> Atom {
        match Atom::try_new(name) {
            Ok(atom) => atom,
            Err(err) => panic!("cannot intern {name:?}: {err}"),
        }
    }

    /// Interns `name`, failing if it is too long or the table is full.
    pub fn try_new(name: &str) -> Result<Atom, AtomError> {
        if name.len() > MAX_ATOM_CHARS && name.chars().count() > MAX_ATOM_CHARS {
            return Err(AtomError::TooLong);
        }
        let table = &*TABLE;
        // Decoding asks for the same few atoms over and over: a per-thread
        // cache of the last atom seen per hash slot skips the shared lock.
        let slot = recent_slot(name);
        let cached = RECENT.with(|recent| recent[slot].get());
        if table.names.get(cached as usize).is_some_and(|&known| known == name) {
            return Ok(Atom(cached));
        }
        if let Some(&i) = table.index.read().unwrap_or_else(|p| p.into_inner()).get(name) {
            RECENT.with(|recent| recent[slot].set(i));
            return Ok(Atom(i));
        }
        let mut index = table.index.write().unwrap_or_else(|p| p.into_inner());
        if let Some(&i) = index.get(name) {
            return Ok(Atom(i));
        }
        if table.names.count() >= MAX_ATOMS {
            return Err(AtomError::TableFull);
        }
        // Atoms live as long as the process, as in the BEAM.
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let i = table.names.push(name) as u32;
        index.insert(name, i);
        Ok(Atom(i))
    }

    /// The atom named `name` if it exists already; never grows the table.
    pub fn existing(name: &str) -> Option<Atom> {
        TABLE.index.read().unwrap_or_else(|p| p.into_inner()).get(name).map(|&i| Atom(i))
    }

    /// The name of the atom.
    pub fn name(self) -> &'static str {
        // Every `Atom` value was handed out after its name was pushed, except
        // ones rebuilt by `from_index` from a forged word; those read as "".
        TABLE.names.get(self.0 as usize).copied().unwrap_or("")
    }

    /// The index of the atom in the table.
    #[inline]
    pub const fn index(self) -> u32 {
        self.0
    }

    #[inline]
    pub(crate) const fn from_index(index: u32) -> Atom {
        Atom(index)
    }

    /// Is this `true` or `false`?
    #[inline]
    pub fn is_boolean(self) -> bool {
        self == Atom::TRUE || self == Atom::FALSE
    }

    /// Number of atoms in the table.
    pub fn count() -> usize {
        TABLE.names.count()
    }
}

impl fmt::Debug for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Atom({:?})", self.name())
    }
}

impl fmt::Display for Atom {
    /// Writes the atom as Erlang source, quoted only when needed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::term::display::write_atom(f, self.name())
    }
}

impl From<&str> for Atom {
    /// Same as [`Atom::new`].
    #[track_caller]
    fn from(name: &str) -> Atom {
        Atom::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_atoms_have_their_names() {
        assert_eq!(Atom::TRUE.name(), "true");
        assert_eq!(Atom::new("nonode@nohost"), Atom::NONODE);
        assert_eq!(Atom::SYSTEM_LIMIT.name(), "system_limit");
        assert_eq!(Atom::RAISED.name(), "raised");
        assert_eq!(Atom::new("raised"), Atom::RAISED);
    }

    #[test]
    fn length_limit_counts_characters() {
        assert!(Atom::try_new(&"é".repeat(255)).is_ok());
        assert_eq!(Atom::try_new(&"a".repeat(256)), Err(AtomError::TooLong));
    }

    #[test]
    fn interning_from_many_threads_agrees() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..500).map(|i| Atom::new(&format!("t{i}"))).collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results.windows(2).all(|w| w[0] == w[1]));
    }
}
