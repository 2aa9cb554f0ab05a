//! Erlang expressions: the syntax tree of a `fun` as `erl_parse` builds it.
//!
//! Terms go straight into a heap; expressions cannot (they hold variables,
//! operators and calls), so the grammar's expression rules build this tree
//! instead. It mirrors Erlang's abstract format node for node, because
//! `ms_transform` is defined on that format: each node keeps `at`, the token
//! `erl_parse` annotates it with (what OTP reports as an error's location),
//! and `span`, all of its text (what a caret underlines).
//!
//! Constructs no match spec can express (`case`, comprehensions, `try`, ...)
//! are parsed in full, so that they are syntax-checked as Erlang checks
//! them, but kept only as [`ExprKind::Other`]: what they are and their
//! subexpressions in source order.

use super::build::SyntaxError;
use super::error::{ParseErrorKind, Span};
use super::token::IntLit;
use crate::term::Atom;

/// An expression with its positions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expr {
    pub(crate) kind: ExprKind,
    /// The token `erl_parse` annotates this node with.
    pub(crate) at: Span,
    /// The whole expression.
    pub(crate) span: Span,
}

/// What an expression is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExprKind {
    /// A variable, `_` included.
    Var(Box<str>),
    Atom(Atom),
    Int(IntLit),
    /// A character literal such as `$a` (an integer once evaluated).
    Char(u32),
    Float(f64),
    /// A string literal (adjacent strings joined).
    String(Vec<u32>),
    Nil,
    Cons(Box<Expr>, Box<Expr>),
    Tuple(Vec<Expr>),
    /// `#{...}`, or an update `Base#{...}`.
    Map {
        base: Option<Box<Expr>>,
        fields: Vec<MapField>,
    },
    Bin(Vec<BinElement>),
    Op1(Op, Box<Expr>),
    Op2(Op, Box<Expr>, Box<Expr>),
    /// `Pattern = Expr`.
    Match(Box<Expr>, Box<Expr>),
    /// `Callee(Args)`: the callee is an atom, a [`ExprKind::Remote`] or
    /// any other expression.
    Call(Box<Expr>, Vec<Expr>),
    /// `M:F`, which Erlang parses anywhere but allows only as a callee.
    Remote(Box<Expr>, Box<Expr>),
    /// `fun (...) -> ... end`.
    Fun(Vec<Clause>),
    /// `#Name{Field = Value, ...}`, or an update `Base#Name{...}`.
    Record {
        base: Option<Box<Expr>>,
        name: Atom,
        fields: Vec<RecordField>,
    },
    /// `Base#Name.Field`.
    RecordField {
        base: Box<Expr>,
        name: Atom,
        field: Box<Expr>,
    },
    /// `#Name.Field`.
    RecordIndex {
        name: Atom,
        field: Box<Expr>,
    },
    /// A construct a match spec cannot express, with its subexpressions in
    /// the order the abstract format holds them.
    Other {
        element: Element,
        children: Vec<Expr>,
    },
}

/// The constructs kept only as [`ExprKind::Other`], by the name of their
/// abstract-format node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Element {
    /// `[E || Q]`
    Lc,
    /// `<<E || Q>>`
    Bc,
    /// `#{K => V || Q}`
    Mc,
    /// `begin ... end`
    Block,
    If,
    Case,
    Receive,
    Try,
    /// `catch E`
    Catch,
    Maybe,
    /// A named fun, `fun F(...) -> ... end`.
    NamedFun,
    /// `fun f/1`, `fun m:f/1`.
    FunRef,
    /// A generator or filter's own node inside a comprehension, and the
    /// clauses of `case`, `if`, ... (never reported by name).
    Part,
}

impl Element {
    /// The node's name in the abstract format.
    pub(crate) fn node_name(self) -> &'static str {
        match self {
            Element::Lc => "lc",
            Element::Bc => "bc",
            Element::Mc => "mc",
            Element::Block => "block",
            Element::If => "if",
            Element::Case => "case",
            Element::Receive => "receive",
            Element::Try => "try",
            Element::Catch => "catch",
            Element::Maybe => "maybe",
            Element::NamedFun => "named_fun",
            Element::FunRef => "fun",
            Element::Part => "clause",
        }
    }
}

