//! Back again: the fun a person would write for a spec, such that
//! [`fun2ms`](super::fun2ms) translates it to that very spec.
//!
//! Head variables `'$N'` become `A`, `B`, ...; `'$_'` becomes `object()`
//! and `'$*'` `bindings()`; `{{...}}` is a tuple and `{F, Args...}` a call
//! or an operator; `{const, T}` becomes a variable bound to `T` (returned
//! with the fun, as the shell's bindings would be); a list of characters
//! becomes a string (ms_transform folds lists, not strings).
//!
//! Not every spec has such a fun. `ms_transform` numbers head variables in
//! order of appearance, folds constant operators (`{'+', 1, 2}` is `3`),
//! knows fewer functions than ERTS (`tuple_size/1`), and has no way to
//! write `'$$'` or a pid. Then [`spec_to_fun`] says why. Every fun it
//! returns has been translated back and checked to give the spec.

use std::fmt::Write as _;

use super::{Dialect, fun2ms};
use crate::term::display::{write_atom, write_quoted};
use crate::term::{Kind, Term, TermRef};

/// A fun that translates to a given spec, with the bindings it needs.
#[derive(Clone, Debug)]
pub struct FunText {
    /// The fun, as Erlang text.
    pub text: String,
    /// The variables the fun uses but does not bind, with their values
    /// (what `{const, Value}` in the spec needs).
    pub bindings: Vec<(String, Term)>,
}

/// Why no fun translates to a spec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no fun translates to this spec{}: {reason}", clause.map(|c| format!(" (clause {c})")).unwrap_or_default())]
pub struct NoFun {
    /// The clause (from 1) the reason is about, if one.
    pub clause: Option<usize>,
    /// Why, in words.
    pub reason: String,
}

fn no(clause: usize, reason: impl Into<String>) -> NoFun {
    NoFun { clause: Some(clause), reason: reason.into() }
}

/// The fun that [`fun2ms`] translates, with the returned bindings, to
/// exactly `spec` in `dialect`, or why there is none.
///
/// ```
/// use matchspec::fun2ms::{Dialect, spec_to_fun};
/// use matchspec::term::Term;
///
/// let spec = Term::parse("[{{'$1','$2'},[{'>','$2',100}],['$1']}]").unwrap();
/// let fun = spec_to_fun(spec.as_ref(), Dialect::Table).unwrap();
/// assert_eq!(fun.text, "fun({A, B}) when B > 100 -> A end");
///
/// let spec = Term::parse("[{'$1',[],[{'+',1,2}]}]").unwrap();
/// assert!(spec_to_fun(spec.as_ref(), Dialect::Table).is_err());
/// ```
pub fn spec_to_fun(spec: TermRef<'_>, dialect: Dialect) -> Result<FunText, NoFun> {
    let clauses = spec.proper_list().filter(|c| !c.is_empty()).ok_or_else(|| NoFun {
        clause: None,
        reason: "a spec is a non-empty list of clauses".into(),
    })?;
    let mut printer = Printer::default();
    let mut text = String::from("fun");
    for (i, clause) in clauses.iter().enumerate() {
        if i > 0 {
            text.push_str(";\n   ");
        }
        printer.clause(*clause, dialect, i + 1, &mut text)?;
    }
    text.push_str(" end");
    let fun = FunText { text, bindings: printer.bindings };
    // The proof: translate it back.
    let named: Vec<(&str, Term)> =
        fun.bindings.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    match fun2ms(&fun.text, dialect, &named) {
        Ok(back) if back.as_ref().eq_exact(&spec) => Ok(fun),
        Ok(back) => Err(NoFun {
            clause: None,
            reason: format!("the nearest fun, {}, translates to {back}", fun.text),
        }),
        Err(e) => Err(NoFun {
            clause: None,
            reason: format!("the nearest fun, {}, does not translate: {}", fun.text, e.message()),
        }),
    }
}

#[derive(Default)]
struct Printer {
    bindings: Vec<(String, Term)>,
    /// The lowest variable in each subterm of the clause's head.
    order: VarOrder,
}

/// Where an expression is: guards and bodies allow different functions,
/// and only a guard's top-level tests have old type-test names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    GuardTop,
    Guard,
    Body,
}

