//! The IR compiler: a [`CheckedSpec`] in, a [`Program`] out.
//!
//! Heads become tests that read the input into variable registers, guards
//! become tests that jump to the next clause, bodies become straight-line
//! code that evaluates in ERTS's order (function arguments and tuple
//! elements last to first, list cells head first, map values then keys,
//! `andalso`/`orelse` left to right), because trace actions make the order
//! observable.
//!
//! A guard expression is compiled as a *condition*: comparisons, type
//! tests, `andalso` and `orelse` jump straight to the next clause instead of
//! computing a boolean and testing it, which is the same thing since those
//! cannot raise and a guard's only job is to be `true`. Body expressions
//! whose values are thrown away are compiled only if they (or something in
//! them) act on the trace: the rest can have no effect.

use std::collections::HashMap;

use super::op::{ChangeTrace, Cmp};
use super::{ArgPrologue, Fail, Label, LogicOp, Op, Operands, Program, Reg, TraceFlag};
use crate::bif::Bif;
use crate::spec::{CheckedSpec, Expr, ExprId, Head, Kind, Pat, PatId, VarId};
use crate::term::{Atom, Word};

/// Compiles a checked spec.
pub(crate) fn compile(spec: &CheckedSpec) -> Program {
    let mut c = Compiler::new(spec);
    for i in 0..spec.clauses().len() {
        let start = c.here();
        c.clause_starts.push(start);
        let fail = c.new_label();
        c.clause(i, fail);
        c.bind(fail);
    }
    c.emit(Op::NoMatch);
    c.finish()
}

struct Compiler<'s> {
    spec: &'s CheckedSpec,
    code: Vec<Op>,
    operands: Vec<Reg>,
    /// Label id -> instruction index, once bound.
    labels: Vec<Option<u32>>,
    constants: Vec<Word>,
    constant_regs: HashMap<u64, Reg>,
    first_constant: u32,
    first_temp: u32,
    top: u32,
    max_top: u32,
    clause_starts: Vec<Label>,
    /// Variables bound so far in the current clause's head.
    bound: Vec<bool>,
    /// Head temporaries free for reuse.
    free: Vec<Reg>,
    /// Where the current trace clause keeps its result.
    result: Reg,
    /// What a failing function does in the current context.
    fail: Fail,
}

/// Labels are emitted as ids and resolved to instruction indices at the end.
const LABEL_BIAS: u32 = 1 << 31;

impl<'s> Compiler<'s> {
    fn new(spec: &'s CheckedSpec) -> Compiler<'s> {
        let first_constant = 1 + spec.num_vars();
        let mut c = Compiler {
            spec,
            code: Vec::new(),
            operands: Vec::new(),
            labels: Vec::new(),
            constants: Vec::new(),
            constant_regs: HashMap::new(),
            first_constant,
            first_temp: first_constant,
            top: first_constant,
            max_top: first_constant,
            clause_starts: Vec::new(),
            bound: vec![false; spec.num_vars() as usize],
            free: Vec::new(),
            result: Reg::NONE,
            fail: Fail::Exit,
        };
        c.collect_constants();
        c.first_temp = c.first_constant + c.constants.len() as u32;
        c.top = c.first_temp;
        c.max_top = c.first_temp;
        c
    }

    /// Gives every constant the spec uses a register, before any temporary.
    fn collect_constants(&mut self) {
        let spec = self.spec;
        let mut words = vec![Word::atom(Atom::TRUE), Word::atom(Atom::EXIT)];
        for e in &spec.exprs {
            if let Expr::Const(w) = e {
                words.push(*w);
            }
        }
        for p in &spec.pats {
            match p {
                Pat::Map(entries) => words.extend(entries.iter().map(|(k, _)| *k)),
                Pat::Literal(w) if !w.is_immediate() => words.push(*w),
                _ => {}
            }
        }
        for w in words {
            if !self.constant_regs.contains_key(&w.to_bits()) {
                let reg = Reg(self.first_constant + self.constants.len() as u32);
                self.constant_regs.insert(w.to_bits(), reg);
                self.constants.push(w);
            }
        }
    }

    fn finish(mut self) -> Program {
        let labels = self.labels;
        let resolve = |l: Label| -> Label {
            if l.0 >= LABEL_BIAS {
                Label(labels[(l.0 - LABEL_BIAS) as usize].unwrap_or(0))
            } else {
                l
            }
        };
        for op in &mut self.code {
            op.labels_mut(|l| *l = resolve(*l));
        }
        let variables = (0..self.spec.num_vars())
            .filter(|&n| self.spec.clauses().iter().any(|c| c.bound.contains(&VarId(n))))
            .map(|n| (n, var_reg(VarId(n))))
            .collect();
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let prologue = ArgPrologue::of(&self.code);
        let program = Program {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            kind: self.spec.kind(),
            release: self.spec.release(),
            code: self.code,
            operands: self.operands,
            constants: self.constants,
            first_constant: self.first_constant,
            registers: self.max_top,
            literals: self.spec.literals().clone(),
            clause_starts: self.clause_starts,
            variables,
            prologue,
        };
        debug_assert_eq!(program.verify(), Ok(()), "the compiler made a malformed program");
        program
    }

    // ---- Emission helpers -------------------------------------------------------

    fn emit(&mut self, op: Op) {
        self.code.push(op);
    }

    fn here(&self) -> Label {
        Label(self.code.len() as u32)
    }

    fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label(LABEL_BIAS + self.labels.len() as u32 - 1)
    }