/// An operator, by its Erlang name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op(pub(crate) &'static str);

/// One clause of a fun: `(Params) when Guards -> Body`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Clause {
    /// The `(` that opens the parameters (the clause's annotation).
    pub(crate) at: Span,
    pub(crate) params: Vec<Expr>,
    /// Guard sequences, separated by `;` in the text; each a list of tests
    /// separated by `,`.
    pub(crate) guards: Vec<Vec<Expr>>,
    pub(crate) body: Vec<Expr>,
}

/// A field of a map expression: `Key => Value` or `Key := Value`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MapField {
    pub(crate) exact: bool,
    pub(crate) key: Expr,
    pub(crate) value: Expr,
    pub(crate) at: Span,
}

/// A segment of a binary expression: `Value:Size/Types`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BinElement {
    pub(crate) value: Expr,
    pub(crate) size: Option<Expr>,
    pub(crate) types: Option<Vec<(Atom, Option<IntLit>)>>,
    pub(crate) at: Span,
}

/// A field of a record expression: `name = Value`, or `_ = Value`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RecordField {
    /// The field name: an atom, or a variable (only `_` means anything).
    pub(crate) name: Expr,
    pub(crate) value: Expr,
    pub(crate) at: Span,
}

impl Expr {
    pub(crate) fn new(kind: ExprKind, at: Span, span: Span) -> Expr {
        Expr { kind, at, span }
    }

    /// A node annotated with its first token.
    pub(crate) fn spanning(kind: ExprKind, l: usize, r: usize) -> Expr {
        let span = Span::new(l, r);
        Expr { kind, at: span, span }
    }

    /// A binary operator node: annotated with the operator, spanning both operands.
    pub(crate) fn op2(op: (Op, Span), left: Expr, right: Expr) -> Expr {
        let span = left.span.to(right.span);
        Expr::new(ExprKind::Op2(op.0, Box::new(left), Box::new(right)), op.1, span)
    }

    /// A prefix operator node.
    pub(crate) fn op1(op: (Op, Span), operand: Expr) -> Expr {
        let span = op.1.to(operand.span);
        Expr::new(ExprKind::Op1(op.0, Box::new(operand)), op.1, span)
    }

    pub(crate) fn is_var(&self) -> bool {
        matches!(self.kind, ExprKind::Var(_))
    }

    pub(crate) fn as_atom(&self) -> Option<Atom> {
        match self.kind {
            ExprKind::Atom(a) => Some(a),
            _ => None,
        }
    }
}

/// Builds a list expression from its elements and tail, each cons cell
/// annotated as `erl_parse` does: the first with the `[`, the others with
/// their element's annotation.
pub(crate) fn list(open: Span, elements: Vec<Expr>, tail: Option<Expr>, close: Span) -> Expr {
    let mut rest = tail.unwrap_or_else(|| Expr::new(ExprKind::Nil, close, close));
    for (i, element) in elements.into_iter().enumerate().rev() {
        let (at, span) =
            if i == 0 { (open, open.to(close)) } else { (element.at, element.span.to(rest.span)) };
        rest = Expr::new(ExprKind::Cons(Box::new(element), Box::new(rest)), at, span);
    }
    rest
}

// Constructors for the grammar's actions.

/// `A = B`, annotated with the first token of `A`.
pub(crate) fn matches(left: Expr, right: Expr) -> Expr {
    let span = left.span.to(right.span);
    Expr::new(ExprKind::Match(Box::new(left), Box::new(right)), span.first(), span)
}

/// `F(Args)`, annotated with the first token of `F`.
pub(crate) fn call(callee: Expr, args: Vec<Expr>, end: usize) -> Expr {
    let span = Span::new(callee.span.start as usize, end);
    Expr::new(ExprKind::Call(Box::new(callee), args), span.first(), span)
}

