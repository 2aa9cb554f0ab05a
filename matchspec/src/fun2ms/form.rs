//! The translated spec before it is a term: what `ms_transform`'s passes
//! hand each other.
//!
//! `ms_transform` rewrites the fun's abstract format into the abstract
//! format of the spec, then fills in bound variables (`fixup_environment`)
//! and evaluates the result (`normalise`). A [`Form`] is that intermediate
//! abstract format, reduced to what can appear in it: what normalises to a
//! term, variables still to be filled in, and [`FormKind::Stuck`], what
//! `ms_transform` leaves in place but cannot evaluate (it crashes there,
//! unless an error is reported first). Every node keeps the span of the fun
//! text it came from, so errors in the spec can point into the fun.

use num_bigint::BigInt;

use crate::syntax::Span;
use crate::syntax::token::IntLit;
use crate::term::{Atom, Word};

/// A node of the translated spec and the text it came from.
#[derive(Clone, Debug)]
pub(super) struct Form {
    pub(super) kind: FormKind,
    pub(super) span: Span,
}

/// What a [`Form`] is.
#[derive(Clone, Debug)]
pub(super) enum FormKind {
    Atom(Atom),
    Int(BigInt),
    Float(f64),
    /// A string literal, kept whole so a binary segment can take it apart.
    String(Vec<u32>),
    Nil,
    Cons(Box<Form>, Box<Form>),
    Tuple(Vec<Form>),
    Map(Vec<(Form, Form)>),
    Bin(Vec<BinForm>),
    /// A prefix `+` or `-` left in place (in a head): evaluates only on a
    /// number literal.
    Sign {
        negate: bool,
        operand: Box<Form>,
    },
    /// `A ++ B` left in place (in a head).
    Append(Box<Form>, Box<Form>),
    /// A variable the head does not bind, to be looked up in the bindings.
    Var {
        name: Box<str>,
        at: Span,
    },
    /// A bound variable's value, already in the output heap.
    Frozen(Word),
    /// A node `normalise` has no clause for, with the forms inside it (still
    /// visited when variables are filled in).
    Stuck {
        what: &'static str,
        children: Vec<Form>,
    },
}

/// A segment of a binary: `Value:Size/Types`.
#[derive(Clone, Debug)]
pub(super) struct BinForm {
    pub(super) value: Form,
    pub(super) size: Option<Form>,
    pub(super) types: Option<Vec<(Atom, Option<IntLit>)>>,
}

impl Form {
    pub(super) fn new(kind: FormKind, span: Span) -> Form {
        Form { kind, span }
    }

    pub(super) fn atom(name: &str, span: Span) -> Form {
        Form::new(FormKind::Atom(Atom::new(name)), span)
    }

    pub(super) fn tuple(elements: Vec<Form>, span: Span) -> Form {
        Form::new(FormKind::Tuple(elements), span)
    }

    /// `{Name, Args...}`: how a call or an operator appears in a spec; the
    /// name comes from `at`, the whole from `span`.
    pub(super) fn call(name: &str, args: Vec<Form>, at: Span, span: Span) -> Form {
        let mut elements = Vec::with_capacity(args.len() + 1);
        elements.push(Form::atom(name, at));
        elements.extend(args);
        Form::tuple(elements, span)
    }

    /// A list of forms, spanning `span`.
    pub(super) fn list(items: Vec<Form>, span: Span) -> Form {
        let end = Span::new(span.end as usize, span.end as usize);
        let nil = Form::new(FormKind::Nil, end);
        items.into_iter().rev().fold(nil, |tail, head| {
            let cell = head.span.to(tail.span);
            Form::new(FormKind::Cons(Box::new(head), Box::new(tail)), cell)
        })
    }
}

/// The integer value of a literal.
pub(super) fn int_value(literal: &IntLit) -> BigInt {
    match literal {
        IntLit::Small(v) => BigInt::from(*v),
        IntLit::Big(v) => v.clone(),
    }
}

/// Dropping walks the tree with a stack, as for [`Expr`](crate::syntax::expr::Expr).
impl Drop for Form {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        take_children(self, &mut stack);
        while let Some(mut form) = stack.pop() {
            take_children(&mut form, &mut stack);
        }
    }
}

fn take_children(form: &mut Form, out: &mut Vec<Form>) {
    for child in form.children_mut() {
        let span = child.span;
        out.push(std::mem::replace(child, Form::new(FormKind::Nil, span)));
    }
}

impl Form {
    /// The forms directly inside this one, in order (what `fixup_environment`
    /// and dropping walk).
    pub(super) fn children_mut(&mut self) -> Vec<&mut Form> {
        match &mut self.kind {
            FormKind::Cons(a, b) | FormKind::Append(a, b) => vec![&mut **a, &mut **b],
            FormKind::Sign { operand, .. } => vec![&mut **operand],
            FormKind::Tuple(items) | FormKind::Stuck { children: items, .. } => {
                items.iter_mut().collect()
            }
            FormKind::Map(pairs) => pairs.iter_mut().flat_map(|(k, v)| [k, v]).collect(),
            FormKind::Bin(segments) => segments
                .iter_mut()
                .flat_map(|s| std::iter::once(&mut s.value).chain(s.size.as_mut()))
                .collect(),
            FormKind::Atom(_)
            | FormKind::Int(_)
            | FormKind::Float(_)
            | FormKind::String(_)
            | FormKind::Nil
            | FormKind::Var { .. }
            | FormKind::Frozen(_) => Vec::new(),
        }
    }
}
