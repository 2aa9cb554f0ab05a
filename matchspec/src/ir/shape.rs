//! The shape of an [`Op`]: the labels it may jump to, the registers it
//! reads and writes, whether control goes on after it, and what it may do
//! besides. Defined here once, with one exhaustive `match` each, for every
//! pass and engine that needs it (relabelling, the verifier, the JIT's
//! analyses), so that adding an op means saying it here and lowering it,
//! and nothing else.

use super::{Fail, Label, Op, Reg};
use crate::bif::Bif;

/// What an op may do besides reading and writing registers (and jumping),
/// least first: an engine that runs an op of a greater effect must allow
/// for it (the JIT hands outcomes over differently, see `jit/src/abi.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Nothing else.
    Pure,
    /// May build terms on the run's heap (tuples, lists, maps, bignums,
    /// floats, the argument list of a trace event).
    Build,
    /// May set a flag of the result (`{return_trace}`, `{exception_trace}`).
    Flag,
    /// Asks or tells the host: the process, its trace settings, its
    /// sequential trace token, the node, the trace control word.
    Host,
}

/// The labels of an op: at most two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    labels: [Option<Label>; 2],
}

impl Labels {
    fn of(labels: [Option<Label>; 2]) -> Labels {
        Labels { labels }
    }

    /// Is `label` one of them?
    pub fn contains(&self, label: Label) -> bool {
        self.labels.contains(&Some(label))
    }
}

impl IntoIterator for Labels {
    type Item = Label;
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<Label>, 2>>;

    fn into_iter(self) -> Self::IntoIter {
        self.labels.into_iter().flatten()
    }
}

impl Op {
    /// The labels the op may jump to (a `Fail::Exit` body function has
    /// none). Control also goes on to the next op unless
    /// [`Op::is_terminator`].
    pub fn labels(&self) -> Labels {
        let mut op = *self;
        let mut labels = [None, None];
        let mut n = 0;
        op.labels_mut(|l| {
            labels[n] = Some(*l);
            n += 1;
        });
        Labels::of(labels)
    }