/// `M:F`, annotated with the `:`.
pub(crate) fn remote(module: Expr, colon: Span, function: Expr) -> Expr {
    let span = module.span.to(function.span);
    Expr::new(ExprKind::Remote(Box::new(module), Box::new(function)), colon, span)
}

/// `#{...}` or `Base#{...}`, annotated with the `#`.
pub(crate) fn map(base: Option<Expr>, hash: Span, fields: Vec<MapField>, end: usize) -> Expr {
    let start = base.as_ref().map_or(hash.start as usize, |b| b.span.start as usize);
    let kind = ExprKind::Map { base: base.map(Box::new), fields };
    Expr::new(kind, hash, Span::new(start, end))
}

/// `#Name.Field`, annotated with the `#`.
pub(crate) fn record_index(hash: Span, name: Atom, field: Expr) -> Expr {
    let span = hash.to(field.span);
    Expr::new(ExprKind::RecordIndex { name, field: Box::new(field) }, hash, span)
}

/// `#Name{...}` or `Base#Name{...}`, annotated with the `#`.
pub(crate) fn record(
    base: Option<Expr>,
    hash: Span,
    name: Atom,
    fields: Vec<RecordField>,
    end: usize,
) -> Expr {
    let start = base.as_ref().map_or(hash.start as usize, |b| b.span.start as usize);
    let kind = ExprKind::Record { base: base.map(Box::new), name, fields };
    Expr::new(kind, hash, Span::new(start, end))
}

/// `Base#Name.Field`, annotated with the `#`.
pub(crate) fn record_field(base: Expr, hash: Span, name: Atom, field: Expr) -> Expr {
    let span = base.span.to(field.span);
    Expr::new(
        ExprKind::RecordField { base: Box::new(base), name, field: Box::new(field) },
        hash,
        span,
    )
}

/// A construct kept only by name, annotated with its keyword, spanning its
/// keyword and children.
pub(crate) fn other(element: Element, at: Span, children: Vec<Expr>) -> Expr {
    let span = children.iter().fold(at, |s, c| s.to(c.span));
    Expr::new(ExprKind::Other { element, children }, at, span)
}

/// A construct kept only by name, ending at `end`.
pub(crate) fn other_spanning(element: Element, at: Span, children: Vec<Expr>, end: usize) -> Expr {
    let span = Span::new(at.start as usize, end);
    Expr::new(ExprKind::Other { element, children }, at, span)
}

/// A list, binary or map comprehension: the template, then the qualifiers.
pub(crate) fn comprehension(
    element: Element,
    at: Span,
    template: Expr,
    qualifiers: Vec<Expr>,
    end: usize,
) -> Expr {
    let mut children = vec![template];
    children.extend(qualifiers);
    other_spanning(element, at, children, end)
}

/// `#{K => V || Qualifiers}`.
pub(crate) fn map_comprehension(
    at: Span,
    key: Expr,
    value: Expr,
    qualifiers: Vec<Expr>,
    end: usize,
) -> Expr {
    let mut children = vec![key, value];
    children.extend(qualifiers);
    other_spanning(Element::Mc, at, children, end)
}

/// A part of a construct (a generator, a `?=`), by its subexpressions.
pub(crate) fn part(children: Vec<Expr>) -> Expr {
    let at = children.first().map_or(Span::default(), |c| c.span.first());
    other(Element::Part, at, children)
}

/// The subexpressions of a clause in abstract-format order: patterns,
/// guards, body.
pub(crate) fn clause_parts(
    patterns: Vec<Expr>,
    guards: Vec<Vec<Expr>>,
    body: Vec<Expr>,
) -> Vec<Expr> {
    let mut parts = patterns;
    parts.extend(guards.into_iter().flatten());
    parts.extend(body);
    parts
}

/// A fun: every clause takes the same number of arguments (else, as
/// `erl_parse` says, they are two functions).
pub(crate) fn fun(at: Span, clauses: Vec<Clause>, end: usize) -> Result<Expr, SyntaxError> {
    same_arity(&clauses)?;
    let span = Span::new(at.start as usize, end);
    Ok(Expr::new(ExprKind::Fun(clauses), at, span))
}

