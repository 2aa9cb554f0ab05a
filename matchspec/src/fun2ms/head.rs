//! A clause's head: `ms_transform`'s `check_type`, `transform_head` and `th`.
//!
//! Variables become `'$1'`, `'$2'`, ... in order of first appearance, a
//! variable matched against the whole head (`X = {...}`) becomes `'$_'`,
//! and `_` stays `'_'`. Everything else is copied: what `normalise` cannot
//! evaluate later (an operator other than a sign or `++`, a call, ...) is
//! kept as [`Form::Stuck`].

use super::Dialect;
use super::error::TransformErrorKind as K;
use super::form::{BinForm, Form, FormKind, int_value};
use crate::syntax::Span;
use crate::syntax::expr::{Clause, Element, Expr, ExprKind, RecordField};
use crate::term::Atom;

/// What the head binds: `ms_transform`'s binding list, searched newest
/// first, starting with `_` bound to `'_'`.
#[derive(Debug)]
pub(super) struct HeadBindings {
    next: u32,
    list: Vec<(Box<str>, Atom)>,
}

impl HeadBindings {
    fn new() -> HeadBindings {
        HeadBindings { next: 1, list: vec![("_".into(), Atom::new("_"))] }
    }

    /// What the head made of variable `name`, if it binds it.
    pub(super) fn lookup(&self, name: &str) -> Option<Atom> {
        self.list.iter().rev().find(|(n, _)| &**n == name).map(|&(_, a)| a)
    }

    fn bind(&mut self, name: &str, atom: Atom) {
        self.list.push((name.into(), atom));
    }

    fn bind_next(&mut self, name: &str) -> Atom {
        let atom = Atom::new(&format!("${}", self.next));
        self.next += 1;
        self.bind(name, atom);
        atom
    }
}

/// An error at a node: the kind, where OTP reports it, what to underline.
pub(super) type Failure = (K, Span, Span);

fn fail<T>(kind: K, expr: &Expr) -> Result<T, Failure> {
    Err((kind, expr.at, expr.span))
}

/// `check_type`: a table fun takes one variable or tuple (or record), a
/// trace fun one variable or list, possibly matched with a variable.
pub(super) fn check_type(clause: &Clause, dialect: Dialect) -> Result<(), Failure> {
    let wrong = || {
        let kind = match dialect {
            Dialect::Table => K::TableHead,
            Dialect::Trace => K::TraceHead,
        };
        let span = clause.params.iter().fold(clause.at, |s, p| s.to(p.span));
        Err((kind, clause.at, span))
    };
    let [first] = clause.params.as_slice() else { return wrong() };
    let mut param: &Expr = first;
    loop {
        match (&param.kind, dialect) {
            (ExprKind::Var(_), _) => return Ok(()),
            (ExprKind::Tuple(_) | ExprKind::Record { base: None, .. }, Dialect::Table) => {
                return Ok(());
            }
            (ExprKind::Cons(..) | ExprKind::Nil, Dialect::Trace) => return Ok(()),
            (ExprKind::Match(left, right), _) if left.is_var() => param = &**right,
            (ExprKind::Match(left, right), _) if right.is_var() => param = &**left,
            _ => return wrong(),
        }
    }
}

/// `transform_head`: the head pattern, and what it binds.
pub(super) fn transform(param: &Expr) -> Result<(Form, HeadBindings), Failure> {
    let mut bindings = HeadBindings::new();
    let pattern = match &param.kind {
        ExprKind::Match(left, right) => match (&left.kind, &right.kind) {
            (ExprKind::Var(name), _) => {
                bindings.bind(name, Atom::new("$_"));
                right
            }
            (_, ExprKind::Var(name)) => {
                bindings.bind(name, Atom::new("$_"));
                left
            }
            _ => param,
        },
        _ => param,
    };
    let form = th(pattern, &mut bindings)?;
    Ok((form, bindings))
}

/// `th`: one pattern node.
fn th(expr: &Expr, b: &mut HeadBindings) -> Result<Form, Failure> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || th_inner(expr, b))
}