impl Printer {
    fn clause(
        &mut self,
        clause: TermRef<'_>,
        dialect: Dialect,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        let parts = clause
            .as_tuple()
            .filter(|t| t.len() == 3)
            .ok_or_else(|| no(n, "a clause is {Head, Guards, Body}"))?;
        let (head, guards, body) = (
            parts.get(0).unwrap_or(clause),
            parts.get(1).unwrap_or(clause),
            parts.get(2).unwrap_or(clause),
        );
        self.order = VarOrder::of(head);
        let mut vars = Vec::new();
        head_vars(head, &self.order, &mut vars);
        for (i, v) in vars.iter().enumerate() {
            if *v != i as u64 + 1 {
                return Err(no(
                    n,
                    format!(
                        "ms_transform numbers head variables in order of appearance, and here '${v}' comes where '${}' would",
                        i + 1
                    ),
                ));
            }
        }
        let head_ok = match dialect {
            Dialect::Table => {
                var_number(head).is_some() || head.as_tuple().is_some() || is_any(head)
            }
            Dialect::Trace => {
                var_number(head).is_some()
                    || head.is_nil()
                    || head.as_cons().is_some()
                    || is_any(head)
            }
        };
        if !head_ok {
            let want = if dialect == Dialect::Table {
                "a variable or a tuple"
            } else {
                "a variable or a list"
            };
            return Err(no(n, format!("the head {head} is not {want}")));
        }
        out.push('(');
        if head.as_cons().is_some() {
            // A trace head must be a list to ms_transform, not a string.
            self.list(head, out, |p, e, out| p.pattern(e, n, out))?;
        } else {
            self.pattern(head, n, out)?;
        }
        out.push(')');
        let guards = guards.proper_list().ok_or_else(|| no(n, "the guards are not a list"))?;
        if !guards.is_empty() {
            out.push_str(" when ");
            self.sequence(&guards, vars.len(), Place::GuardTop, n, out)?;
        }
        let body = body
            .proper_list()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| no(n, "a fun's body has at least one expression"))?;
        out.push_str(" -> ");
        self.sequence(&body, vars.len(), Place::Body, n, out)
    }

    fn sequence(
        &mut self,
        exprs: &[TermRef<'_>],
        vars: usize,
        place: Place,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        self.separated(exprs.iter().copied(), out, |p, e, out| p.expr(e, vars, place, n, out))
    }

    /// A head: variables and `_` by name, everything else as a literal.
    /// (The stack grows with a deep head, as the rest of fun2ms's does.)
    fn pattern(&mut self, t: TermRef<'_>, n: usize, out: &mut String) -> Result<(), NoFun> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.pattern_inner(t, n, out))
    }

    fn pattern_inner(&mut self, t: TermRef<'_>, n: usize, out: &mut String) -> Result<(), NoFun> {
        if let Some(v) = var_number(t) {
            out.push_str(&var_name(v));
            return Ok(());
        }
        if is_any(t) {
            out.push('_');
            return Ok(());
        }
        match t.kind() {
            Kind::Tuple(_) => {
                let tuple = t.as_tuple().ok_or_else(|| no(n, "bad tuple"))?;
                out.push('{');
                self.separated(tuple.iter(), out, |p, e, out| p.pattern(e, n, out))?;
                out.push('}');
                Ok(())
            }
            Kind::Cons(_) if string_of(t).is_some() => literal(t, n, out),
            Kind::Cons(_) => self.list(t, out, |p, e, out| p.pattern(e, n, out)),
            Kind::Map(_) => {
                out.push_str("#{");
                let pairs = self.order.pairs(t);
                self.separated(pairs, out, |p, (k, v), out| {
                    p.pattern(k, n, out)?;
                    out.push_str(" := ");
                    p.pattern(v, n, out)
                })?;
                out.push('}');
                Ok(())
            }
            _ => literal(t, n, out),
        }
    }

    /// `[A, B | T]`, each element (and the tail) written by `each`.
    fn list<'a>(
        &mut self,
        t: TermRef<'a>,
        out: &mut String,
        mut each: impl FnMut(&mut Self, TermRef<'a>, &mut String) -> Result<(), NoFun>,
    ) -> Result<(), NoFun> {
        out.push('[');
        let mut items = t.list_items();
        self.separated(items.by_ref(), out, &mut each)?;
        let tail = items.tail();
        if !tail.is_nil() {
            out.push_str(" | ");
            each(self, tail, out)?;
        }
        out.push(']');
        Ok(())
    }

    /// `items`, each written by `each`, separated by `, `.
    fn separated<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        out: &mut String,
        mut each: impl FnMut(&mut Self, T, &mut String) -> Result<(), NoFun>,
    ) -> Result<(), NoFun> {
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            each(self, item, out)?;
        }
        Ok(())
    }

    /// A guard or body expression (on a stack that grows with its depth).
    fn expr(
        &mut self,
        t: TermRef<'_>,
        vars: usize,
        place: Place,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(t, vars, place, n, out))
    }

    fn expr_inner(
        &mut self,
        t: TermRef<'_>,
        vars: usize,
        place: Place,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        if let Some(a) = t.as_atom() {
            let name = a.name();
            if let Some(v) = var_number(t) {
                if v as usize > vars || v == 0 {
                    return Err(no(n, format!("'${v}' is not bound by the head")));
                }
                out.push_str(&var_name(v));
                return Ok(());
            }
            match name {
                "$_" => out.push_str("object()"),
                "$*" => out.push_str("bindings()"),
                "_" => out.push('_'),
                _ if name.starts_with('$') => {
                    return Err(no(
                        n,
                        format!(
                            "ms_transform writes the atom {t} in a guard or body as {{const,{t}}}"
                        ),
                    ));
                }
                _ => literal(t, n, out)?,
            }
            return Ok(());
        }
        match t.kind() {
            Kind::Tuple(_) => self.call(t, vars, place, n, out),
            Kind::Cons(_) if string_of(t).is_some() => literal(t, n, out),
            Kind::Cons(_) => {
                self.list(t, out, |p, e, out| p.expr(e, vars, Place::inner(place), n, out))
            }
            Kind::Map(m) => {
                let inner = Place::inner(place);
                out.push_str("#{");
                self.separated(m.iter(), out, |p, (k, v), out| {
                    p.expr(k, vars, inner, n, out)?;
                    out.push_str(" => ");
                    p.expr(v, vars, inner, n, out)
                })?;
                out.push('}');
                Ok(())
            }
            _ => literal(t, n, out),
        }
    }

    fn call(
        &mut self,
        t: TermRef<'_>,
        vars: usize,
        place: Place,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        let tuple = t.as_tuple().ok_or_else(|| no(n, "bad tuple"))?;
        let args: Vec<TermRef<'_>> = tuple.iter().skip(1).collect();
        let Some(first) = tuple.get(0) else { return Err(no(n, "{} is no expression")) };
        // `{{...}}`: a tuple.
        if let (true, Some(elements)) = (args.is_empty(), first.as_tuple()) {
            out.push('{');
            let inner = Place::inner(place);
            self.separated(elements.iter(), out, |p, e, out| p.expr(e, vars, inner, n, out))?;
            out.push('}');
            return Ok(());
        }
        let Some(name) = first.as_atom() else {
            return Err(no(n, format!("{t} is neither a call nor {{{{Tuple}}}}")));
        };
        let name = name.name();
        if name == "const" && args.len() == 1 {
            // Always a bound variable: a literal could fold (`'$1' /= 1`).
            let value = args[0];
            let var = format!("Const{}", self.bindings.len() + 1);
            self.bindings.push((var.clone(), Term::from(value)));
            out.push_str(&var);
            return Ok(());
        }
        let inner = Place::inner(place);
        if is_operator(name, args.len()) {
            let op = name;
            match args.as_slice() {
                [a] => {
                    out.push_str(op);
                    out.push(if op.chars().all(char::is_alphabetic) { ' ' } else { '(' });
                    self.operand(*a, vars, inner, n, out)?;
                    if !op.chars().all(char::is_alphabetic) {
                        out.push(')');
                    }
                }
                [a, b] => {
                    self.operand(*a, vars, inner, n, out)?;
                    let _ = write!(out, " {op} ");
                    self.operand(*b, vars, inner, n, out)?;
                }
                _ => unreachable!("operators take one or two operands"),
            }
            return Ok(());
        }
        if !known_function(name, args.len(), place) {
            return Err(no(
                n,
                format!("ms_transform has no {name}/{} {}", args.len(), place.words()),
            ));
        }
        // An atom written as an atom (not a variable or `_`) as the record name.
        let atom_literal = |t: &TermRef<'_>| {
            t.as_atom().is_some_and(|a| !matches!(a.name(), "$_" | "$*" | "_"))
                && var_number(*t).is_none()
        };
        if name == "is_record" && args.get(1).is_some_and(atom_literal) {
            return Err(no(
                n,
                "ms_transform reads is_record(X, Name) as a record test, which needs the record's definition",
            ));
        }
        // An old type-test name at the top of a guard would be renamed.
        if place == Place::GuardTop && name == "float" {
            out.push_str("erlang:");
        }
        write_atom(out, name).ok();
        out.push('(');
        self.separated(args, out, |p, a, out| p.expr(a, vars, inner, n, out))?;
        out.push(')');
        Ok(())
    }

    /// An operand, in parentheses when it is itself an operator.
    fn operand(
        &mut self,
        t: TermRef<'_>,
        vars: usize,
        place: Place,
        n: usize,
        out: &mut String,
    ) -> Result<(), NoFun> {
        let is_op = t.as_tuple().is_some_and(|tuple| {
            tuple
                .get(0)
                .and_then(|f| f.as_atom())
                .is_some_and(|f| is_operator(f.name(), tuple.len() - 1))
        });
        // `[]` as an operand is written `""`: ms_transform folds an
        // operator on constants (`[] > 1` is `true`) but not on a string
        // literal, so a spec holding `{'>', [], 1}` came from `"" > 1`.
        if t.is_nil() {
            out.push_str("\"\"");
            return Ok(());
        }
        let negative =
            t.as_i64().is_some_and(|v| v < 0) || t.as_f64().is_some_and(|f| f.is_sign_negative());
        if is_op || negative {
            out.push('(');
            self.expr(t, vars, place, n, out)?;
            out.push(')');
            Ok(())
        } else {
            self.expr(t, vars, place, n, out)
        }
    }
}