    fn bind(&mut self, label: Label) {
        self.labels[(label.0 - LABEL_BIAS) as usize] = Some(self.code.len() as u32);
    }

    fn constant(&self, w: Word) -> Reg {
        // Every constant was collected up front.
        self.constant_regs.get(&w.to_bits()).copied().unwrap_or(Reg::NONE)
    }

    fn true_reg(&self) -> Reg {
        self.constant(Word::atom(Atom::TRUE))
    }

    fn temp(&mut self) -> Reg {
        let r = Reg(self.top);
        self.top += 1;
        self.max_top = self.max_top.max(self.top);
        r
    }

    fn operand_list(&mut self, regs: &[Reg]) -> Operands {
        let start = self.operands.len() as u32;
        self.operands.extend_from_slice(regs);
        Operands { start, len: regs.len() as u32 }
    }

    // ---- Clauses ------------------------------------------------------------------

    fn clause(&mut self, index: usize, fail: Label) {
        let clause = &self.spec.clauses()[index];
        self.bound.iter_mut().for_each(|b| *b = false);
        self.top = self.first_temp;
        self.free.clear();
        match &clause.head {
            Head::Term(p) => self.root_pattern(*p, Reg::INPUT, fail),
            Head::Args(pats) | Head::ArgsPrefix(pats) => {
                let arity = pats.len() as u32;
                self.emit(if matches!(clause.head, Head::ArgsPrefix(_)) {
                    Op::IsArityAtLeast { arity, fail }
                } else {
                    Op::IsArity { arity, fail }
                });
                for (i, &p) in pats.iter().enumerate() {
                    if let Some(dst) = self.place(p) {
                        self.emit(Op::GetArg { index: i as u32, dst });
                        self.check_placed(p, dst, fail);
                    }
                }
            }
            Head::AllArgs(v) => {
                self.bound[v.0 as usize] = true;
                self.emit(Op::GetArgList { dst: var_reg(*v) });
            }
            Head::AnyArgs => {}
        }

        self.top = self.first_temp;
        self.free.clear();
        self.fail = Fail::Jump(fail);
        for &g in &clause.guards {
            self.condition(g, fail);
        }

        self.fail = Fail::Exit;
        self.top = self.first_temp;
        match self.spec.kind() {
            Kind::Table => {
                // Only the last value counts; table bodies cannot act on
                // anything, so the others are not computed at all.
                let result = match clause.body.last() {
                    Some(&last) => self.operand(last),
                    None => self.true_reg(),
                };
                self.emit(Op::Succeed { result });
            }
            Kind::Call | Kind::Send | Kind::Receive => {
                let result = self.temp();
                self.result = result;
                self.emit(Op::Move { src: self.true_reg(), dst: result });
                for &e in &clause.body {
                    if self.has_effect(e) {
                        let saved = self.top;
                        self.operand(e);
                        self.top = saved;
                    }
                }
                self.emit(Op::Succeed { result });
            }
        }
    }

