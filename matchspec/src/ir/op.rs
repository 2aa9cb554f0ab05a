//! [`Op`]: the instructions of a compiled match spec.
//!
//! # Naming
//!
//! * `is_*` ops test something and jump to their `fail` label when it does
//!   not hold; they never change a register.
//! * `get_*` ops read part of a term already tested (no checks of their own).
//! * `make_*` ops build a new term on the scratch heap.
//! * `call` evaluates a guard function; `compare` and `type_test` are the
//!   forms of the pure ones fused with the test a guard makes of them.
//! * The rest are the trace actions, which talk to the host (`Host`).
//!
//! A [`Fail`] is where a failing guard function goes: a label in guards, or
//! "make the value `'EXIT'` and carry on" in bodies.
//!
//! # Head ops read only the input
//!
//! The `src` of `is_tuple`, `get_element`, `is_element`, `is_cons`,
//! `get_head`, `get_tail`, `is_map` and `get_map_value` always holds the
//! input or a part of it (heads only take the input apart), so an engine
//! may read their cells from the input's heap alone. Their other operands
//! (a map key, a literal) may live anywhere.

use super::{Label, Operands, Reg};
use crate::bif::Bif;
use crate::term::Word;

/// One instruction. Every variant says what it does, what it changes and
/// when it fails; every engine handles every variant with an exhaustive
/// `match`, so adding one breaks the build everywhere it must be handled.
// An explicit tag byte: engines dispatch on it, and without it the compiler
// may hide the tag in a niche of some field, which costs a dispatch several
// comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
pub enum Op {
    // ---- Heads: tests and reads ---------------------------------------------------
    /// Trace specs: jump to `fail` unless the event has exactly `arity`
    /// arguments.
    IsArity {
        /// The number of arguments required.
        arity: u32,
        /// Where to go if it differs.
        fail: Label,
    },
    /// Trace specs with a prefix head `[P1, ..., Pn | '_']` (OTP 29): jump
    /// to `fail` unless the event has `arity` arguments or more.
    IsArityAtLeast {
        /// The fewest arguments required.
        arity: u32,
        /// Where to go if there are fewer.
        fail: Label,
    },
    /// `dst := argument index` (0-based; the arity was tested before).
    GetArg {
        /// Which argument.
        index: u32,
        /// Where to put it.
        dst: Reg,
    },
    /// `dst :=` the list of all arguments (built on the scratch heap): what
    /// a `'$N'` trace head binds and `'$_'` is in a trace spec.
    GetArgList {
        /// Where to put it.
        dst: Reg,
    },
    /// Jump to `fail` unless `src` is a tuple of exactly `arity` elements.
    IsTuple {
        /// The term to test.
        src: Reg,
        /// The arity required.
        arity: u32,
        /// Where to go if it is not.
        fail: Label,
    },
    /// `dst :=` element `index` (0-based) of the tuple in `src`, whose arity
    /// was tested before.
    GetElement {
        /// The tuple.
        src: Reg,
        /// Which element.
        index: u32,
        /// Where to put it.
        dst: Reg,
    },
    /// Jump to `fail` unless element `index` (0-based) of the tuple in `src`
    /// (whose arity was tested) is the immediate `word`: a literal in a
    /// head, tested as soon as its tuple is known, before anything else is
    /// read.
    IsElement {
        /// The tuple.
        src: Reg,
        /// Which element.
        index: u32,
        /// The immediate it must be.
        word: Word,
        /// Where to go if it is not.
        fail: Label,
    },
    /// Jump to `fail` unless `src` is a list cell.
    IsCons {
        /// The term to test.
        src: Reg,
        /// Where to go if it is not.
        fail: Label,
    },
    /// `dst :=` the head of the list cell in `src` (tested before).
    GetHead {
        /// The list cell.
        src: Reg,
        /// Where to put its head.
        dst: Reg,
    },
    /// `dst :=` the tail of the list cell in `src` (tested before).
    GetTail {
        /// The list cell.
        src: Reg,
        /// Where to put its tail.
        dst: Reg,
    },
    /// Jump to `fail` unless `src` is a map with at least `size` keys.
    IsMap {
        /// The term to test.
        src: Reg,
        /// The least number of keys.
        size: u32,
        /// Where to go if it is not.
        fail: Label,
    },
    /// `dst :=` the value of `key` (compared exactly, `=:=`) in the map in
    /// `src` (tested before); jump to `fail` if the key is absent.
    GetMapValue {
        /// The map.
        src: Reg,
        /// The key.
        key: Reg,
        /// Where to put the value.
        dst: Reg,
        /// Where to go if the key is absent.
        fail: Label,
    },
    /// Jump to `fail` unless `src` is the immediate `word` (small integer,
    /// atom or `[]`): one machine comparison.
    IsWord {
        /// The term to test.
        src: Reg,
        /// The immediate it must be.
        word: Word,
        /// Where to go if it is not.
        fail: Label,
    },
    /// Jump to `fail` unless `a =:= b` (floats compare bitwise, so `0.0` and
    /// `-0.0` differ; `1` and `1.0` differ).
    IsExactEq {
        /// One term.
        a: Reg,
        /// The other.
        b: Reg,
        /// Where to go if they differ.
        fail: Label,
    },