impl Place {
    fn inner(self) -> Place {
        match self {
            Place::GuardTop | Place::Guard => Place::Guard,
            Place::Body => Place::Body,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Place::GuardTop | Place::Guard => "in guards",
            Place::Body => "in bodies",
        }
    }
}

/// A literal: numbers, atoms, strings of code points as lists, binaries.
fn literal(t: TermRef<'_>, n: usize, out: &mut String) -> Result<(), NoFun> {
    match t.kind() {
        Kind::Small(_) | Kind::Big(_) | Kind::Float(_) | Kind::Atom(_) | Kind::Nil => {
            let _ = write!(out, "{t}");
            Ok(())
        }
        Kind::Bits(_) => {
            let _ = write!(out, "{t}");
            Ok(())
        }
        Kind::Cons(_) => match string_of(t) {
            Some(text) => {
                let _ = write_quoted(out, &text, '"');
                Ok(())
            }
            None => Err(no(n, format!("{t} is not a string"))),
        },
        _ => Err(no(n, format!("{t} has no literal syntax in a fun"))),
    }
}

/// `N` if `t` is the atom `'$N'`, written as ms_transform writes it.
fn var_number(t: TermRef<'_>) -> Option<u64> {
    let name = t.as_atom()?.name();
    let digits = name.strip_prefix('$')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

fn is_any(t: TermRef<'_>) -> bool {
    t.as_atom().is_some_and(|a| a.name() == "_")
}

/// The head's variables in order of first appearance (tuples left to
/// right, list heads before tails, map keys before values).
fn head_vars(t: TermRef<'_>, order: &VarOrder, out: &mut Vec<u64>) {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        if let Some(v) = var_number(t) {
            if seen.insert(v) {
                out.push(v);
            }
            continue;
        }
        match t.kind() {
            Kind::Tuple(_) => {
                if let Some(tuple) = t.as_tuple() {
                    stack.extend(tuple.iter().rev());
                }
            }
            Kind::Cons(c) => {
                stack.push(c.tail());
                stack.push(c.head());
            }
            Kind::Map(_) => {
                for (k, v) in order.pairs(t).into_iter().rev() {
                    stack.push(v);
                    stack.push(k);
                }
            }
            _ => {}
        }
    }
}

