//! Type predicates of terms: what Erlang's `is_*` guard tests ask.

use super::view::Kind;
use super::{Atom, TermRef};
use crate::bif::Bif;

impl TermRef<'_> {
    /// Is the type test `test` (one of the `is_*/1` guard functions) true?
    /// Any other function answers `false`.
    pub fn satisfies(self, test: Bif) -> bool {
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
