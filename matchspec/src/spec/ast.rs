//! [`CheckedSpec`]: a match spec that passed the checker, as a typed tree.
//!
//! Nodes live in flat arenas and refer to each other by index ([`PatId`],
//! [`ExprId`]), so a tree of any depth is built, walked and dropped without
//! recursion in `Drop`. Literals live in the spec's own [`Heap`] (the
//! program's literal space), already transformed the way ERTS folds
//! constants: `{const, T}` is `T`, `{{A, B}}` is `{A, B}`.

use super::Kind;
use crate::bif::Bif;
use crate::release::Release;
use crate::term::{Heap, Word};

/// A checked match spec: what the IR compiler consumes.
#[derive(Clone, Debug)]
pub struct CheckedSpec {
    pub(crate) kind: Kind,
    pub(crate) release: Release,
    pub(crate) clauses: Vec<Clause>,
    pub(crate) pats: Vec<Pat>,
    pub(crate) exprs: Vec<Expr>,
    pub(crate) literals: Heap,
    pub(crate) num_vars: u32,
}

/// Index of a pattern node in [`CheckedSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PatId(pub(crate) u32);

/// Index of an expression node in [`CheckedSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExprId(pub(crate) u32);

/// A match variable `'$N'`, numbered as ERTS numbers it (after its
/// renumbering of specs with variables from `'$25'` up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub(crate) u32);

impl VarId {
    /// The number `N` of `'$N'`.
    pub fn number(self) -> u32 {
        self.0
    }
}

/// One clause: `{Head, Guards, Body}`.
#[derive(Clone, Debug)]
pub struct Clause {
    /// What the input must look like.
    pub head: Head,
    /// Expressions that must all evaluate to `true`, in order.
    pub guards: Vec<ExprId>,
    /// Expressions evaluated in order when head and guards match.
    pub body: Vec<ExprId>,
    /// The variables the head binds, ascending (what `'$$'` lists).
    pub bound: Vec<VarId>,
}

/// A clause head.
#[derive(Clone, Debug)]
pub enum Head {
    /// Table specs: one pattern against the whole input term.
    Term(PatId),
    /// Trace specs: one pattern per argument; the arity must be equal.
    Args(Vec<PatId>),
    /// Trace specs with a prefix head `[P1, ..., Pn | '_']` (OTP 29): one
    /// pattern for each of the first `n` arguments; there may be more.
    ArgsPrefix(Vec<PatId>),
    /// Trace specs with head `'$N'`: binds the list of all arguments.
    AllArgs(VarId),
    /// Trace specs with head `'_'`: any arguments.
    AnyArgs,
}

/// A pattern node.
#[derive(Clone, Debug)]
pub enum Pat {
    /// `'_'`: matches anything.
    Skip,
    /// `'$N'`: binds on its first occurrence, must be `=:=` the bound value
    /// on later ones (the compiler decides which is which).
    Var(VarId),
    /// A literal: the input must be exactly equal (`=:=`; floats bitwise).
    Literal(Word),
    /// A tuple of exactly these elements.
    Tuple(Vec<PatId>),
    /// A list cell.
    Cons(PatId, PatId),
    /// A map with at least these (literal) keys whose values match.
    Map(Vec<(Word, PatId)>),
}

/// An expression node of a guard or body.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A constant (folded by the checker as ERTS folds it).
    Const(Word),
    /// A bound variable.
    Var(VarId),
    /// `'$_'`: the input (table) or the list of arguments (trace).
    Target,
    /// `'$$'`: the values of the clause's bound variables, in variable order.
    Bindings,
    /// `{{E1, ..., En}}`: builds a tuple; elements evaluate right to left.
    Tuple(Vec<ExprId>),
    /// `[H | T]`: builds a list cell; head evaluates before tail.
    Cons(ExprId, ExprId),
    /// `#{K => V}`: builds a map. The pairs are in the order ERTS stores
    /// the source map. A small map's values evaluate last to first, then its
    /// keys last to first; a `large` one's (more than 32 keys) pairs
    /// evaluate last to first, each key before its value. Of keys that end
    /// up equal, the later one wins.
    Map {
        /// The key and value expressions.
        pairs: Vec<(ExprId, ExprId)>,
        /// More than 32 keys (ERTS evaluates those pairwise).
        large: bool,
    },
    /// A guard function; arguments evaluate right to left.
    Call(Bif, Vec<ExprId>),
    /// `{'and', ...}`: strict, all arguments evaluated (right to left).
    And(Vec<ExprId>),
    /// `{'or', ...}`: strict, all arguments evaluated (right to left).
    Or(Vec<ExprId>),
    /// `{'andalso', ...}` (and `andthen`): short-circuit, left to right; the
    /// last argument's value is returned unchecked.
    AndAlso(Vec<ExprId>),
    /// `{'orelse', ...}`: short-circuit, left to right; the last argument's
    /// value is returned unchecked.
    OrElse(Vec<ExprId>),
    /// `{self}`.
    SelfPid,
    /// `{message, X}`: makes `X` the trace result; value `true`.
    Message(ExprId),
    /// `{return_trace}`: value `true`.
    ReturnTrace,
    /// `{exception_trace}`: value `true`.
    ExceptionTrace,
    /// `{display, X}`: shows `X`; value `true`.
    Display(ExprId),
    /// `{is_seq_trace}`.
    IsSeqTrace,
    /// `{set_seq_token, Key, Value}` (key evaluated after value); faked
    /// (reads instead of writes) when compiled for `match_spec_test`.
    SetSeqToken {
        /// The token component.
        key: ExprId,
        /// Its new value.
        value: ExprId,
        /// Only read the current value, as `match_spec_test` does.
        fake: bool,
    },
    /// `{get_seq_token}`.
    GetSeqToken,
    /// `{process_dump}`.
    ProcessDump,
    /// `{enable_trace, Flag}` or `{enable_trace, PidOrName, Flag}`.
    EnableTrace {
        /// The process, or `None` for the current one.
        target: Option<ExprId>,
        /// The trace flag.
        flag: ExprId,
    },
    /// `{disable_trace, Flag}` or `{disable_trace, PidOrName, Flag}`.
    DisableTrace {
        /// The process, or `None` for the current one.
        target: Option<ExprId>,
        /// The trace flag.
        flag: ExprId,
    },
    /// `{trace, Disable, Enable}` or `{trace, PidOrName, Disable, Enable}`.
    Trace {
        /// The process, or `None` for the current one.
        target: Option<ExprId>,
        /// Flags to turn off.
        disable: ExprId,
        /// Flags to turn on.
        enable: ExprId,
    },
    /// `{caller}`.
    Caller,
    /// `{caller_line}`.
    CallerLine,
    /// `{current_stacktrace}` / `{current_stacktrace, N}`, depth already
    /// clamped.
    CurrentStacktrace(u32),
    /// `{silent, Bool}`: value `true`.
    Silent(ExprId),
}

impl CheckedSpec {
    /// The event kind it was checked for.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The release whose rules it was checked by (and whose answers its
    /// functions give).
    pub fn release(&self) -> Release {
        self.release
    }

    /// The clauses, in order.
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// A pattern node.
    pub fn pat(&self, id: PatId) -> &Pat {
        &self.pats[id.0 as usize]
    }

    /// An expression node.
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.0 as usize]
    }

    /// The heap holding the literals.
    pub fn literals(&self) -> &Heap {
        &self.literals
    }

    /// One more than the largest variable number used.
    pub fn num_vars(&self) -> u32 {
        self.num_vars
    }
}