/// The lowest variable number in every subterm of a head, found in one
/// walk, by which a map's pairs are ordered: a map's text order is free,
/// and ms_transform numbers variables in text order, so the pairs go by
/// the lowest variable number each holds (pairs with none last, all else
/// in key order). Kept per subterm (by its word: a boxed subterm's is its
/// own, an immediate's its value) so that maps nested in maps are not
/// walked again for every map around them.
#[derive(Default)]
struct VarOrder {
    lowest: rustc_hash::FxHashMap<crate::term::Word, u64>,
}

impl VarOrder {
    fn of(head: TermRef<'_>) -> VarOrder {
        let mut lowest = rustc_hash::FxHashMap::default();
        // Each subterm twice: to push its parts, then (`true`) to take
        // the lowest of theirs.
        let mut stack = vec![(head, false)];
        while let Some((t, parts_done)) = stack.pop() {
            if let Some(v) = var_number(t) {
                lowest.insert(t.word(), v);
                continue;
            }
            if parts_done {
                let low =
                    parts(t).map(|p| lowest.get(&p.word()).copied().unwrap_or(u64::MAX)).min();
                lowest.insert(t.word(), low.unwrap_or(u64::MAX));
            } else if !lowest.contains_key(&t.word()) {
                stack.push((t, true));
                stack.extend(parts(t).map(|p| (p, false)));
            }
        }
        VarOrder { lowest }
    }

