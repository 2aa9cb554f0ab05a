//! The checker: a match-spec term in, a [`CheckedSpec`] or ERTS's errors out.
//!
//! This walks the spec exactly as ERTS's compiler (`db_match_compile` and
//! the `dmc_*` functions of `erl_db_util.c`) walks it in lint mode, because
//! the order of ERTS's error messages is part of its interface:
//!
//! * the spec and every clause's shape are checked first, for all clauses;
//! * then clause by clause: the head, the guards, the body (a table body
//!   must be a non-empty list); every error in a clause is reported, and the
//!   first clause with errors ends the check;
//! * in guards and bodies a function's arguments are visited last to first,
//!   `andalso`/`orelse`/lists first to last, map values before map keys;
//! * constant subtrees are folded as ERTS folds them.
//!
//! Two ERTS mechanisms are reproduced on purpose. A head variable numbered
//! 25 or more makes ERTS renumber every `'$N'` atom of the whole spec
//! densely (even inside `{const, ...}`: quirk Q1) and start over; so do we,
//! and messages about unbound variables then show the original numbers.
//! And ERTS rejects guards and bodies nested too deeply for its C stack; we
//! model its frame sizes with an explicit budget (see
//! [`Config::max_nesting`]) and never recurse on the Rust stack without
//! room to grow it.

use std::collections::BTreeSet;

use super::Kind;
use super::ast::{CheckedSpec, Clause, Expr, ExprId, Head, Pat, PatId, VarId};
use super::error::{SpecError, SpecErrorKind, SpecErrors};
use crate::bif::Bif;
use crate::config::Config;
use crate::release::{Change, Release};
use crate::syntax::Step;
use crate::term::{Atom, Heap, Kind as TermKind, Term, TermRef, Word, erts_text};

/// ERTS's message buffer holds 100 bytes including the terminating NUL.
const MESSAGE_BYTES: usize = 99;

/// Variables below this number index ERTS's compile-time table directly;
/// one at or above it triggers renumbering (`DMC_DEFAULT_SIZE`).
const DIRECT_VARIABLES: u32 = 25;

/// The nesting budget's cost of one level of each construct (see
/// [`Config::max_nesting`]): ERTS's stack frames per level, in 16-byte
/// units that make every measured limit of the release come out exactly.
#[derive(Clone, Copy, Debug)]
struct Costs {
    /// A function call or special form (`dmc_expr` + `dmc_fun`).
    call: u32,
    /// A list cell (`dmc_expr` + `dmc_list`).
    list: u32,
    /// A tuple construction `{{...}}` (`dmc_expr` + `dmc_tuple` + `dmc_array`).
    tuple: u32,
    /// A map value (`dmc_expr` + `dmc_map` + `dmc_array`).
    map_value: u32,
    /// A map key (the map's frames plus `dmc_tuple` for the key tuple).
    map_key: u32,
}

impl Costs {
    /// Slack so that the limit in calls lands between frame sizes.
    const SLACK: u32 = 4;

    fn of(config: &Config) -> Costs {
        // 224 bytes a call or list level, 240 from OTP 29 on.
        let call = if config.has(Change::DeeperCallFrames) { 15 } else { 14 };
        Costs { call, list: call, tuple: 12, map_value: 40, map_key: 45 }
    }

    /// The budget of `config`'s limit in calls.
    fn budget(self, config: &Config) -> u32 {
        config.get_max_nesting().saturating_mul(self.call).saturating_add(Costs::SLACK)
    }
}

/// What an event kind allows: ERTS's `DCOMP_*` compile flags.
#[derive(Clone, Copy, Debug)]
struct Flags {
    trace: bool,
    /// Trace heads may be `[A, ... | '_']` ([`Change::PrefixHeads`]).
    prefix_heads: bool,
    call_trace: bool,
    allow_trace_ops: bool,
    fake: bool,
    /// Whose texts to write ([`Change::Erts17MapHash`]).
    release: Release,
}

impl Flags {
    fn new(kind: Kind, config: &Config) -> Flags {
        let fake = config.fake_destructive;
        let prefix_heads = config.has(Change::PrefixHeads);
        let (trace, call_trace, allow_trace_ops) = match kind {
            Kind::Table => (false, false, false),
            Kind::Call => (true, true, true),
            Kind::Send => (true, false, true),
            Kind::Receive => (true, false, false),
        };
        let release = config.get_release();
        Flags { trace, prefix_heads, call_trace, allow_trace_ops, fake, release }
    }
}

/// Checks the spec `spec` for `kind`.
pub(crate) fn check(
    spec: TermRef<'_>,
    kind: Kind,
    config: &Config,
) -> Result<CheckedSpec, SpecErrors> {
    let flags = Flags::new(kind, config);
    let clauses = shape(spec, flags)?;
    let mut checker = Checker::new(kind, flags, config, None);
    match checker.clauses(&clauses) {
        Ok(()) => Ok(checker.finish()),
        Err(Stop::Errors) => Err(SpecErrors { errors: checker.errors }),
        Err(Stop::Renumber) => {
            // ERTS renames every variable atom of the spec and starts over.
            let (renamed, numbers) = renumber(spec, config.renumber_constants)?;
            let clauses = shape(renamed.as_ref(), flags)?;
            let mut checker = Checker::new(kind, flags, config, Some(numbers));
            match checker.clauses(&clauses) {
                Ok(()) => Ok(checker.finish()),
                // No variable is 25 or more any more unless there are that many.
                Err(Stop::Errors | Stop::Renumber) => {
                    checker.translate_variables();
                    Err(SpecErrors { errors: checker.errors })
                }
            }
        }
    }
}

/// One clause's parts.
struct RawClause<'a> {
    head: TermRef<'a>,
    guards: TermRef<'a>,
    body: TermRef<'a>,
}