fn th_inner(expr: &Expr, b: &mut HeadBindings) -> Result<Form, Failure> {
    let kind = match &expr.kind {
        ExprKind::Var(name) => FormKind::Atom(match b.lookup(name) {
            Some(atom) => atom,
            None => b.bind_next(name),
        }),
        ExprKind::Atom(a) => {
            if is_dollar_number(a.name()) {
                return fail(K::HeadDollarAtom(*a), expr);
            }
            FormKind::Atom(*a)
        }
        ExprKind::Int(i) => FormKind::Int(int_value(i)),
        ExprKind::Char(c) => FormKind::Int((*c).into()),
        ExprKind::Float(f) => FormKind::Float(*f),
        ExprKind::String(s) => FormKind::String(s.clone()),
        ExprKind::Nil => FormKind::Nil,
        ExprKind::Cons(h, t) => {
            let h = th(h, b)?;
            FormKind::Cons(Box::new(h), Box::new(th(t, b)?))
        }
        ExprKind::Tuple(elements) => FormKind::Tuple(th_all(elements, b)?),
        ExprKind::Match(..) => return fail(K::HeadMatch, expr),
        ExprKind::Record { base: None, name, fields } => return record(expr, *name, fields, b),
        ExprKind::Map { base: None, fields } => {
            let mut pairs = Vec::with_capacity(fields.len());
            for field in fields {
                let key = th(&field.key, b)?;
                pairs.push((key, th(&field.value, b)?));
            }
            FormKind::Map(pairs)
        }
        ExprKind::Bin(elements) => {
            let mut segments = Vec::with_capacity(elements.len());
            for element in elements {
                if let ExprKind::Var(name) = &element.value.kind {
                    return fail(K::HeadBinVariable(name.to_string()), &element.value);
                }
                let value = th(&element.value, b)?;
                let size = element.size.as_ref().map(|s| th(s, b)).transpose()?;
                segments.push(BinForm { value, size, types: element.types.clone() });
            }
            FormKind::Bin(segments)
        }
        ExprKind::Op1(op, operand) => {
            let operand = th(operand, b)?;
            match op.0 {
                "+" | "-" => FormKind::Sign { negate: op.0 == "-", operand: Box::new(operand) },
                _ => stuck(expr, vec![operand]),
            }
        }
        ExprKind::Op2(op, left, right) => {
            let left = th(left, b)?;
            let right = th(right, b)?;
            match op.0 {
                "++" => FormKind::Append(Box::new(left), Box::new(right)),
                _ => stuck(expr, vec![left, right]),
            }
        }
        // Nothing else is a pattern; ms_transform walks it like any tuple
        // (numbering variables, checking atoms), and normalise then fails.
        _ => {
            let mut children = Vec::new();
            for child in generic_children(expr) {
                children.push(th(child, b)?);
            }
            stuck(expr, children)
        }
    };
    Ok(Form::new(kind, expr.span))
}

fn th_all(exprs: &[Expr], b: &mut HeadBindings) -> Result<Vec<Form>, Failure> {
    exprs.iter().map(|e| th(e, b)).collect()
}

fn stuck(expr: &Expr, children: Vec<Form>) -> FormKind {
    FormKind::Stuck { what: describe(expr), children }
}

/// A record pattern: its fields are translated first, then the record is
/// looked up, and msc knows no records.
fn record(
    expr: &Expr,
    name: Atom,
    fields: &[RecordField],
    b: &mut HeadBindings,
) -> Result<Form, Failure> {
    let mut defaults = 0;
    for field in fields {
        match &field.name.kind {
            ExprKind::Atom(_) => {}
            ExprKind::Var(v) if &**v == "_" => defaults += 1,
            _ => return fail(K::HeadRecord(name), expr),
        }
        th(&field.value, b)?;
    }
    if defaults > 1 {
        return fail(K::HeadDuplicateField(name, Atom::new("_")), expr);
    }
    fail(K::HeadRecord(name), expr)
}

/// Is `name` `$` followed by what `list_to_integer/1` reads (an optional
/// sign and decimal digits)?
fn is_dollar_number(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('$') else { return false };
    let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// The subexpressions of a node, in the order its abstract format holds
/// them (what ms_transform's generic walk visits).
pub(super) fn generic_children(expr: &Expr) -> Vec<&Expr> {
    match &expr.kind {
        ExprKind::Cons(h, t) => vec![h, t],
        ExprKind::Tuple(es) => es.iter().collect(),
        ExprKind::Map { base, fields } => {
            let mut v: Vec<&Expr> = base.iter().map(|b| &**b).collect();
            for f in fields {
                v.push(&f.key);
                v.push(&f.value);
            }
            v
        }
        ExprKind::Bin(elements) => {
            let mut v = Vec::new();
            for e in elements {
                v.push(&e.value);
                v.extend(e.size.as_ref());
            }
            v
        }
        ExprKind::Op1(_, a) => vec![a],
        ExprKind::Op2(_, a, c) | ExprKind::Match(a, c) | ExprKind::Remote(a, c) => vec![a, c],
        ExprKind::Call(callee, args) => {
            let mut v = vec![&**callee];
            v.extend(args);
            v
        }
        ExprKind::Fun(clauses) => {
            let mut v = Vec::new();
            for c in clauses {
                v.extend(&c.params);
                v.extend(c.guards.iter().flatten());
                v.extend(&c.body);
            }
            v
        }
        ExprKind::Record { base, fields, .. } => {
            let mut v: Vec<&Expr> = base.iter().map(|b| &**b).collect();
            for f in fields {
                v.push(&f.name);
                v.push(&f.value);
            }
            v
        }
        ExprKind::RecordField { base, field, .. } => vec![base, field],
        ExprKind::RecordIndex { field, .. } => vec![field],
        ExprKind::Other { children, .. } => children.iter().collect(),
        _ => Vec::new(),
    }
}

/// What a node is, in words, for the message when it cannot be evaluated.
pub(super) fn describe(expr: &Expr) -> &'static str {
    match &expr.kind {
        ExprKind::Op1(..) | ExprKind::Op2(..) => "an operator",
        ExprKind::Call(..) => "a function call",
        ExprKind::Remote(..) => "a remote function name",
        ExprKind::Map { base: Some(_), .. } => "a map update",
        ExprKind::Map { .. } => "a map with `:=`",
        ExprKind::Fun(_) => "a fun",
        ExprKind::Record { .. } | ExprKind::RecordField { .. } | ExprKind::RecordIndex { .. } => {
            "a record"
        }
        ExprKind::Other { element: Element::FunRef, .. } => "a fun",
        ExprKind::Other { .. } => "this expression",
        _ => "this expression",
    }
}