    // ---- Guard and body values ----------------------------------------------------
    /// `dst := src`.
    Move {
        /// The source register.
        src: Reg,
        /// The destination register.
        dst: Reg,
    },
    /// `dst := bif(args...)` for the first `bif.arity()` registers of
    /// `args`. If the function fails: jump to the `Fail` label (guards) or
    /// make `dst` the atom `'EXIT'` (bodies). `get_tcw`/`set_tcw` read and
    /// change the host's trace control word.
    Call {
        /// The function.
        bif: Bif,
        /// Its arguments (only the first `bif.arity()` are read).
        args: [Reg; 3],
        /// Where to put the result.
        dst: Reg,
        /// What a failure does.
        fail: Fail,
    },
    /// Jump to `fail` unless `a op b` (Erlang's term order; never fails
    /// otherwise).
    Compare {
        /// The comparison.
        op: Cmp,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
        /// Where to go if it does not hold.
        fail: Label,
    },
    /// Jump to `fail` unless the type test `test` (a one-argument `is_*`
    /// function) on `src` gives `expect` (so `expect: false` jumps when the
    /// test holds).
    TypeTest {
        /// The test (one of the [`Bif::is_type_test`] functions).
        test: Bif,
        /// The term to test.
        src: Reg,
        /// The answer that falls through.
        expect: bool,
        /// Where to go on the other answer.
        fail: Label,
    },
    /// Short-circuit step of `andalso`/`orelse`: if `src` is the boolean
    /// `when` jump to `target`; if it is the other boolean fall through;
    /// otherwise jump to `other`.
    BoolBranch {
        /// The value to look at.
        src: Reg,
        /// Which boolean jumps to `target` (`false` for `andalso`).
        when: bool,
        /// Where that boolean goes.
        target: Label,
        /// Where a non-boolean goes.
        other: Label,
    },
    /// `dst :=` the conjunction (`and`) or disjunction (`or`) of all the
    /// registers in `args`, which must all be booleans; otherwise jump to
    /// the `Fail` label (guards) or make `dst` `'EXIT'` (bodies).
    Logic {
        /// `and` or `or`.
        op: LogicOp,
        /// The operands.
        args: Operands,
        /// Where to put the result.
        dst: Reg,
        /// What a non-boolean does.
        fail: Fail,
    },
    /// Jump to `target`.
    Jump {
        /// Where to go.
        target: Label,
    },

    // ---- Building ------------------------------------------------------------------
    /// `dst :=` the tuple of the registers in `elements`.
    MakeTuple {
        /// The elements, first to last.
        elements: Operands,
        /// Where to put the tuple.
        dst: Reg,
    },
    /// `dst := [head | tail]`.
    MakeCons {
        /// The head.
        head: Reg,
        /// The tail.
        tail: Reg,
        /// Where to put the cell.
        dst: Reg,
    },
    /// `dst :=` the proper list of the registers in `elements`.
    MakeList {
        /// The elements, first to last.
        elements: Operands,
        /// Where to put the list.
        dst: Reg,
    },
    /// `dst :=` the map of `keys` to `values` (pairwise, in source key
    /// order; of keys that end up equal the later one wins).
    MakeMap {
        /// The keys.
        keys: Operands,
        /// The values, same length.
        values: Operands,
        /// Where to put the map.
        dst: Reg,
    },