/// Checks that the spec is a proper non-empty list of 3-tuples, and (for
/// trace kinds) that list heads are proper: ERTS does this for every clause
/// before it compiles any.
fn shape(spec: TermRef<'_>, flags: Flags) -> Result<Vec<RawClause<'_>>, SpecErrors> {
    let fail = |kind, message: Vec<u8>, path: Vec<Step>| {
        Err(SpecErrors { errors: vec![SpecError { kind, message, path, source: None }] })
    };
    if spec.as_cons().is_none() {
        return fail(
            SpecErrorKind::NotAList,
            b"Match programs are not in a list.".to_vec(),
            vec![],
        );
    }
    let mut items = spec.list_items();
    let elements: Vec<TermRef<'_>> = items.by_ref().collect();
    if !items.tail().is_nil() {
        let message = b"Match programs are not in a proper list.".to_vec();
        return fail(SpecErrorKind::NotAProperList, message, vec![Step::Tail(elements.len())]);
    }
    let mut clauses = Vec::with_capacity(elements.len());
    for (i, clause) in elements.into_iter().enumerate() {
        let triple = clause.as_tuple().filter(|t| t.len() == 3);
        let Some(triple) = triple else {
            let message = b"Match program part is not a tuple of arity 3.".to_vec();
            return fail(SpecErrorKind::ClauseNotATriple, message, vec![Step::Element(i)]);
        };
        let part = |n| triple.get(n).unwrap_or(clause);
        let head = part(0);
        if flags.trace
            && (head.as_cons().is_some() || head.is_nil())
            && head.list_len().is_none()
            && !(flags.prefix_heads && is_prefix_list(head))
        {
            let mut message = b"Match expression part ".to_vec();
            erts_text::write(&mut message, head, MESSAGE_BYTES, flags.release);
            message.extend_from_slice(b" is not a proper list.");
            message.truncate(MESSAGE_BYTES);
            let path = vec![Step::Element(i), Step::Element(0)];
            return fail(SpecErrorKind::HeadNotAProperList, message, path);
        }
        clauses.push(RawClause { head, guards: part(1), body: part(2) });
    }
    Ok(clauses)
}

/// Why checking stopped early.
enum Stop {
    /// A clause had errors (they are in the checker).
    Errors,
    /// A head variable is 25 or more: renumber and start over.
    Renumber,
}

/// What checking one guard or body expression found.
#[derive(Clone, Copy)]
enum Checked<'a> {
    /// A constant subtree (to be folded if a parent needs it on its own).
    Constant(TermRef<'a>),
    /// A node that computes something.
    Node(ExprId),
    /// It had errors (already recorded).
    Invalid,
}

struct Checker<'c> {
    kind: Kind,
    flags: Flags,
    config: &'c Config,
    costs: Costs,
    budget: u32,
    /// The original number of each variable when the spec was renumbered.
    original_numbers: Option<Vec<u32>>,
    errors: Vec<SpecError>,
    path: Vec<Step>,
    clauses: Vec<Clause>,
    pats: Vec<Pat>,
    exprs: Vec<Expr>,
    literals: Heap,
    num_vars: u32,
    // Per clause:
    bound: BTreeSet<u32>,
    in_guard: bool,
}