/// The first clause whose arity differs from the first one's is an error.
fn same_arity<'a>(clauses: impl IntoIterator<Item = &'a Clause>) -> Result<(), SyntaxError> {
    let mut clauses = clauses.into_iter();
    let Some(first) = clauses.next() else { return Ok(()) };
    let arity = first.params.len();
    match clauses.find(|c| c.params.len() != arity) {
        None => Ok(()),
        Some(other) => {
            let why = format!(
                "head mismatch: a fun's clauses take {arity} and {} arguments",
                other.params.len()
            );
            Err(SyntaxError::new(
                ParseErrorKind::BadFun(why),
                other.at.start as usize,
                other.at.end as usize,
            ))
        }
    }
}

/// A named fun: every clause must repeat the same name.
pub(crate) fn named_fun(
    at: Span,
    clauses: Vec<(Expr, Clause)>,
    end: usize,
) -> Result<Expr, SyntaxError> {
    same_arity(clauses.iter().map(|(_, clause)| clause))?;
    let first = clauses.first().map(|(name, _)| name.kind.clone());
    let mut children = Vec::new();
    for (name, clause) in clauses {
        if Some(&name.kind) != first.as_ref() {
            let kind =
                ParseErrorKind::BadFun("a named fun's clauses must all have its name".into());
            return Err(SyntaxError::new(kind, name.span.start as usize, name.span.end as usize));
        }
        children.extend(clause_parts(clause.params, clause.guards, clause.body));
    }
    Ok(other_spanning(Element::NamedFun, at, children, end))
}

/// `(E)`: erl_parse keeps no trace of the parentheses, and neither do
/// positions (an operator's first token is inside them).
pub(crate) fn parenthesized(inner: Expr, _parens: Span) -> Expr {
    inner
}

/// Dropping walks the tree with a stack: a fun may nest as deep as its
/// text is long (`[1, 2, ...]`, `- - - 1`), deeper than the call stack goes.
impl Drop for Expr {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_children(&mut self.kind, &mut stack);
        while let Some(mut expr) = stack.pop() {
            take_children(&mut expr.kind, &mut stack);
        }
    }
}

/// Moves the children of `kind` onto `out`, leaving it a leaf.
fn take_children(kind: &mut ExprKind, out: &mut Vec<Expr>) {
    let clauses = |out: &mut Vec<Expr>, clauses: Vec<Clause>| {
        for c in clauses {
            out.extend(c.params);
            out.extend(c.guards.into_iter().flatten());
            out.extend(c.body);
        }
    };
    match std::mem::replace(kind, ExprKind::Nil) {
        ExprKind::Cons(a, b)
        | ExprKind::Op2(_, a, b)
        | ExprKind::Match(a, b)
        | ExprKind::Remote(a, b)
        | ExprKind::RecordField { base: a, field: b, .. } => {
            out.push(*a);
            out.push(*b);
        }
        ExprKind::Op1(_, a) | ExprKind::RecordIndex { field: a, .. } => out.push(*a),
        ExprKind::Tuple(es) | ExprKind::Other { children: es, .. } => out.extend(es),
        ExprKind::Map { base, fields } => {
            out.extend(base.map(|b| *b));
            for f in fields {
                out.push(f.key);
                out.push(f.value);
            }
        }
        ExprKind::Bin(elements) => {
            for e in elements {
                out.push(e.value);
                out.extend(e.size);
            }
        }
        ExprKind::Call(callee, args) => {
            out.push(*callee);
            out.extend(args);
        }
        ExprKind::Fun(cs) => clauses(out, cs),
        ExprKind::Record { base, fields, .. } => {
            out.extend(base.map(|b| *b));
            for f in fields {
                out.push(f.name);
                out.push(f.value);
            }
        }
        ExprKind::Var(_)
        | ExprKind::Atom(_)
        | ExprKind::Int(_)
        | ExprKind::Char(_)
        | ExprKind::Float(_)
        | ExprKind::String(_)
        | ExprKind::Nil => {}
    }
}