    // ---- Trace actions -------------------------------------------------------------
    /// `dst :=` the pid of the process the event is about (`{self}`).
    SelfPid {
        /// Where to put it.
        dst: Reg,
    },
    /// `{return_trace}` / `{exception_trace}`: sets a flag of the result.
    SetFlag {
        /// The flag.
        flag: TraceFlag,
    },
    /// `{display, X}`: hands `src` to the host to show.
    Display {
        /// The term to show.
        src: Reg,
    },
    /// `dst :=` whether the process has a sequential trace token.
    IsSeqTrace {
        /// Where to put the boolean.
        dst: Reg,
    },
    /// `{set_seq_token, Key, Value}`: `dst := true` (or, faked, what
    /// `seq_trace:get_token(Key)` says, see
    /// `Host::seq_trace_info`), or `'EXIT'`
    /// for a bad key or value.
    SetSeqToken {
        /// The token component.
        key: Reg,
        /// Its new value.
        value: Reg,
        /// Only read the current value (`match_spec_test`).
        fake: bool,
        /// Where to put the result.
        dst: Reg,
    },
    /// `dst :=` the sequential trace token, or `[]`.
    GetSeqToken {
        /// Where to put it.
        dst: Reg,
    },
    /// `dst :=` a binary describing the process.
    ProcessDump {
        /// Where to put it.
        dst: Reg,
    },
    /// `{enable_trace, ...}`, `{disable_trace, ...}`, `{trace, ...}`: asks
    /// the host to change trace flags; `dst :=` its answer or `'EXIT'`.
    ChangeTrace {
        /// Which form.
        how: ChangeTrace,
        /// The process to change, or [`Reg::NONE`] for the current one.
        target: Reg,
        /// The flag (enable/disable) or the flags to disable (trace).
        a: Reg,
        /// Unused (enable/disable) or the flags to enable (trace).
        b: Reg,
        /// Where to put the answer.
        dst: Reg,
    },
    /// `dst :=` `{M, F, A}` of the caller, or `undefined` (`{caller}`).
    Caller {
        /// Where to put it.
        dst: Reg,
    },
    /// `dst :=` `{M, F, A, {File, Line}}` of the caller, or `undefined`.
    CallerLine {
        /// Where to put it.
        dst: Reg,
    },
    /// `dst :=` the current stack trace, at most `depth` frames.
    CurrentStacktrace {
        /// Most frames.
        depth: u32,
        /// Where to put it.
        dst: Reg,
    },
    /// `{silent, Bool}`: `true` turns silent mode on, `false` off, anything
    /// else nothing.
    Silent {
        /// The mode.
        src: Reg,
    },

    // ---- Ending ---------------------------------------------------------------------
    /// The clause matched: the result is `result` (for trace specs, the
    /// register holding what `{message, X}` set).
    Succeed {
        /// The result.
        result: Reg,
    },
    /// No clause matched.
    NoMatch,
}

/// What a failing guard function does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    /// Jump here: in guards, a failure fails the clause.
    Jump(Label),
    /// Make the value `'EXIT'` and carry on: in bodies.
    Exit,
}

/// A comparison of [`Op::Compare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `=<`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `/=`
    Ne,
    /// `=:=`
    ExactEq,
    /// `=/=`
    ExactNe,
}

impl Cmp {
    /// The comparison a comparison function computes.
    pub fn of(bif: Bif) -> Option<Cmp> {
        Some(match bif {
            Bif::Lt => Cmp::Lt,
            Bif::Le => Cmp::Le,
            Bif::Gt => Cmp::Gt,
            Bif::Ge => Cmp::Ge,
            Bif::Eq => Cmp::Eq,
            Bif::Ne => Cmp::Ne,
            Bif::ExactEq => Cmp::ExactEq,
            Bif::ExactNe => Cmp::ExactNe,
            _ => return None,
        })
    }

