//! [`ArgPrologue`]: how a trace program starts, as one step.

use super::{Label, Op, Reg};

/// The `is_arity` a trace program starts with and the `get_arg`s right
/// after it: reads of the event's arguments into registers that every
/// call of a traced function runs, which an engine may do in one step
/// instead of op by op. The code is unchanged; the prologue only says what
/// its first ops do and where the code goes on after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArgPrologue {
    /// The number of arguments the first clause wants.
    pub(crate) arity: u32,
    /// Where the code goes if the event has another number.
    pub(crate) fail: Label,
    /// `(index, dst)` of each `get_arg`, in code order.
    pub(crate) gets: Box<[(u32, Reg)]>,
    /// The first op after them.
    pub(crate) next: Label,
}

impl ArgPrologue {
    /// The prologue of `code`, if it starts with an `is_arity`.
    pub(crate) fn of(code: &[Op]) -> Option<ArgPrologue> {
        let &Op::IsArity { arity, fail } = code.first()? else { return None };
        let gets: Box<[(u32, Reg)]> = code[1..]
            .iter()
            .map_while(
                |op| if let Op::GetArg { index, dst } = *op { Some((index, dst)) } else { None },
            )
            .collect();
        let next = Label(1 + gets.len() as u32);
        Some(ArgPrologue { arity, fail, gets, next })
    }
}