    // ---- Heads ---------------------------------------------------------------------

    /// Matches pattern `p` against the term in `src`.
    fn root_pattern(&mut self, p: PatId, src: Reg, fail: Label) {
        match self.spec.pat(p) {
            Pat::Skip => {}
            Pat::Var(v) if !self.bound[v.0 as usize] => {
                self.bound[v.0 as usize] = true;
                self.emit(Op::Move { src, dst: var_reg(*v) });
            }
            _ => self.check_placed(p, src, fail),
        }
    }

    /// The register to read the term for pattern `p` into, or `None` if the
    /// pattern does not look at it. An unbound variable is read straight
    /// into its own register (and becomes bound); anything else into a head
    /// temporary.
    fn place(&mut self, p: PatId) -> Option<Reg> {
        match self.spec.pat(p) {
            Pat::Skip => None,
            Pat::Var(v) if !self.bound[v.0 as usize] => {
                self.bound[v.0 as usize] = true;
                Some(var_reg(*v))
            }
            _ => Some(self.head_temp()),
        }
    }

    /// A temporary for head matching: head temporaries are recycled (a head
    /// nested a million deep must not need a million registers).
    fn head_temp(&mut self) -> Reg {
        match self.free.pop() {
            Some(r) => r,
            None => self.temp(),
        }
    }

    fn free_if_temp(&mut self, r: Reg) {
        if r.0 >= self.first_temp {
            self.free.push(r);
        }
    }

    /// Tests the term just read into `src` against pattern `p` (whose
    /// register came from [`Compiler::place`]). Walks nested patterns depth
    /// first with an explicit stack, since heads may nest without limit, and
    /// frees each temporary as soon as its last part is read, so a nested
    /// chain needs only a couple of registers however deep it is.
    fn check_placed(&mut self, p: PatId, src: Reg, fail: Label) {
        let mut stack: Vec<Frame> = Vec::new();
        self.test_placed(p, src, fail, &mut stack);
        while let Some(frame) = stack.last_mut() {
            let Some(&(child, access)) = frame.parts.get(frame.next) else {
                let done = stack.pop();
                if let Some(done) = done {
                    self.free_if_temp(done.src);
                }
                continue;
            };
            frame.next += 1;
            let (parent, last) = (frame.src, frame.next == frame.parts.len());
            // A map key must be present even if its value is '_'.
            let dst = match (self.place(child), access) {
                (Some(dst), _) => dst,
                (None, Access::MapValue(_)) => self.head_temp(),
                (None, _) => continue,
            };
            match access {
                Access::Element(index) => self.emit(Op::GetElement { src: parent, index, dst }),
                Access::Head => self.emit(Op::GetHead { src: parent, dst }),
                Access::Tail => self.emit(Op::GetTail { src: parent, dst }),
                Access::MapValue(key) => self.emit(Op::GetMapValue { src: parent, key, dst, fail }),
            }
            if last {
                // The parent is read for the last time: free it before
                // descending, so that chains reuse the same registers.
                if let Some(done) = stack.pop() {
                    self.free_if_temp(done.src);
                }
            }
            self.test_placed(child, dst, fail, &mut stack);
        }
    }