impl<'c> Checker<'c> {
    fn new(
        kind: Kind,
        flags: Flags,
        config: &'c Config,
        original_numbers: Option<Vec<u32>>,
    ) -> Checker<'c> {
        let costs = Costs::of(config);
        Checker {
            kind,
            flags,
            config,
            costs,
            budget: costs.budget(config),
            original_numbers,
            errors: Vec::new(),
            path: Vec::new(),
            clauses: Vec::new(),
            pats: Vec::new(),
            exprs: Vec::new(),
            literals: Heap::in_space(crate::term::Space::Literal),
            num_vars: 0,
            bound: BTreeSet::new(),
            in_guard: false,
        }
    }

    fn finish(self) -> CheckedSpec {
        CheckedSpec {
            kind: self.kind,
            release: self.config.get_release(),
            clauses: self.clauses,
            pats: self.pats,
            exprs: self.exprs,
            literals: self.literals,
            num_vars: self.num_vars,
        }
    }

    /// Rewrites variable numbers in unbound-variable messages back to the
    /// numbers the user wrote, as ERTS's `var_trans` table does.
    fn translate_variables(&mut self) {
        let Some(numbers) = &self.original_numbers else { return };
        for e in &mut self.errors {
            if let SpecErrorKind::UnboundVariable(n) = e.kind
                && let Some(&original) = numbers.get(n as usize)
            {
                e.message = unbound_message(original);
            }
        }
    }

    fn error(&mut self, kind: SpecErrorKind, message: Vec<u8>) {
        let mut message = message;
        message.truncate(MESSAGE_BYTES);
        self.errors.push(SpecError { kind, message, path: self.path.clone(), source: None });
    }

    /// An error whose message embeds `term` printed as ERTS prints it.
    fn term_error(&mut self, kind: SpecErrorKind, before: &str, term: TermRef<'_>, after: &str) {
        let mut message = before.as_bytes().to_vec();
        erts_text::write(&mut message, term, MESSAGE_BYTES, self.config.get_release());
        message.extend_from_slice(after.as_bytes());
        self.error(kind, message);
    }

    fn clauses(&mut self, clauses: &[RawClause<'_>]) -> Result<(), Stop> {
        for (i, clause) in clauses.iter().enumerate() {
            self.path.clear();
            self.path.push(Step::Element(i));
            self.clause(clause)?;
            if !self.errors.is_empty() {
                return Err(Stop::Errors);
            }
        }
        Ok(())
    }

    fn clause(&mut self, clause: &RawClause<'_>) -> Result<(), Stop> {
        self.bound.clear();
        self.path.push(Step::Element(0));
        let head = self.head(clause.head)?;
        self.path.pop();
        let Some(head) = head else { return Err(Stop::Errors) };

        self.path.push(Step::Element(1));
        self.in_guard = true;
        let guards = self.expressions(clause.guards);
        self.path.pop();

        self.in_guard = false;
        if self.kind == Kind::Table && clause.body.as_cons().is_none() {
            self.path.push(Step::Element(2));
            self.error(
                SpecErrorKind::BodyReturnsNothing,
                b"Body clause does not return anything.".to_vec(),
            );
            return Err(Stop::Errors);
        }
        self.path.push(Step::Element(2));
        let body = self.expressions(clause.body);
        self.path.pop();

        let bound = self.bound.iter().map(|&n| VarId(n)).collect();
        self.clauses.push(Clause { head, guards, body, bound });
        Ok(())
    }

    // ---- Heads ------------------------------------------------------------------

    /// Checks and builds a head. `Ok(None)`: an error was recorded.
    fn head(&mut self, head: TermRef<'_>) -> Result<Option<Head>, Stop> {
        // A trace head list stands for a tuple of its elements.
        let trace_list = self.flags.trace && (head.as_cons().is_some() || head.is_nil());
        // `shape` let a prefix list through only where they are allowed.
        let prefix = trace_list && is_prefix_list(head);
        let elements: Option<Vec<TermRef<'_>>> = if prefix {
            Some(head.list_items().collect())
        } else if trace_list {
            head.proper_list()
        } else {
            head.as_tuple().map(|t| t.iter().collect())
        };
        if !self.scan_head(head, trace_list)? {
            return Ok(None);
        }
        if !self.flags.trace {
            return Ok(Some(Head::Term(self.pattern(head))));
        }
        if let Some(n) = variable_number(head) {
            return Ok(Some(Head::AllArgs(VarId(n))));
        }
        if head.as_atom() == Some(Atom::UNDERSCORE) {
            return Ok(Some(Head::AnyArgs));
        }
        match elements {
            Some(elements) => {
                let pats = elements.into_iter().map(|e| self.pattern(e)).collect();
                Ok(Some(if prefix { Head::ArgsPrefix(pats) } else { Head::Args(pats) }))
            }
            None => {
                self.error(
                    SpecErrorKind::InvalidHead,
                    b"Match head is invalid in this context.".to_vec(),
                );
                Ok(None)
            }
        }
    }

    /// Walks a head in ERTS's order (a structure's own elements first, then
    /// its nested structures, last pushed first) to find the first bad map
    /// key, the variables it binds, and whether renumbering is needed.
    /// Returns false if an error was recorded.
    fn scan_head<'a>(&mut self, head: TermRef<'a>, trace_list: bool) -> Result<bool, Stop> {
        let mut pending: Vec<(TermRef<'a>, Vec<Step>)> = Vec::new();
        let base = self.path.clone();
        // The top of a trace list head is walked like the tuple it becomes.
        let mut current: Option<(TermRef<'a>, Vec<Step>, bool)> = Some((head, base, trace_list));
        while let Some((t, path, as_tuple)) = current.take() {
            if as_tuple {
                for (i, e) in t.list_items().enumerate() {
                    self.scan_one(e, with(&path, Step::Element(i)), &mut pending)?;
                }
            } else {
                match t.kind() {
                    TermKind::Map(m) => {
                        let keys: Vec<TermRef<'a>> = m.keys().collect();
                        let values: Vec<TermRef<'a>> = m.values().collect();
                        let release = self.config.get_release();
                        for i in crate::term::erts_layout::erts_order(m, release) {
                            let (k, v) = (keys[i], values[i]);
                            let bad = if variable_number(k).is_some() {
                                Some((
                                    SpecErrorKind::VariableInMapKey,
                                    &b"Variable found in map key."[..],
                                ))
                            } else if k.as_atom() == Some(Atom::UNDERSCORE) {
                                Some((
                                    SpecErrorKind::UnderscoreInMapKey,
                                    &b"Underscore found in map key."[..],
                                ))
                            } else {
                                None
                            };
                            if let Some((kind, text)) = bad {
                                self.path = with(&path, Step::Key(i));
                                self.error(kind, text.to_vec());
                                return Ok(false);
                            }
                            self.scan_one(v, with(&path, Step::Value(i)), &mut pending)?;
                        }
                    }
                    TermKind::Tuple(tuple) => {
                        for (i, e) in tuple.iter().enumerate() {
                            self.scan_one(e, with(&path, Step::Element(i)), &mut pending)?;
                        }
                    }
                    TermKind::Cons(_) => {
                        let mut items = t.list_items();
                        let mut n = 0;
                        for (i, e) in items.by_ref().enumerate() {
                            self.scan_one(e, with(&path, Step::Element(i)), &mut pending)?;
                            n = i + 1;
                        }
                        let tail = items.tail();
                        if !tail.is_nil() {
                            self.scan_one(tail, with(&path, Step::Tail(n)), &mut pending)?;
                        }
                    }
                    _ => self.scan_one(t, path.clone(), &mut pending)?,
                }
            }
            current = pending.pop().map(|(t, p)| (t, p, false));
        }
        Ok(true)
    }

    /// One element of a head structure (ERTS's `dmc_one_term`): a variable
    /// is bound (or asks for renumbering), a structure is walked later.
    fn scan_one<'a>(
        &mut self,
        c: TermRef<'a>,
        path: Vec<Step>,
        pending: &mut Vec<(TermRef<'a>, Vec<Step>)>,
    ) -> Result<(), Stop> {
        if let Some(n) = variable_number(c) {
            let limit = self.original_numbers.as_ref().map_or(DIRECT_VARIABLES, |v| v.len() as u32);
            if n >= limit {
                return Err(Stop::Renumber);
            }
            self.bound.insert(n);
            self.num_vars = self.num_vars.max(n + 1);
        } else if c.as_cons().is_some() || c.as_tuple().is_some() || c.as_map().is_some() {
            pending.push((c, path));
        }
        Ok(())
    }

    /// Builds the pattern of a (scanned, valid) head term, without recursion.
    fn pattern(&mut self, term: TermRef<'_>) -> PatId {
        let root = self.pat_node(term);
        let mut work: Vec<(PatId, TermRef<'_>)> = vec![(root, term)];
        while let Some((id, t)) = work.pop() {
            let node = match t.kind() {
                TermKind::Tuple(tuple) => {
                    let children: Vec<PatId> =
                        tuple.iter().map(|e| self.child(e, &mut work)).collect();
                    Pat::Tuple(children)
                }
                TermKind::Cons(cons) => {
                    let head = self.child(cons.head(), &mut work);
                    let tail = self.child(cons.tail(), &mut work);
                    Pat::Cons(head, tail)
                }
                TermKind::Map(map) => {
                    let entries: Vec<(Word, PatId)> = map
                        .iter()
                        .map(|(k, v)| (self.literal(k), self.child(v, &mut work)))
                        .collect();
                    Pat::Map(entries)
                }
                _ => continue,
            };
            self.pats[id.0 as usize] = node;
        }
        root
    }

    fn child<'t>(&mut self, term: TermRef<'t>, work: &mut Vec<(PatId, TermRef<'t>)>) -> PatId {
        let id = self.pat_node(term);
        if term.as_tuple().is_some() || term.as_cons().is_some() || term.as_map().is_some() {
            work.push((id, term));
        }
        id
    }

    /// A pattern node for `term`'s top level (compound nodes are filled in later).
    fn pat_node(&mut self, term: TermRef<'_>) -> PatId {
        let node = if let Some(n) = variable_number(term) {
            Pat::Var(VarId(n))
        } else if term.as_atom() == Some(Atom::UNDERSCORE)
            // Compound nodes are placeholders until their children are filled in.
            || term.as_tuple().is_some()
            || term.as_cons().is_some()
            || term.as_map().is_some()
        {
            Pat::Skip
        } else {
            Pat::Literal(self.literal(term))
        };
        self.pats.push(node);
        PatId(self.pats.len() as u32 - 1)
    }

    /// Copies a term into the literal heap as it is.
    fn literal(&mut self, term: TermRef<'_>) -> Word {
        if term.word().is_immediate() {
            term.word()
        } else {
            term.to_owned().copy_to(&mut self.literals)
        }
    }

    // ---- Guards and bodies --------------------------------------------------------

    /// Checks a guard or body list (ERTS's `compile_guard_expr`).
    fn expressions(&mut self, list: TermRef<'_>) -> Vec<ExprId> {
        let mut ids = Vec::new();
        if list.is_nil() {
            return ids;
        }
        if list.as_cons().is_none() {
            self.error(
                SpecErrorKind::ExpressionsNotAList,
                b"Match expression is not a list.".to_vec(),
            );
            return ids;
        }
        let mut items = list.list_items();
        for (i, e) in items.by_ref().enumerate() {
            self.path.push(Step::Element(i));
            let checked = self.expr(e, 0);
            ids.push(self.node(checked));
            self.path.pop();
        }
        if !items.tail().is_nil() {
            self.error(
                SpecErrorKind::ExpressionsNotAProperList,
                b"Match expression is not a proper list.".to_vec(),
            );
        }
        ids
    }

    /// Makes a node of a checked expression (folding a constant).
    fn node(&mut self, checked: Checked<'_>) -> ExprId {
        let expr = match checked {
            Checked::Node(id) => return id,
            Checked::Constant(t) => Expr::Const(self.fold(t)),
            Checked::Invalid => Expr::Const(Word::NIL),
        };
        self.push(expr)
    }

    fn push(&mut self, expr: Expr) -> ExprId {
        self.exprs.push(expr);
        ExprId(self.exprs.len() as u32 - 1)
    }

    /// Checks one expression (ERTS's `dmc_expr`) at nesting cost `depth`.
    fn expr<'a>(&mut self, t: TermRef<'a>, depth: u32) -> Checked<'a> {
        // ERTS recurses on its C stack; we recurse too, growing the stack as
        // needed, bounded by the nesting budget that models ERTS's limit.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(t, depth))
    }

    fn expr_inner<'a>(&mut self, t: TermRef<'a>, depth: u32) -> Checked<'a> {
        if depth > self.budget {
            self.term_error(
                SpecErrorKind::ExcessiveNesting,
                "Excessive nesting; system limit reached near: ",
                t,
                "",
            );
            return Checked::Invalid;
        }
        match t.kind() {
            TermKind::Cons(cons) => self.cons(t, cons.head(), cons.tail(), depth),
            TermKind::Map(_) => self.map(t, depth),
            TermKind::Tuple(tuple) => {
                let first = tuple.get(0);
                match (tuple.len(), first) {
                    (1, Some(inner)) if inner.as_tuple().is_some() => self.tuple(t, inner, depth),
                    (_, Some(f)) if f.as_atom().is_some() && variable_number(f).is_none() => {
                        self.call(t, tuple, depth)
                    }
                    _ => {
                        self.term_error(
                            SpecErrorKind::NotACallOrTuple,
                            "",
                            t,
                            " is neither a function call, nor a tuple (tuples are written {{ ... }}).",
                        );
                        Checked::Invalid
                    }
                }
            }
            TermKind::Atom(a) => {
                if let Some(n) = variable_number(t) {
                    return self.variable(n);
                }
                if a == Atom::DOLLAR_UNDERSCORE {
                    return Checked::Node(self.push(Expr::Target));
                }
                if a == Atom::DOLLAR_DOLLAR {
                    return Checked::Node(self.push(Expr::Bindings));
                }
                Checked::Constant(t)
            }
            _ => Checked::Constant(t),
        }
    }

    fn variable<'a>(&mut self, n: u32) -> Checked<'a> {
        if !self.bound.contains(&n) {
            self.error(SpecErrorKind::UnboundVariable(n), unbound_message(n));
            return Checked::Invalid;
        }
        Checked::Node(self.push(Expr::Var(VarId(n))))
    }

    /// `[H | T]` (ERTS's `dmc_list`): head first, then tail.
    fn cons<'a>(
        &mut self,
        t: TermRef<'a>,
        head: TermRef<'a>,
        tail: TermRef<'a>,
        depth: u32,
    ) -> Checked<'a> {
        let d = depth + self.costs.list;
        self.path.push(Step::Element(0));
        let h = self.expr(head, d);
        self.path.pop();
        self.path.push(Step::Tail(1));
        let r = self.expr(tail, d);
        self.path.pop();
        match (h, r) {
            (Checked::Constant(_), Checked::Constant(_)) => Checked::Constant(t),
            _ => {
                let h = self.node(h);
                let r = self.node(r);
                Checked::Node(self.push(Expr::Cons(h, r)))
            }
        }
    }

    /// `{{E1, ..., En}}` (ERTS's `dmc_tuple`): elements last to first.
    fn tuple<'a>(&mut self, t: TermRef<'a>, inner: TermRef<'a>, depth: u32) -> Checked<'a> {
        let Some(tuple) = inner.as_tuple() else { return Checked::Invalid };
        self.path.push(Step::Element(0));
        let elements = self.array(tuple.iter().collect(), depth + self.costs.tuple, Step::Element);
        self.path.pop();
        if elements.iter().all(|e| matches!(e, Checked::Constant(_))) {
            // The whole `{{...}}` is the constant; folding strips the braces.
            return Checked::Constant(t);
        }
        let ids = elements.into_iter().map(|e| self.node(e)).collect();
        Checked::Node(self.push(Expr::Tuple(ids)))
    }

    /// Checks `items` last to first, each under `step(i)`.
    fn array<'a>(
        &mut self,
        items: Vec<TermRef<'a>>,
        depth: u32,
        step: fn(usize) -> Step,
    ) -> Vec<Checked<'a>> {
        let mut out = vec![Checked::Invalid; items.len()];
        for (i, item) in items.into_iter().enumerate().rev() {
            self.path.push(step(i));
            out[i] = self.expr(item, depth);
            self.path.pop();
        }
        out
    }

    /// A map (ERTS's `dmc_map`), walked in the order ERTS stores it: a
    /// small map's values last to first, then its keys last to first; a
    /// large map's pairs from last to first, each key before its value.
    fn map<'a>(&mut self, t: TermRef<'a>, depth: u32) -> Checked<'a> {
        let Some(map) = t.as_map() else { return Checked::Invalid };
        let keys: Vec<TermRef<'a>> = map.keys().collect();
        let values: Vec<TermRef<'a>> = map.values().collect();
        let order = crate::term::erts_layout::erts_order(map, self.config.get_release());
        let n = order.len();
        let mut checked_keys = vec![Checked::Invalid; n];
        let mut checked_values = vec![Checked::Invalid; n];
        let large = n > crate::term::erts_layout::FLATMAP_KEYS;
        if large {
            for &i in order.iter().rev() {
                self.path.push(Step::Key(i));
                checked_keys[i] = self.expr(keys[i], depth + self.costs.map_value);
                self.path.pop();
                self.path.push(Step::Value(i));
                checked_values[i] = self.expr(values[i], depth + self.costs.map_value);
                self.path.pop();
            }
        } else {
            for &i in order.iter().rev() {
                self.path.push(Step::Value(i));
                checked_values[i] = self.expr(values[i], depth + self.costs.map_value);
                self.path.pop();
            }
            for &i in order.iter().rev() {
                self.path.push(Step::Key(i));
                checked_keys[i] = self.expr(keys[i], depth + self.costs.map_key);
                self.path.pop();
            }
        }
        let constant = |v: &[Checked<'_>]| v.iter().all(|e| matches!(e, Checked::Constant(_)));
        if constant(&checked_values) && constant(&checked_keys) {
            return Checked::Constant(t);
        }
        let pairs: Vec<(ExprId, ExprId)> = order
            .iter()
            .map(|&i| {
                let k = self.node(checked_keys[i]);
                let v = self.node(checked_values[i]);
                (k, v)
            })
            .collect();
        Checked::Node(self.push(Expr::Map { pairs, large }))
    }

    /// `{Name, A1, ..., An}` (ERTS's `dmc_fun`): a special form or a function.
    fn call<'a>(
        &mut self,
        t: TermRef<'a>,
        tuple: crate::term::Tuple<'a>,
        depth: u32,
    ) -> Checked<'a> {
        let name = tuple.get(0).and_then(|f| f.as_atom()).unwrap_or(Atom::UNDEFINED);
        let args: Vec<TermRef<'a>> = tuple.iter().skip(1).collect();
        let d = depth + self.costs.call;
        match name.name() {
            "const" => {
                if args.len() != 1 {
                    self.term_error(
                        SpecErrorKind::ConstArity,
                        "Special form 'const' called with more than one argument in ",
                        t,
                        ".",
                    );
                    return Checked::Invalid;
                }
                Checked::Constant(t)
            }
            "and" => self.strict(t, args, d, "and", Expr::And),
            "or" => self.strict(t, args, d, "or", Expr::Or),
            "andalso" | "andthen" => self.short_circuit(t, args, d, "andalso", Expr::AndAlso),
            "orelse" => self.short_circuit(t, args, d, "orelse", Expr::OrElse),
            "self" => {
                if !args.is_empty() {
                    self.term_error(
                        SpecErrorKind::WrongArity,
                        "Special form 'self' called with arguments in ",
                        t,
                        ".",
                    );
                    return Checked::Invalid;
                }
                Checked::Node(self.push(Expr::SelfPid))
            }
            "message" => self.message_like(t, &args, d, "message", Expr::Message),
            "display" => self.message_like(t, &args, d, "display", Expr::Display),
            "return_trace" => self.flag_action(t, &args, "return_trace", Expr::ReturnTrace),
            "exception_trace" => {
                self.flag_action(t, &args, "exception_trace", Expr::ExceptionTrace)
            }
            "is_seq_trace" => {
                if !self.check_trace("is_seq_trace", false, true) {
                    return Checked::Invalid;
                }
                self.no_arguments(t, &args, "is_seq_trace", Expr::IsSeqTrace)
            }
            "set_seq_token" => {
                if !self.check_trace("set_seq_trace", false, false) {
                    return Checked::Invalid;
                }
                if args.len() != 2 {
                    self.wrong_arguments(t, "set_seq_token");
                    return Checked::Invalid;
                }
                let [key, value] = self.args_last_first(&args, d)[..] else {
                    return Checked::Invalid;
                };
                let fake = self.flags.fake;
                Checked::Node(self.push(Expr::SetSeqToken { key, value, fake }))
            }
            "get_seq_token" => {
                if !self.check_trace("get_seq_token", false, false) {
                    return Checked::Invalid;
                }
                self.no_arguments(t, &args, "get_seq_token", Expr::GetSeqToken)
            }
            "process_dump" => {
                if !self.check_trace("process_dump", false, false) {
                    return Checked::Invalid;
                }
                self.no_arguments(t, &args, "process_dump", Expr::ProcessDump)
            }
            "enable_trace" | "disable_trace" => {
                let form = name.name();
                if !self.check_trace(form, false, false) {
                    return Checked::Invalid;
                }
                let (target, flag) = match args.len() {
                    1 => (None, self.args_last_first(&args, d)[0]),
                    2 => {
                        let ids = self.args_last_first(&args, d);
                        (Some(ids[0]), ids[1])
                    }
                    _ => {
                        self.wrong_arguments(t, form);
                        return Checked::Invalid;
                    }
                };
                let expr = if form == "enable_trace" {
                    Expr::EnableTrace { target, flag }
                } else {
                    Expr::DisableTrace { target, flag }
                };
                Checked::Node(self.push(expr))
            }
            "trace" => {
                if !self.check_trace("trace", false, false) {
                    return Checked::Invalid;
                }
                let expr = match args.len() {
                    2 => {
                        let ids = self.args_last_first(&args, d);
                        Expr::Trace { target: None, disable: ids[0], enable: ids[1] }
                    }
                    3 => {
                        let ids = self.args_last_first(&args, d);
                        Expr::Trace { target: Some(ids[0]), disable: ids[1], enable: ids[2] }
                    }
                    _ => {
                        self.wrong_arguments(t, "trace");
                        return Checked::Invalid;
                    }
                };
                Checked::Node(self.push(expr))
            }
            "caller" => {
                if !self.check_trace("caller", true, false) {
                    return Checked::Invalid;
                }
                self.no_arguments(t, &args, "caller", Expr::Caller)
            }
            "caller_line" => {
                if !self.check_trace("caller_line", true, false) {
                    return Checked::Invalid;
                }
                self.no_arguments(t, &args, "caller_line", Expr::CallerLine)
            }
            "current_stacktrace" => self.current_stacktrace(t, &args),
            "silent" => {
                if !self.check_trace("silent", false, false) {
                    return Checked::Invalid;
                }
                if args.len() != 1 {
                    self.wrong_arguments(t, "silent");
                    return Checked::Invalid;
                }
                let arg = self.args_last_first(&args, d)[0];
                Checked::Node(self.push(Expr::Silent(arg)))
            }
            _ => self.function(name, &args, d),
        }
    }

    /// An ordinary function from ERTS's `guard_tab`.
    fn function<'a>(&mut self, name: Atom, args: &[TermRef<'a>], depth: u32) -> Checked<'a> {
        let arity = args.len();
        // Under `match_spec_test`, `set_tcw` is compiled as its fake.
        let lookup_name =
            if name.name() == "set_tcw" && self.flags.fake { Atom::SET_TCW_FAKE } else { name };
        let Some(bif) = Bif::lookup_in(lookup_name, arity, self.config.get_release()) else {
            self.function_error(SpecErrorKind::UnknownFunction, name, arity, " does_not_exist.");
            return Checked::Invalid;
        };
        let allowed = bif.entry().allowed;
        let ok = match (self.flags.trace, self.in_guard) {
            (false, true) => allowed.table_guard,
            (false, false) => allowed.table_body,
            (true, true) => allowed.trace_guard,
            (true, false) => allowed.trace_body,
        };
        if !ok {
            self.function_error(
                SpecErrorKind::WrongContext,
                name,
                arity,
                " cannot be called in this context.",
            );
            return Checked::Invalid;
        }
        let ids = self.args_last_first(args, depth);
        Checked::Node(self.push(Expr::Call(bif, ids)))
    }

    fn function_error(&mut self, kind: SpecErrorKind, name: Atom, arity: usize, text: &str) {
        let mut message = b"Function ".to_vec();
        erts_text::write_atom(&mut message, name.name());
        message.extend_from_slice(format!("/{arity}{text}").as_bytes());
        self.error(kind, message);
    }

    /// Checks `args` last to first (as ERTS pushes them) and returns their
    /// nodes in source order.
    fn args_last_first(&mut self, args: &[TermRef<'_>], depth: u32) -> Vec<ExprId> {
        // Argument i of the call is element i + 1 of the call tuple.
        let checked = self.array(args.to_vec(), depth, |i| Step::Element(i + 1));
        checked.into_iter().map(|c| self.node(c)).collect()
    }

    /// `and`/`or`: at least one argument, all evaluated, last to first.
    fn strict<'a>(
        &mut self,
        t: TermRef<'a>,
        args: Vec<TermRef<'a>>,
        depth: u32,
        form: &str,
        make: fn(Vec<ExprId>) -> Expr,
    ) -> Checked<'a> {
        if args.is_empty() {
            self.no_arguments_error(t, form);
            return Checked::Invalid;
        }
        let ids = self.args_last_first(&args, depth);
        Checked::Node(self.push(make(ids)))
    }

    /// `andalso`/`orelse`: at least one argument, first to last.
    fn short_circuit<'a>(
        &mut self,
        t: TermRef<'a>,
        args: Vec<TermRef<'a>>,
        depth: u32,
        form: &str,
        make: fn(Vec<ExprId>) -> Expr,
    ) -> Checked<'a> {
        if args.is_empty() {
            self.no_arguments_error(t, form);
            return Checked::Invalid;
        }
        let mut ids = Vec::with_capacity(args.len());
        for (i, a) in args.into_iter().enumerate() {
            self.path.push(Step::Element(i + 1));
            let c = self.expr(a, depth);
            ids.push(self.node(c));
            self.path.pop();
        }
        Checked::Node(self.push(make(ids)))
    }

    fn no_arguments_error(&mut self, t: TermRef<'_>, form: &str) {
        let before = format!("Special form '{form}' called without arguments in ");
        self.term_error(SpecErrorKind::NoArguments, &before, t, ".");
    }

    /// `message`/`display`: trace bodies only, one argument.
    fn message_like<'a>(
        &mut self,
        t: TermRef<'a>,
        args: &[TermRef<'a>],
        depth: u32,
        form: &str,
        make: fn(ExprId) -> Expr,
    ) -> Checked<'a> {
        if !self.dialect_and_guard(form) {
            return Checked::Invalid;
        }
        if args.len() != 1 {
            self.wrong_arguments(t, form);
            return Checked::Invalid;
        }
        let arg = self.args_last_first(args, depth)[0];
        Checked::Node(self.push(make(arg)))
    }

    /// `return_trace`/`exception_trace`: trace bodies only, no arguments.
    fn flag_action<'a>(
        &mut self,
        t: TermRef<'a>,
        args: &[TermRef<'a>],
        form: &str,
        expr: Expr,
    ) -> Checked<'a> {
        if !self.dialect_and_guard(form) {
            return Checked::Invalid;
        }
        self.no_arguments(t, args, form, expr)
    }

    /// The dialect and guard checks that `message`, `display`,
    /// `return_trace` and `exception_trace` do themselves (no event check).
    fn dialect_and_guard(&mut self, form: &str) -> bool {
        if !self.flags.trace {
            self.error(
                SpecErrorKind::WrongDialect,
                format!("Special form '{form}' used in wrong dialect.").into_bytes(),
            );
            return false;
        }
        if self.in_guard {
            self.error(
                SpecErrorKind::InGuard,
                format!("Special form '{form}' called in guard context.").into_bytes(),
            );
            return false;
        }
        true
    }

    /// ERTS's `check_trace`: dialect, then event, then guard position.
    fn check_trace(&mut self, form: &str, needs_call_trace: bool, allowed_in_guard: bool) -> bool {
        if !self.flags.trace {
            self.error(
                SpecErrorKind::WrongDialect,
                format!("Special form '{form}' used in wrong dialect.").into_bytes(),
            );
            return false;
        }
        if !self.flags.allow_trace_ops || (needs_call_trace && !self.flags.call_trace) {
            let message = format!("Special form '{form}' not allow for this trace event.");
            self.error(SpecErrorKind::NotAllowedForEvent, message.into_bytes());
            return false;
        }
        if self.in_guard && !allowed_in_guard {
            self.error(
                SpecErrorKind::InGuard,
                format!("Special form '{form}' called in guard context.").into_bytes(),
            );
            return false;
        }
        true
    }

    fn no_arguments<'a>(
        &mut self,
        t: TermRef<'a>,
        args: &[TermRef<'a>],
        form: &str,
        expr: Expr,
    ) -> Checked<'a> {
        if !args.is_empty() {
            let before = format!("Special form '{form}' called with arguments in ");
            self.term_error(SpecErrorKind::WrongArity, &before, t, ".");
            return Checked::Invalid;
        }
        Checked::Node(self.push(expr))
    }

    fn wrong_arguments(&mut self, t: TermRef<'_>, form: &str) {
        let before = format!("Special form '{form}' called with wrong number of arguments in ");
        self.term_error(SpecErrorKind::WrongArity, &before, t, ".");
    }

    fn current_stacktrace<'a>(&mut self, t: TermRef<'a>, args: &[TermRef<'a>]) -> Checked<'a> {
        if !self.check_trace("current_stacktrace", true, false) {
            return Checked::Invalid;
        }
        let max = self.config.backtrace_depth;
        let depth = match args {
            [] => max,
            // ERTS stores the depth in a C `int`: only the low 32 bits count.
            [n] => match n.word().as_small().filter(|&v| is_erts_small(v)).map(|v| v as i32) {
                None => {
                    self.error(
                        SpecErrorKind::NonSmallArgument,
                        b"Special form 'current_stacktrace' called with non small argument."
                            .to_vec(),
                    );
                    return Checked::Invalid;
                }
                Some(v) if v < 0 => {
                    self.error(
                        SpecErrorKind::NegativeArgument,
                        b"Special form 'current_stacktrace' called with negative integer argument."
                            .to_vec(),
                    );
                    return Checked::Invalid;
                }
                Some(v) => v.unsigned_abs().min(max),
            },
            _ => {
                self.wrong_arguments(t, "current_stacktrace");
                return Checked::Invalid;
            }
        };
        Checked::Node(self.push(Expr::CurrentStacktrace(depth)))
    }

    // ---- Constant folding -----------------------------------------------------------

    /// Builds the literal of a constant subtree in the literal heap the way
    /// ERTS's `my_copy_struct` does: `{const, T}` is `T` taken as it is,
    /// `{{...}}` is the tuple of its folded elements, lists and maps fold
    /// their parts, a map keeps the later of equal keys.
    fn fold(&mut self, t: TermRef<'_>) -> Word {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.fold_inner(t))
    }

    fn fold_inner(&mut self, t: TermRef<'_>) -> Word {
        match t.kind() {
            TermKind::Cons(_) => {
                // Fold a whole run of list cells iteratively: long constant
                // lists are common and only their elements nest.
                let mut heads = Vec::new();
                let mut rest = t;
                while let Some(c) = rest.as_cons() {
                    heads.push(self.fold(c.head()));
                    rest = c.tail();
                }
                let tail = self.fold(rest);
                self.literals.list_with_tail(&heads, tail)
            }
            TermKind::Tuple(tuple) => {
                if let (2, Some(c)) = (tuple.len(), tuple.get(0))
                    && c.as_atom() == Some(Atom::CONST)
                {
                    return self.literal(tuple.get(1).unwrap_or(t));
                }
                let inner = tuple.get(0).and_then(|e| e.as_tuple());
                match inner {
                    Some(inner) if tuple.len() == 1 => {
                        let elements: Vec<Word> = inner.iter().map(|e| self.fold(e)).collect();
                        self.literals.tuple(&elements)
                    }
                    // Not a constant form (cannot happen for checked constants).
                    _ => self.literal(t),
                }
            }
            TermKind::Map(map) => {
                let pairs: Vec<(Word, Word)> =
                    map.iter().map(|(k, v)| (self.fold(k), self.fold(v))).collect();
                self.literals.map(&pairs)
            }
            _ => self.literal(t),
        }
    }
}