    /// The comparison that holds exactly when this one does not (the term
    /// order is total).
    pub fn negate(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Ge,
            Cmp::Le => Cmp::Gt,
            Cmp::Gt => Cmp::Le,
            Cmp::Ge => Cmp::Lt,
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            Cmp::ExactEq => Cmp::ExactNe,
            Cmp::ExactNe => Cmp::ExactEq,
        }
    }

    /// The comparison that holds of `b` and `a` exactly when this one
    /// holds of `a` and `b` (`<` for `>`; the equalities are their own).
    ///
    /// ```
    /// use matchspec::ir::Cmp;
    ///
    /// assert_eq!(Cmp::Lt.swapped(), Cmp::Gt);
    /// assert_eq!(Cmp::Ge.swapped(), Cmp::Le);
    /// assert_eq!(Cmp::ExactNe.swapped(), Cmp::ExactNe);
    /// ```
    pub fn swapped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            Cmp::Eq | Cmp::Ne | Cmp::ExactEq | Cmp::ExactNe => self,
        }
    }

    /// Its Erlang spelling.
    pub fn name(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "=<",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "/=",
            Cmp::ExactEq => "=:=",
            Cmp::ExactNe => "=/=",
        }
    }
}

impl Cmp {
    /// Does the comparison hold for two terms in this order (for which
    /// `==` and `=:=` agree, as for small integers)?
    #[inline]
    pub(crate) fn of_ordering(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Cmp::Lt => ord == Less,
            Cmp::Le => ord != Greater,
            Cmp::Gt => ord == Greater,
            Cmp::Ge => ord != Less,
            Cmp::Eq | Cmp::ExactEq => ord == Equal,
            Cmp::Ne | Cmp::ExactNe => ord != Equal,
        }
    }
}

/// The operator of [`Op::Logic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogicOp {
    /// `{'and', ...}`
    And,
    /// `{'or', ...}`
    Or,
}

/// A flag of a trace result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFlag {
    /// `{return_trace}`: trace the return from the call.
    ReturnTrace,
    /// `{exception_trace}`: trace the return or the exception.
    ExceptionTrace,
}

/// The forms of [`Op::ChangeTrace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeTrace {
    /// `{enable_trace, [Target,] Flag}`
    Enable,
    /// `{disable_trace, [Target,] Flag}`
    Disable,
    /// `{trace, [Target,] Disable, Enable}`
    Trace,
}

impl Cmp {
    /// Does `a op b` hold? (Erlang's term order; `=:=` is exact.)
    pub fn holds(self, a: crate::term::TermRef<'_>, b: crate::term::TermRef<'_>) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let (x, y) = (a.word(), b.word());
        // Two small integers: the common case, settled without decoding.
        if let (Some(p), Some(q)) = (x.as_small(), y.as_small()) {
            return self.of_ordering(p.cmp(&q));
        }
        // Immediates are equal exactly when their words are (a float is
        // never immediate, so `1 == 1.0` does not get here).
        if x.is_immediate() && y.is_immediate() {
            if x == y {
                return self.of_ordering(Equal);
            }
            match self {
                Cmp::Eq | Cmp::ExactEq => return false,
                Cmp::Ne | Cmp::ExactNe => return true,
                Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge => {}
            }
        }
        // Mixed numbers (bignums, floats): compared by value directly.
        if let Some(ord) = a.cmp_numbers(&b)
            && !matches!(self, Cmp::ExactEq | Cmp::ExactNe)
        {
            return self.of_ordering(ord);
        }
        match self {
            Cmp::ExactEq => a.eq_exact(&b),
            Cmp::ExactNe => !a.eq_exact(&b),
            _ => {
                let ord = if a.word() == b.word() && a.word().is_immediate() {
                    Equal
                } else {
                    a.cmp_term(&b)
                };
                match self {
                    Cmp::Lt => ord == Less,
                    Cmp::Le => ord != Greater,
                    Cmp::Gt => ord == Greater,
                    Cmp::Ge => ord != Less,
                    Cmp::Eq => ord == Equal,
                    Cmp::Ne => ord != Equal,
                    Cmp::ExactEq | Cmp::ExactNe => false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_twice_is_the_identity() {
        for op in [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne, Cmp::ExactEq, Cmp::ExactNe]
        {
            assert_eq!(op.swapped().swapped(), op);
            assert_ne!(op.swapped() == op, matches!(op, Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge));
        }
    }
}