    /// Tests the top of pattern `p` against the term in `src`; a structure
    /// pushes a frame listing the parts still to read.
    fn test_placed(&mut self, p: PatId, src: Reg, fail: Label, stack: &mut Vec<Frame>) {
        match self.spec.pat(p).clone() {
            Pat::Skip => self.free_if_temp(src),
            Pat::Var(v) => {
                let var = var_reg(v);
                if var != src {
                    self.emit(Op::IsExactEq { a: var, b: src, fail });
                    self.free_if_temp(src);
                }
            }
            Pat::Literal(w) if w.is_immediate() => {
                self.emit(Op::IsWord { src, word: w, fail });
                self.free_if_temp(src);
            }
            Pat::Literal(w) => {
                let b = self.constant(w);
                self.emit(Op::IsExactEq { a: src, b, fail });
                self.free_if_temp(src);
            }
            Pat::Tuple(elements) => {
                self.emit(Op::IsTuple { src, arity: elements.len() as u32, fail });
                // Literal elements first: they are the cheapest tests and the
                // likeliest to fail, and need no register.
                let mut parts = Vec::new();
                for (i, &e) in elements.iter().enumerate() {
                    match self.spec.pat(e) {
                        Pat::Literal(word) if word.is_immediate() => {
                            self.emit(Op::IsElement { src, index: i as u32, word: *word, fail });
                        }
                        Pat::Skip => {}
                        _ => parts.push((e, Access::Element(i as u32))),
                    }
                }
                self.push_frame(p, src, parts, stack);
            }
            Pat::Cons(h, t) => {
                self.emit(Op::IsCons { src, fail });
                let parts = vec![(h, Access::Head), (t, Access::Tail)]
                    .into_iter()
                    .filter(|(q, _)| !matches!(self.spec.pat(*q), Pat::Skip))
                    .collect();
                self.push_frame(p, src, parts, stack);
            }
            Pat::Map(entries) => {
                self.emit(Op::IsMap { src, size: entries.len() as u32, fail });
                let parts = entries
                    .into_iter()
                    .map(|(key, v)| (v, Access::MapValue(self.constant(key))))
                    .collect();
                self.push_frame(p, src, parts, stack);
            }
        }
    }

    fn push_frame(
        &mut self,
        p: PatId,
        src: Reg,
        parts: Vec<(PatId, Access)>,
        stack: &mut Vec<Frame>,
    ) {
        if parts.is_empty() {
            self.free_if_temp(src);
        } else {
            stack.push(Frame { pat: p, src, parts, next: 0 });
        }
    }

    // ---- Guards --------------------------------------------------------------------

    /// Compiles guard expression `e` as a test: falls through if it is
    /// `true`, jumps to `fail` if it is anything else or fails.
    fn condition(&mut self, e: ExprId, fail: Label) {
        self.branch(e, Next::FallThrough, Next::To(fail), fail);
    }