/// Is `head` a list of one element or more ending in `'_'`, a prefix head
/// (OTP 29's "these arguments first, any number after")?
fn is_prefix_list(head: TermRef<'_>) -> bool {
    let mut items = head.list_items();
    let first = items.next().is_some();
    items.by_ref().for_each(drop);
    first && items.tail().as_atom() == Some(Atom::UNDERSCORE)
}

fn with(path: &[Step], step: Step) -> Vec<Step> {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// The message ERTS gives for an unbound variable (`"Variable $%d is unbound."`).
fn unbound_message(n: u32) -> Vec<u8> {
    // ERTS prints the number as a C int.
    format!("Variable ${} is unbound.", n as i32).into_bytes()
}

/// Is `v` a small integer on 64-bit ERTS (60 bits, not our 61)?
fn is_erts_small(v: i64) -> bool {
    (-(1 << 59)..(1 << 59)).contains(&v)
}

/// The number of a match variable `'$N'`, as ERTS's `db_is_variable`
/// computes it: decimal digits without leading zeros (or `'$0'`), added up
/// in a 32-bit C `int` that silently wraps; a result that wraps negative
/// means "not a variable".
pub(crate) fn variable_number(t: TermRef<'_>) -> Option<u32> {
    t.as_atom().and_then(atom_variable_number)
}

/// [`variable_number`] of an atom.
pub(crate) fn atom_variable_number(a: Atom) -> Option<u32> {
    let name = a.name();
    let digits = name.strip_prefix('$')?.as_bytes();
    match digits {
        [] => None,
        [b'0'] => Some(0),
        [b'1'..=b'9', ..] if digits.iter().all(u8::is_ascii_digit) => {
            let n = digits
                .iter()
                .fold(0i32, |n, &d| n.wrapping_mul(10).wrapping_add(i32::from(d - b'0')));
            u32::try_from(n).ok()
        }
        _ => None,
    }
}

/// Renames every variable atom of `spec` densely, as ERTS's
/// `match_compact` does: distinct numbers sorted ascending become
/// `'$0'`, `'$1'`, ... Returns the renamed spec and the original number of
/// each new one. With `renumber_constants` off, atoms inside `{const, T}`
/// keep their names ([`Config::renumber_constants`]).
fn renumber(spec: TermRef<'_>, renumber_constants: bool) -> Result<(Term, Vec<u32>), SpecErrors> {
    let mut numbers = BTreeSet::new();
    let mut stack = vec![spec];
    while let Some(t) = stack.pop() {
        match t.kind() {
            TermKind::Atom(_) => {
                if let Some(n) = variable_number(t) {
                    numbers.insert(n);
                }
            }
            TermKind::Cons(c) => {
                stack.push(c.head());
                stack.push(c.tail());
            }
            TermKind::Tuple(tuple) => stack.extend(tuple.iter()),
            TermKind::Map(m) => {
                stack.extend(m.keys());
                stack.extend(m.values());
            }
            _ => {}
        }
    }
    let numbers: Vec<u32> = numbers.into_iter().collect();
    // The new names, interned up front so that renaming cannot fail.
    let names = (0..numbers.len())
        .map(|i| Atom::try_new(&format!("${i}")))
        .collect::<Result<Vec<Atom>, _>>()
        .map_err(|_| SpecErrors {
            errors: vec![SpecError {
                kind: SpecErrorKind::AtomTableFull,
                message: b"Too many atoms; system limit reached.".to_vec(),
                path: vec![],
                source: None,
            }],
        })?;
    let rename = |a: Atom| {
        let n = atom_variable_number(a)?;
        let i = numbers.binary_search(&n).ok()?;
        Some(names[i])
    };
    let renamed = match renumber_constants {
        true => None,
        false => renumber_outside_constants(spec, &rename),
    };
    let renamed = renamed.unwrap_or_else(|| crate::term::map_atoms(spec, &rename, &|_| false));
    Ok((renamed, numbers))
}

/// [`renumber`] without ERTS's quirk Q1: heads renamed as a whole, guards
/// and bodies except inside `{const, T}`. `None` if `spec` is not a proper
/// list of 3-tuples (the checker has refused it already).
fn renumber_outside_constants(
    spec: TermRef<'_>,
    rename: &dyn Fn(Atom) -> Option<Atom>,
) -> Option<Term> {
    let is_constant = |t: TermRef<'_>| {
        t.as_tuple().is_some_and(|t| {
            t.len() == 2 && t.get(0).and_then(|c| c.as_atom()) == Some(Atom::CONST)
        })
    };
    let mut items = spec.list_items();
    let clauses: Option<Vec<Term>> = items
        .by_ref()
        .map(|clause| {
            let clause = clause.as_tuple().filter(|t| t.len() == 3)?;
            let head = crate::term::map_atoms(clause.get(0)?, rename, &|_| false);
            let guards = crate::term::map_atoms(clause.get(1)?, rename, &is_constant);
            let body = crate::term::map_atoms(clause.get(2)?, rename, &is_constant);
            Some(Term::tuple([head, guards, body]))
        })
        .collect();
    items.tail().is_nil().then_some(Term::list(clauses?))
}
