//! Type predicates of terms: what Erlang's `is_*` guard tests ask.

use super::Bif;
use crate::term::{Atom, Kind, TermRef, Word};

impl Word {
    /// The answer of type test `test` if the word alone decides it (it does
    /// for immediates and for the list, atom and boolean tests), else `None`.
    #[inline]
    pub fn satisfies_quickly(self, test: Bif) -> Option<bool> {
        match test {
            Bif::IsAtom => Some(self.as_atom().is_some()),
            Bif::IsList => Some(self.is_nil() || self.is_cons()),
            Bif::IsBoolean => {
                Some(self == Word::atom(Atom::TRUE) || self == Word::atom(Atom::FALSE))
            }
            Bif::IsInteger | Bif::IsNumber if self.is_small() => Some(true),
            _ if !self.is_boxed() => Some(false),
            _ => None,
        }
    }
}

impl TermRef<'_> {
    /// Is the type test `test` (one of the `is_*/1` guard functions) true?
    /// Any other function answers `false`.
    pub fn satisfies(self, test: Bif) -> bool {
        if let Some(answer) = self.word().satisfies_quickly(test) {
            return answer;
        }
        let kind = self.kind();
        match test {
            Bif::IsAtom => matches!(kind, Kind::Atom(_)),
            Bif::IsFloat => matches!(kind, Kind::Float(_)),
            Bif::IsInteger => matches!(kind, Kind::Small(_) | Kind::Big(_)),
            Bif::IsList => matches!(kind, Kind::Nil | Kind::Cons(_)),
            Bif::IsNumber => matches!(kind, Kind::Small(_) | Kind::Big(_) | Kind::Float(_)),
            Bif::IsPid => matches!(kind, Kind::Pid(_)),
            Bif::IsPort => matches!(kind, Kind::Port(_)),
            Bif::IsReference => matches!(kind, Kind::Ref(_)),
            Bif::IsTuple => matches!(kind, Kind::Tuple(_)),
            Bif::IsMap => matches!(kind, Kind::Map(_)),
            Bif::IsBinary => matches!(kind, Kind::Bits(b) if b.is_binary()),
            Bif::IsBitstring => matches!(kind, Kind::Bits(_)),
            Bif::IsBoolean => matches!(kind, Kind::Atom(a) if a == Atom::TRUE || a == Atom::FALSE),
            Bif::IsFunction1 => matches!(kind, Kind::Export(_) | Kind::Closure(_)),
            _ => false,
        }
    }
}