    /// Compiles `e` as a three-way branch: to `if_true` when it is `true`,
    /// to `if_false` when it is `false`, to `other` when it is anything else
    /// or fails. Comparisons and type tests jump straight on their result;
    /// `andalso`/`orelse` become chains of such jumps; everything else is
    /// computed and its value tested.
    fn branch(&mut self, e: ExprId, if_true: Next, if_false: Next, other: Label) {
        // `andalso`/`orelse` nest as deep as the checker's budget allows.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            self.branch_inner(e, if_true, if_false, other)
        });
    }

    fn branch_inner(&mut self, e: ExprId, if_true: Next, if_false: Next, other: Label) {
        let saved = self.top;
        match self.spec.expr(e).clone() {
            Expr::Const(w) => {
                let target = if w == Word::atom(Atom::TRUE) {
                    if_true
                } else if w == Word::atom(Atom::FALSE) {
                    if_false
                } else {
                    Next::To(other)
                };
                if let Next::To(label) = target {
                    self.emit(Op::Jump { target: label });
                }
            }
            Expr::Call(bif, args) if Cmp::of(bif).is_some() => {
                let regs = self.operands_last_first(&args);
                if let Some(op) = Cmp::of(bif) {
                    self.two_way(if_true, if_false, |fail, holds| Op::Compare {
                        op: if holds { op } else { op.negate() },
                        a: regs[0],
                        b: regs[1],
                        fail,
                    });
                }
            }
            Expr::Call(bif, args) if bif.is_type_test() => {
                let src = self.operand(args[0]);
                self.two_way(if_true, if_false, |fail, holds| Op::TypeTest {
                    test: bif,
                    src,
                    expect: holds,
                    fail,
                });
            }
            Expr::AndAlso(args) => {
                let Some((&last, init)) = args.split_last() else { return };
                let (false_label, bind_false) = self.label_for(if_false);
                for &a in init {
                    self.branch(a, Next::FallThrough, Next::To(false_label), other);
                }
                self.branch(last, if_true, if_false, other);
                if bind_false {
                    self.bind(false_label);
                }
            }
            Expr::OrElse(args) => {
                let Some((&last, init)) = args.split_last() else { return };
                let (true_label, bind_true) = self.label_for(if_true);
                for &a in init {
                    self.branch(a, Next::To(true_label), Next::FallThrough, other);
                }
                self.branch(last, if_true, if_false, other);
                if bind_true {
                    self.bind(true_label);
                }
            }
            _ => {
                let saved_fail = self.fail;
                self.fail = Fail::Jump(other);
                let src = self.operand(e);
                self.fail = saved_fail;
                match (if_true, if_false) {
                    (Next::FallThrough, Next::To(f)) => {
                        self.emit(Op::BoolBranch { src, when: false, target: f, other })
                    }
                    (Next::To(t), Next::FallThrough) => {
                        self.emit(Op::BoolBranch { src, when: true, target: t, other })
                    }
                    (Next::To(t), Next::To(f)) => {
                        self.emit(Op::BoolBranch { src, when: true, target: t, other });
                        self.emit(Op::Jump { target: f });
                    }
                    (Next::FallThrough, Next::FallThrough) => {
                        let after = self.new_label();
                        self.emit(Op::BoolBranch { src, when: true, target: after, other });
                        self.bind(after);
                    }
                }
            }
        }
        self.top = saved;
    }

    /// Emits a test that jumps on its outcome: `make(fail, holds)` is a test
    /// that jumps to `fail` unless its condition equals `holds`.
    fn two_way(&mut self, if_true: Next, if_false: Next, make: impl Fn(Label, bool) -> Op) {
        match (if_true, if_false) {
            (Next::FallThrough, Next::To(f)) => self.emit(make(f, true)),
            (Next::To(t), Next::FallThrough) => self.emit(make(t, false)),
            (Next::To(t), Next::To(f)) => {
                self.emit(make(f, true));
                self.emit(Op::Jump { target: t });
            }
            (Next::FallThrough, Next::FallThrough) => {}
        }
    }

    /// A label for `next`: its own, or a new one the caller binds at the
    /// end (the second value says so).
    fn label_for(&mut self, next: Next) -> (Label, bool) {
        match next {
            Next::To(label) => (label, false),
            Next::FallThrough => (self.new_label(), true),
        }
    }

    // ---- Values ----------------------------------------------------------------------

    /// A register holding the value of `e`: a variable's or constant's own
    /// register, or a new temporary it is computed into.
    fn operand(&mut self, e: ExprId) -> Reg {
        match self.spec.expr(e) {
            Expr::Const(w) => self.constant(*w),
            Expr::Var(v) => var_reg(*v),
            Expr::Target if self.spec.kind() == Kind::Table => Reg::INPUT,
            _ => {
                let dst = self.temp();
                self.value(e, dst);
                dst
            }
        }
    }

    /// Registers holding `args`, computed last to first (ERTS's argument
    /// order), listed first to last.
    fn operands_last_first(&mut self, args: &[ExprId]) -> Vec<Reg> {
        let mut regs = vec![Reg::NONE; args.len()];
        for (i, &a) in args.iter().enumerate().rev() {
            regs[i] = self.operand(a);
        }
        regs
    }

    /// Computes `e` into `dst`.
    fn value(&mut self, e: ExprId, dst: Reg) {
        // Bodies and guards nest only as deep as the checker's budget, but
        // that budget is configurable: grow the stack rather than overflow.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.value_inner(e, dst));
    }

    fn value_inner(&mut self, e: ExprId, dst: Reg) {
        let saved = self.top;
        let true_reg = self.true_reg();
        match self.spec.expr(e).clone() {
            Expr::Const(w) => {
                let src = self.constant(w);
                self.emit(Op::Move { src, dst });
            }
            Expr::Var(v) => self.emit(Op::Move { src: var_reg(v), dst }),
            Expr::Target => match self.spec.kind() {
                Kind::Table => self.emit(Op::Move { src: Reg::INPUT, dst }),
                Kind::Call | Kind::Send | Kind::Receive => self.emit(Op::GetArgList { dst }),
            },
            Expr::Bindings => {
                // Every variable of this clause's head, by number.
                let regs: Vec<Reg> = self
                    .bound
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b)
                    .map(|(n, _)| var_reg(VarId(n as u32)))
                    .collect();
                let elements = self.operand_list(&regs);
                self.emit(Op::MakeList { elements, dst });
            }
            Expr::Tuple(elements) => {
                let regs = self.operands_last_first(&elements);
                let elements = self.operand_list(&regs);
                self.emit(Op::MakeTuple { elements, dst });
            }
            Expr::Cons(head, tail) => {
                let head = self.operand(head);
                let tail = self.operand(tail);
                self.emit(Op::MakeCons { head, tail, dst });
            }
            Expr::Map { pairs, large } => {
                let n = pairs.len();
                let (mut key_regs, mut value_regs) = (vec![Reg::NONE; n], vec![Reg::NONE; n]);
                if large {
                    for (i, &(k, v)) in pairs.iter().enumerate().rev() {
                        key_regs[i] = self.operand(k);
                        value_regs[i] = self.operand(v);
                    }
                } else {
                    let (keys, values): (Vec<ExprId>, Vec<ExprId>) = pairs.into_iter().unzip();
                    value_regs = self.operands_last_first(&values);
                    key_regs = self.operands_last_first(&keys);
                }
                let keys = self.operand_list(&key_regs);
                let values = self.operand_list(&value_regs);
                self.emit(Op::MakeMap { keys, values, dst });
            }
            Expr::Call(bif, args) => {
                let regs = self.operands_last_first(&args);
                let mut args = [Reg::NONE; 3];
                args[..regs.len()].copy_from_slice(&regs);
                self.emit(Op::Call { bif, args, dst, fail: self.fail });
            }
            Expr::And(args) => self.logic(LogicOp::And, &args, dst),
            Expr::Or(args) => self.logic(LogicOp::Or, &args, dst),
            Expr::AndAlso(args) => self.short_circuit(false, &args, dst),
            Expr::OrElse(args) => self.short_circuit(true, &args, dst),
            Expr::SelfPid => self.emit(Op::SelfPid { dst }),
            Expr::Message(x) => {
                let src = self.operand(x);
                let result = self.result;
                self.emit(Op::Move { src, dst: result });
                self.emit(Op::Move { src: true_reg, dst });
            }
            Expr::ReturnTrace => {
                self.emit(Op::SetFlag { flag: TraceFlag::ReturnTrace });
                self.emit(Op::Move { src: true_reg, dst });
            }
            Expr::ExceptionTrace => {
                self.emit(Op::SetFlag { flag: TraceFlag::ExceptionTrace });
                self.emit(Op::Move { src: true_reg, dst });
            }
            Expr::Display(x) => {
                let src = self.operand(x);
                self.emit(Op::Display { src });
                self.emit(Op::Move { src: true_reg, dst });
            }
            Expr::IsSeqTrace => self.emit(Op::IsSeqTrace { dst }),
            Expr::SetSeqToken { key, value, fake } => {
                let value = self.operand(value);
                let key = self.operand(key);
                self.emit(Op::SetSeqToken { key, value, fake, dst });
            }
            Expr::GetSeqToken => self.emit(Op::GetSeqToken { dst }),
            Expr::ProcessDump => self.emit(Op::ProcessDump { dst }),
            Expr::EnableTrace { target, flag } => {
                self.change(ChangeTrace::Enable, target, flag, None, dst)
            }
            Expr::DisableTrace { target, flag } => {
                self.change(ChangeTrace::Disable, target, flag, None, dst)
            }
            Expr::Trace { target, disable, enable } => {
                self.change(ChangeTrace::Trace, target, disable, Some(enable), dst)
            }
            Expr::Caller => self.emit(Op::Caller { dst }),
            Expr::CallerLine => self.emit(Op::CallerLine { dst }),
            Expr::CurrentStacktrace(depth) => self.emit(Op::CurrentStacktrace { depth, dst }),
            Expr::Silent(x) => {
                let src = self.operand(x);
                self.emit(Op::Silent { src });
                self.emit(Op::Move { src: true_reg, dst });
            }
        }
        self.top = saved;
    }

    /// `and`/`or`: all operands, last to first, then one check.
    fn logic(&mut self, op: LogicOp, args: &[ExprId], dst: Reg) {
        let regs = self.operands_last_first(args);
        let args = self.operand_list(&regs);
        self.emit(Op::Logic { op, args, dst, fail: self.fail });
    }

    /// `andalso` (`when` = false) / `orelse` (`when` = true): left to right;
    /// the deciding boolean ends it, a non-boolean fails (guards) or gives
    /// `'EXIT'` (bodies), the last value is the result unchecked.
    fn short_circuit(&mut self, when: bool, args: &[ExprId], dst: Reg) {
        let end = self.new_label();
        let other = match self.fail {
            Fail::Jump(label) => label,
            Fail::Exit => self.new_label(),
        };
        let Some((&last, init)) = args.split_last() else { return };
        for &a in init {
            self.value(a, dst);
            self.emit(Op::BoolBranch { src: dst, when, target: end, other });
        }
        self.value(last, dst);
        if self.fail == Fail::Exit {
            self.emit(Op::Jump { target: end });
            self.bind(other);
            let exit = self.constant(Word::atom(Atom::EXIT));
            self.emit(Op::Move { src: exit, dst });
        }
        self.bind(end);
    }

    /// `enable_trace`/`disable_trace` (`b` = `None`) or `trace`; operands in
    /// ERTS's order: the last argument first.
    fn change(
        &mut self,
        how: ChangeTrace,
        target: Option<ExprId>,
        a: ExprId,
        b: Option<ExprId>,
        dst: Reg,
    ) {
        let b = b.map_or(Reg::NONE, |b| self.operand(b));
        let a = self.operand(a);
        let target = target.map_or(Reg::NONE, |t| self.operand(t));
        self.emit(Op::ChangeTrace { how, target, a, b, dst });
    }

    /// Does evaluating `e` act on anything (so it must run even if its value
    /// is thrown away)?
    fn has_effect(&self, e: ExprId) -> bool {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match self.spec.expr(e) {
                Expr::Message(_)
                | Expr::ReturnTrace
                | Expr::ExceptionTrace
                | Expr::Display(_)
                | Expr::EnableTrace { .. }
                | Expr::DisableTrace { .. }
                | Expr::Trace { .. }
                | Expr::Silent(_)
                | Expr::SetSeqToken { fake: false, .. }
                | Expr::Call(Bif::SetTcw, _) => return true,
                Expr::SetSeqToken { key, value, fake: true } => stack.extend([*key, *value]),
                Expr::Const(_)
                | Expr::Var(_)
                | Expr::Target
                | Expr::Bindings
                | Expr::SelfPid
                | Expr::IsSeqTrace
                | Expr::GetSeqToken
                | Expr::ProcessDump
                | Expr::Caller
                | Expr::CallerLine
                | Expr::CurrentStacktrace(_) => {}
                Expr::Tuple(xs)
                | Expr::Call(_, xs)
                | Expr::And(xs)
                | Expr::Or(xs)
                | Expr::AndAlso(xs)
                | Expr::OrElse(xs) => stack.extend(xs.iter().copied()),
                Expr::Cons(h, t) => stack.extend([*h, *t]),
                Expr::Map { pairs, .. } => stack.extend(pairs.iter().flat_map(|(k, v)| [*k, *v])),
            }
        }
        false
    }
}

/// Where a branch goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// On to the next instruction.
    FallThrough,
    /// To this label.
    To(Label),
}

/// A structure of a head whose parts are still to be read.
struct Frame {
    #[allow(dead_code, reason = "kept for debugging the walk")]
    pat: PatId,
    src: Reg,
    parts: Vec<(PatId, Access)>,
    next: usize,
}

/// How a part of a structure is read.
#[derive(Clone, Copy)]
enum Access {
    Element(u32),
    Head,
    Tail,
    MapValue(Reg),
}

/// The register of variable `'$N'`.
fn var_reg(v: VarId) -> Reg {
    Reg(1 + v.0)
}