    /// The lowest variable number in `t` (`u64::MAX` for none).
    fn lowest(&self, t: TermRef<'_>) -> u64 {
        self.lowest
            .get(&t.word())
            .copied()
            .unwrap_or_else(|| VarOrder::of(t).lowest.get(&t.word()).copied().unwrap_or(u64::MAX))
    }

    /// A map's pairs in the order to write them in a head.
    fn pairs<'a>(&self, map: TermRef<'a>) -> Vec<(TermRef<'a>, TermRef<'a>)> {
        let Some(m) = map.as_map() else { return Vec::new() };
        let mut pairs: Vec<(u64, TermRef<'a>, TermRef<'a>)> =
            m.iter().map(|(k, v)| (self.lowest(k).min(self.lowest(v)), k, v)).collect();
        pairs.sort_by_key(|p| p.0);
        pairs.into_iter().map(|(_, k, v)| (k, v)).collect()
    }
}

/// The parts of a tuple, list cell or map (keys and values).
fn parts(t: TermRef<'_>) -> impl Iterator<Item = TermRef<'_>> {
    let tuple = t.as_tuple().into_iter().flat_map(|tuple| tuple.iter());
    let cell = t.as_cons().into_iter().flat_map(|c| [c.head(), c.tail()]);
    let map = t.as_map().into_iter().flat_map(|m| m.iter().flat_map(|(k, v)| [k, v]));
    tuple.chain(cell).chain(map)
}

/// The text of a list that can be written as a string: proper, not
/// empty, every element a character. ms_transform keeps a string literal
/// as it is where it folds a list (`"a" < "b"` stays, `[97] < [98]` is
/// `true`), so lists of characters are written as strings.
fn string_of(t: TermRef<'_>) -> Option<String> {
    let items = t.proper_list().filter(|items| !items.is_empty())?;
    items.iter().map(|c| char::from_u32(u32::try_from(c.as_i64()?).ok()?)).collect()
}

/// `A`, `B`, ... `Z`, then `V27`, ...
fn var_name(n: u64) -> String {
    if (1..=26).contains(&n) {
        char::from(b'A' + (n - 1) as u8).to_string()
    } else {
        format!("V{n}")
    }
}

/// Is a spec's `{Name, ...}` of this arity an operator, written infix or
/// prefix in a fun? ms_transform's operators, and `++`, `--` and `!`: not
/// ERTS functions, but ms_transform writes every operator it cannot fold
/// this way (and ERTS then rejects the spec).
fn is_operator(name: &str, arity: usize) -> bool {
    super::guard::is_operator(name, arity) || (arity == 2 && matches!(name, "++" | "--" | "!"))
}

/// Does ms_transform take `name/arity` as a call here?
fn known_function(name: &str, arity: usize, place: Place) -> bool {
    let place = match place {
        Place::Body => super::error::Part::Body,
        _ => super::error::Part::Guard,
    };
    super::guard::is_ms_function(name, arity, place)
}