    /// Calls `f` on each label of the op, which it may change (what
    /// relabelling passes use).
    pub fn labels_mut(&mut self, mut f: impl FnMut(&mut Label)) {
        match self {
            Op::IsArity { fail, .. }
            | Op::IsArityAtLeast { fail, .. }
            | Op::IsTuple { fail, .. }
            | Op::IsElement { fail, .. }
            | Op::IsCons { fail, .. }
            | Op::IsMap { fail, .. }
            | Op::GetMapValue { fail, .. }
            | Op::IsWord { fail, .. }
            | Op::IsExactEq { fail, .. }
            | Op::Compare { fail, .. }
            | Op::TypeTest { fail, .. } => f(fail),
            Op::Call { fail, .. } | Op::Logic { fail, .. } => {
                if let Fail::Jump(label) = fail {
                    f(label);
                }
            }
            Op::BoolBranch { target, other, .. } => {
                f(target);
                f(other);
            }
            Op::Jump { target } => f(target),
            Op::GetArg { .. }
            | Op::GetArgList { .. }
            | Op::GetElement { .. }
            | Op::GetHead { .. }
            | Op::GetTail { .. }
            | Op::Move { .. }
            | Op::MakeTuple { .. }
            | Op::MakeCons { .. }
            | Op::MakeList { .. }
            | Op::MakeMap { .. }
            | Op::SelfPid { .. }
            | Op::SetFlag { .. }
            | Op::Display { .. }
            | Op::IsSeqTrace { .. }
            | Op::SetSeqToken { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::ChangeTrace { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::Silent { .. }
            | Op::Succeed { .. }
            | Op::NoMatch => {}
        }
    }

    /// The register the op writes, if any.
    pub fn writes(&self) -> Option<Reg> {
        match *self {
            Op::GetArg { dst, .. }
            | Op::GetArgList { dst }
            | Op::GetElement { dst, .. }
            | Op::GetHead { dst, .. }
            | Op::GetTail { dst, .. }
            | Op::GetMapValue { dst, .. }
            | Op::Move { dst, .. }
            | Op::Call { dst, .. }
            | Op::Logic { dst, .. }
            | Op::MakeTuple { dst, .. }
            | Op::MakeCons { dst, .. }
            | Op::MakeList { dst, .. }
            | Op::MakeMap { dst, .. }
            | Op::SelfPid { dst }
            | Op::IsSeqTrace { dst }
            | Op::SetSeqToken { dst, .. }
            | Op::GetSeqToken { dst }
            | Op::ProcessDump { dst }
            | Op::ChangeTrace { dst, .. }
            | Op::Caller { dst }
            | Op::CallerLine { dst }
            | Op::CurrentStacktrace { dst, .. } => Some(dst),
            Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::IsTuple { .. }
            | Op::IsElement { .. }
            | Op::IsCons { .. }
            | Op::IsMap { .. }
            | Op::IsWord { .. }
            | Op::IsExactEq { .. }
            | Op::Compare { .. }
            | Op::TypeTest { .. }
            | Op::BoolBranch { .. }
            | Op::Jump { .. }
            | Op::SetFlag { .. }
            | Op::Display { .. }
            | Op::Silent { .. }
            | Op::Succeed { .. }
            | Op::NoMatch => None,
        }
    }

    /// The term a head op takes apart or tests, which must be a part of
    /// the input (see `ir::op`, "Head ops read only the input"): an engine
    /// on encoded terms reads it in the bytes (see [`Encoded`](super::Encoded)).
    pub fn input_part(&self) -> Option<Reg> {
        match *self {
            Op::IsTuple { src, .. }
            | Op::GetElement { src, .. }
            | Op::IsElement { src, .. }
            | Op::IsCons { src, .. }
            | Op::GetHead { src, .. }
            | Op::GetTail { src, .. }
            | Op::IsMap { src, .. }
            | Op::GetMapValue { src, .. } => Some(src),
            Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::GetArg { .. }
            | Op::GetArgList { .. }
            | Op::IsWord { .. }
            | Op::IsExactEq { .. }
            | Op::Move { .. }
            | Op::Call { .. }
            | Op::Compare { .. }
            | Op::TypeTest { .. }
            | Op::BoolBranch { .. }
            | Op::Logic { .. }
            | Op::Jump { .. }
            | Op::MakeTuple { .. }
            | Op::MakeCons { .. }
            | Op::MakeList { .. }
            | Op::MakeMap { .. }
            | Op::SelfPid { .. }
            | Op::SetFlag { .. }
            | Op::Display { .. }
            | Op::IsSeqTrace { .. }
            | Op::SetSeqToken { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::ChangeTrace { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::Silent { .. }
            | Op::Succeed { .. }
            | Op::NoMatch => None,
        }
    }

    /// `(src, dst)` if the op puts a part of the term in `src` into `dst`
    /// (an element, a list cell's head or tail, a map's value): of an
    /// encoded term, the part is encoded too.
    pub fn part(&self) -> Option<(Reg, Reg)> {
        match *self {
            Op::GetElement { src, dst, .. }
            | Op::GetHead { src, dst }
            | Op::GetTail { src, dst }
            | Op::GetMapValue { src, dst, .. } => Some((src, dst)),
            Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::GetArg { .. }
            | Op::GetArgList { .. }
            | Op::IsTuple { .. }
            | Op::IsElement { .. }
            | Op::IsCons { .. }
            | Op::IsMap { .. }
            | Op::IsWord { .. }
            | Op::IsExactEq { .. }
            | Op::Move { .. }
            | Op::Call { .. }
            | Op::Compare { .. }
            | Op::TypeTest { .. }
            | Op::BoolBranch { .. }
            | Op::Logic { .. }
            | Op::Jump { .. }
            | Op::MakeTuple { .. }
            | Op::MakeCons { .. }
            | Op::MakeList { .. }
            | Op::MakeMap { .. }
            | Op::SelfPid { .. }
            | Op::SetFlag { .. }
            | Op::Display { .. }
            | Op::IsSeqTrace { .. }
            | Op::SetSeqToken { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::ChangeTrace { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::Silent { .. }
            | Op::Succeed { .. }
            | Op::NoMatch => None,
        }
    }

    /// The registers the op reads, given the program's operand lists
    /// ([`Program::operands`](super::Program::operands)): what the
    /// interpreter reads in the register file for it. An absent operand
    /// ([`Reg::NONE`], as the target of `{enable_trace, Flag}`) is not read.
    pub fn reads<'a>(&self, operands: &'a [Reg]) -> Reads<'a> {
        let (fixed, list): ([Reg; 3], &[Reg]) = match *self {
            Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::GetArg { .. }
            | Op::GetArgList { .. }
            | Op::Jump { .. }
            | Op::SelfPid { .. }
            | Op::SetFlag { .. }
            | Op::IsSeqTrace { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::NoMatch => ([Reg::NONE; 3], &[]),
            Op::IsTuple { src, .. }
            | Op::GetElement { src, .. }
            | Op::IsElement { src, .. }
            | Op::IsCons { src, .. }
            | Op::GetHead { src, .. }
            | Op::GetTail { src, .. }
            | Op::IsMap { src, .. }
            | Op::IsWord { src, .. }
            | Op::Move { src, .. }
            | Op::TypeTest { src, .. }
            | Op::BoolBranch { src, .. }
            | Op::Display { src }
            | Op::Silent { src }
            | Op::Succeed { result: src } => ([src, Reg::NONE, Reg::NONE], &[]),
            Op::GetMapValue { src, key, .. } => ([src, key, Reg::NONE], &[]),
            Op::IsExactEq { a, b, .. } | Op::Compare { a, b, .. } => ([a, b, Reg::NONE], &[]),
            Op::Call { bif, args, .. } => {
                let mut fixed = [Reg::NONE; 3];
                let n = bif.arity().min(3);
                fixed[..n].copy_from_slice(&args[..n]);
                (fixed, &[])
            }
            Op::Logic { args, .. } => ([Reg::NONE; 3], slice(operands, args)),
            Op::MakeTuple { elements, .. } | Op::MakeList { elements, .. } => {
                ([Reg::NONE; 3], slice(operands, elements))
            }
            Op::MakeCons { head, tail, .. } => ([head, tail, Reg::NONE], &[]),
            Op::MakeMap { keys, values, .. } => {
                // Keys then values: the two lists lie side by side.
                let (keys, values) = (slice(operands, keys), slice(operands, values));
                return Reads { fixed: [Reg::NONE; 3], next: 0, lists: [keys, values] };
            }
            Op::SetSeqToken { key, value, .. } => ([key, value, Reg::NONE], &[]),
            Op::ChangeTrace { target, a, b, .. } => ([target, a, b], &[]),
        };
        Reads { fixed, next: 0, lists: [list, &[]] }
    }

    /// May the op change the running process's trace flags
    /// (`enable_trace`, `disable_trace`, `trace`, `silent`)? If no op of a
    /// program may, the flags a trace point read before running it still
    /// hold after.
    pub fn changes_trace_flags(&self) -> bool {
        matches!(self, Op::ChangeTrace { .. } | Op::Silent { .. })
    }

    /// Does control never go on to the next op (it jumps, or the run
    /// ends)?
    pub fn is_terminator(&self) -> bool {
        matches!(self, Op::Jump { .. } | Op::Succeed { .. } | Op::NoMatch)
    }

    /// What the op may do besides registers and jumps.
    pub fn effect(&self) -> Effect {
        match *self {
            Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::GetArg { .. }
            | Op::IsTuple { .. }
            | Op::GetElement { .. }
            | Op::IsElement { .. }
            | Op::IsCons { .. }
            | Op::GetHead { .. }
            | Op::GetTail { .. }
            | Op::IsMap { .. }
            | Op::GetMapValue { .. }
            | Op::IsWord { .. }
            | Op::IsExactEq { .. }
            | Op::Move { .. }
            | Op::Compare { .. }
            | Op::TypeTest { .. }
            | Op::BoolBranch { .. }
            | Op::Logic { .. }
            | Op::Jump { .. }
            | Op::Succeed { .. }
            | Op::NoMatch => Effect::Pure,
            Op::GetArgList { .. }
            | Op::MakeTuple { .. }
            | Op::MakeCons { .. }
            | Op::MakeList { .. }
            | Op::MakeMap { .. } => Effect::Build,
            Op::Call { bif, .. } => bif_effect(bif),
            Op::SetFlag { .. } => Effect::Flag,
            Op::SelfPid { .. }
            | Op::Display { .. }
            | Op::IsSeqTrace { .. }
            | Op::SetSeqToken { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::ChangeTrace { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::Silent { .. } => Effect::Host,
        }
    }
}

/// A guard function asks the host, or may build (a bignum, a float, a
/// sub-binary): the BIF table says which.
fn bif_effect(bif: Bif) -> Effect {
    if bif.asks_host() { Effect::Host } else { Effect::Build }
}

fn slice(operands: &[Reg], run: super::Operands) -> &[Reg] {
    operands.get(run.range()).unwrap_or(&[])
}

/// The registers an op reads ([`Op::reads`]): up to three fixed operands,
/// then the registers of its operand lists.
#[derive(Clone, Debug)]
pub struct Reads<'a> {
    fixed: [Reg; 3],
    next: usize,
    lists: [&'a [Reg]; 2],
}

impl Iterator for Reads<'_> {
    type Item = Reg;

    fn next(&mut self) -> Option<Reg> {
        while self.next < 3 {
            let reg = self.fixed[self.next];
            self.next += 1;
            if reg != Reg::NONE {
                return Some(reg);
            }
        }
        for list in &mut self.lists {
            if let Some((&first, rest)) = list.split_first() {
                *list = rest;
                return Some(first);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{LogicOp, Operands};

    #[test]
    fn labels_reads_and_writes_of_a_few_ops() {
        let compare = Op::Compare { op: crate::ir::Cmp::Lt, a: Reg(1), b: Reg(2), fail: Label(9) };
        assert_eq!(compare.labels().into_iter().collect::<Vec<_>>(), [Label(9)]);
        assert_eq!(compare.reads(&[]).collect::<Vec<_>>(), [Reg(1), Reg(2)]);
        assert_eq!(compare.writes(), None);
        assert!(!compare.is_terminator());
        assert!(!compare.changes_trace_flags());
        assert!(Op::Silent { src: Reg(1) }.changes_trace_flags());

        let branch = Op::BoolBranch { src: Reg(3), when: false, target: Label(4), other: Label(7) };
        assert!(branch.labels().contains(Label(4)) && branch.labels().contains(Label(7)));

        let body_call = Op::Call {
            bif: Bif::Hd,
            args: [Reg(5), Reg(0), Reg(0)],
            dst: Reg(6),
            fail: Fail::Exit,
        };
        assert_eq!(body_call.labels(), Labels::default());
        assert_eq!(body_call.reads(&[]).collect::<Vec<_>>(), [Reg(5)]);
        assert_eq!(body_call.writes(), Some(Reg(6)));

        let operands = [Reg(1), Reg(2), Reg(3), Reg(4)];
        let logic = Op::Logic {
            op: LogicOp::And,
            args: Operands { start: 1, len: 2 },
            dst: Reg(8),
            fail: Fail::Jump(Label(3)),
        };
        assert_eq!(logic.reads(&operands).collect::<Vec<_>>(), [Reg(2), Reg(3)]);
        let map = Op::MakeMap {
            keys: Operands { start: 0, len: 2 },
            values: Operands { start: 2, len: 2 },
            dst: Reg(9),
        };
        assert_eq!(map.reads(&operands).collect::<Vec<_>>(), operands);
        assert_eq!(map.effect(), Effect::Build);
    }

    #[test]
    fn relabelling_changes_every_label() {
        let mut op = Op::BoolBranch { src: Reg(3), when: true, target: Label(4), other: Label(7) };
        op.labels_mut(|l| l.0 += 10);
        assert_eq!(op.labels().into_iter().collect::<Vec<_>>(), [Label(14), Label(17)]);
    }

    #[test]
    fn an_absent_target_is_not_read() {
        let op = Op::ChangeTrace {
            how: crate::ir::ChangeTrace::Enable,
            target: Reg::NONE,
            a: Reg(2),
            b: Reg::NONE,
            dst: Reg(3),
        };
        assert_eq!(op.reads(&[]).collect::<Vec<_>>(), [Reg(2)]);
        assert_eq!(op.effect(), Effect::Host);
    }

    #[test]
    fn functions_that_ask_the_host_are_host_effects() {
        let call = |bif| Op::Call { bif, args: [Reg(1); 3], dst: Reg(2), fail: Fail::Exit };
        assert_eq!(call(Bif::Node0).effect(), Effect::Host);
        assert_eq!(call(Bif::GetTcw).effect(), Effect::Host);
        assert_eq!(call(Bif::Add).effect(), Effect::Build);
    }
}
