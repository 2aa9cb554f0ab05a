//! Guards and bodies: `ms_transform`'s `tg`.
//!
//! A call becomes `{Name, Args...}`, an operator `{Op, A, B}` unless it
//! folds to a constant, a tuple `{{...}}`, a head variable its `'$N'`, and
//! any other variable `{const, Var}` (filled in from the bindings later).

use super::error::{Part, TransformErrorKind as K};
use super::fold::Folder;
use super::form::{BinForm, Form, FormKind, int_value};
use super::head::{Failure, HeadBindings, generic_children};
use crate::syntax::Span;
use crate::syntax::expr::{Element, Expr, ExprKind, Op};
use crate::term::Atom;

/// Translates guards or bodies against what the head binds.
pub(super) struct Translator<'a> {
    pub(super) bindings: &'a HeadBindings,
    pub(super) part: Part,
    /// What operators fold to, remembered.
    pub(super) folder: std::cell::RefCell<Folder>,
}

fn fail<T>(kind: K, expr: &Expr) -> Result<T, Failure> {
    Err((kind, expr.at, expr.span))
}

impl<'a> Translator<'a> {
    pub(super) fn new(bindings: &'a HeadBindings, part: Part) -> Translator<'a> {
        Translator { bindings, part, folder: Default::default() }
    }

    /// `tg0`: a guard's tests or a body's expressions, as a list. Only a
    /// guard's top-level tests get the old type-test names translated.
    pub(super) fn list(&self, exprs: &[Expr], span: Span) -> Result<Form, Failure> {
        let mut items = Vec::with_capacity(exprs.len());
        for expr in exprs {
            let renamed = match self.part {
                Part::Guard => old_type_test(expr),
                Part::Body => None,
            };
            items.push(match renamed {
                Some(name) => self.call_named(expr, name, call_args(expr)),
                None => self.tg(expr),
            }?);
        }
        Ok(Form::list(items, span))
    }

    fn tg(&self, expr: &Expr) -> Result<Form, Failure> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.tg_inner(expr))
    }

    fn tg_inner(&self, expr: &Expr) -> Result<Form, Failure> {
        let span = expr.span;
        let kind = match &expr.kind {
            ExprKind::Match(..) => return fail(K::Match(self.part), expr),
            ExprKind::Op2(op, left, right) => return self.op(*op, &[left, right], expr.at, span),
            ExprKind::Op1(op, operand) => return self.op(*op, &[operand], expr.at, span),
            ExprKind::Call(callee, args) => return self.call(expr, callee, args),
            ExprKind::Cons(h, t) => {
                let h = self.tg(h)?;
                FormKind::Cons(Box::new(h), Box::new(self.tg(t)?))
            }
            ExprKind::Nil => FormKind::Nil,
            ExprKind::Tuple(elements) => {
                FormKind::Tuple(vec![Form::tuple(self.all(elements)?, span)])
            }
            ExprKind::Int(i) => FormKind::Int(int_value(i)),
            ExprKind::Char(c) => FormKind::Int((*c).into()),
            ExprKind::Float(f) => FormKind::Float(*f),
            ExprKind::Atom(a) if a.name().starts_with('$') => FormKind::Tuple(vec![
                Form::atom("const", span),
                Form::new(FormKind::Atom(*a), span),
            ]),
            ExprKind::Atom(a) => FormKind::Atom(*a),
            ExprKind::String(s) => FormKind::String(s.clone()),
            ExprKind::Var(name) => match self.bindings.lookup(name) {
                Some(atom) => FormKind::Atom(atom),
                None => FormKind::Tuple(vec![
                    Form::atom("const", span),
                    Form::new(FormKind::Var { name: name.clone(), at: expr.at }, span),
                ]),
            },
            ExprKind::RecordField { name, .. } | ExprKind::RecordIndex { name, .. } => {
                return fail(K::Record(self.part, *name), expr);
            }
            ExprKind::Record { base: None, name, fields } => {
                let mut defaults = 0;
                for field in fields {
                    match &field.name.kind {
                        ExprKind::Atom(_) => {}
                        ExprKind::Var(v) if &**v == "_" => defaults += 1,
                        _ => return fail(K::Record(self.part, *name), expr),
                    }
                    self.tg(&field.value)?;
                }
                if defaults > 1 {
                    return fail(K::DuplicateField(self.part, *name, Atom::new("_")), expr);
                }
                return fail(K::Record(self.part, *name), expr);
            }
            ExprKind::Record { base: Some(base), name, fields } if base.is_var() => {
                self.tg(base)?;
                for field in fields {
                    if field.name.as_atom().is_none() {
                        return fail(K::UnknownCode7, expr);
                    }
                    self.tg(&field.value)?;
                }
                return fail(K::Record(self.part, *name), expr);
            }
            ExprKind::Bin(elements) => FormKind::Bin(self.bin(elements)?),
            ExprKind::Map { base: None, fields } => {
                let mut pairs = Vec::with_capacity(fields.len());
                for field in fields {
                    if field.exact {
                        let element = "map_field_exact".to_owned();
                        let whole = field.key.span.to(field.value.span);
                        return Err((K::Element(self.part, element), field.at, whole));
                    }
                    let key = self.tg(&field.key)?;
                    pairs.push((key, self.tg(&field.value)?));
                }
                FormKind::Map(pairs)
            }
            _ => return fail(K::Element(self.part, element_name(expr).to_owned()), expr),
        };
        Ok(Form::new(kind, span))
    }

    /// An operator: its value if `partial_eval` folds it, else `{Op, Args...}`.
    fn op(&self, op: Op, args: &[&Expr], at: Span, span: Span) -> Result<Form, Failure> {
        let folded = self.folder.borrow_mut().fold_op(op, args);
        if let Some(value) = folded {
            return Ok(Form::new(value, span));
        }
        let mut forms = Vec::with_capacity(args.len());
        for arg in args {
            forms.push(self.tg(arg)?);
        }
        Ok(Form::call(op.0, forms, at, span))
    }

    fn all(&self, exprs: &[Expr]) -> Result<Vec<Form>, Failure> {
        exprs.iter().map(|e| self.tg(e)).collect()
    }

    /// The calls `tg` knows: pseudo functions, `is_record/2`, functions a
    /// match spec has, and `erlang:` functions that are those or operators.
    fn call(&self, expr: &Expr, callee: &Expr, args: &[Expr]) -> Result<Form, Failure> {
        match &callee.kind {
            ExprKind::Atom(name) => self.call_named(expr, *name, args),
            ExprKind::Remote(module, function) => {
                let (Some(module), Some(name)) = (module.as_atom(), function.as_atom()) else {
                    return fail(K::Element(self.part, "call".to_owned()), expr);
                };
                let arity = args.len();
                if module.name() != "erlang" || !is_imported_from_erlang(name.name(), arity) {
                    return fail(K::RemoteCall(self.part, module, name, arity), expr);
                }
                if is_operator(name.name(), arity) {
                    // `erlang:'+'(A, B)` is `A + B`.
                    let args: Vec<&Expr> = args.iter().collect();
                    // An atom's name lives as long as the atom table: `Op` can hold it.
                    return self.op(Op(name.name()), &args, function.at, expr.span);
                }
                // `erlang:f(...)` is `f(...)`, annotated with the call.
                self.call_named(expr, name, args)
            }
            _ => fail(K::Element(self.part, "call".to_owned()), expr),
        }
    }

    fn call_named(&self, expr: &Expr, name: Atom, args: &[Expr]) -> Result<Form, Failure> {
        let callee = match &expr.kind {
            ExprKind::Call(callee, _) => callee.span,
            _ => expr.span,
        };
        match (name.name(), args) {
            ("bindings", []) => return Ok(Form::atom("$*", expr.span)),
            ("object", []) => return Ok(Form::atom("$_", expr.span)),
            ("is_record", [object, record]) if record.as_atom().is_some() => {
                self.tg(object)?;
                let name = record.as_atom().unwrap_or(name);
                return fail(K::Record(self.part, name), record);
            }
            _ => {}
        }
        if !is_ms_function(name.name(), args.len(), self.part) {
            return fail(K::LocalCall(self.part, name, args.len()), expr);
        }
        let mut elements = vec![Form::new(FormKind::Atom(name), callee)];
        elements.extend(self.all(args)?);
        Ok(Form::tuple(elements, expr.span))
    }

    /// Binary segments: a segment whose value is a variable not bound by
    /// the head is kept untranslated (its size too) for the bindings to fill.
    fn bin(&self, elements: &[crate::syntax::expr::BinElement]) -> Result<Vec<BinForm>, Failure> {
        let mut out = Vec::with_capacity(elements.len());
        for element in elements {
            if let ExprKind::Var(name) = &element.value.kind {
                if self.bindings.lookup(name).is_some() {
                    return fail(K::BinVariable(self.part, name.to_string()), &element.value);
                }
                out.push(BinForm {
                    value: raw(&element.value),
                    size: element.size.as_ref().map(raw),
                    types: element.types.clone(),
                });
                continue;
            }
            let value = self.tg(&element.value)?;
            let size = element.size.as_ref().map(|s| self.tg(s)).transpose()?;
            out.push(BinForm { value, size, types: element.types.clone() });
        }
        Ok(out)
    }
}

/// An expression left as written (inside an untranslated binary segment):
/// variables are filled in from the bindings, and only what `normalise`
/// knows evaluates.
fn raw(expr: &Expr) -> Form {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || raw_inner(expr))
}

fn raw_inner(expr: &Expr) -> Form {
    let kind = match &expr.kind {
        ExprKind::Var(name) => FormKind::Var { name: name.clone(), at: expr.at },
        ExprKind::Atom(a) => FormKind::Atom(*a),
        ExprKind::Int(i) => FormKind::Int(int_value(i)),
        ExprKind::Char(c) => FormKind::Int((*c).into()),
        ExprKind::Float(f) => FormKind::Float(*f),
        ExprKind::String(s) => FormKind::String(s.clone()),
        ExprKind::Nil => FormKind::Nil,
        ExprKind::Cons(h, t) => FormKind::Cons(Box::new(raw(h)), Box::new(raw(t))),
        ExprKind::Tuple(es) => FormKind::Tuple(es.iter().map(raw).collect()),
        ExprKind::Op1(op, a) if matches!(op.0, "+" | "-") => {
            FormKind::Sign { negate: op.0 == "-", operand: Box::new(raw(a)) }
        }
        ExprKind::Op2(op, a, b) if op.0 == "++" => {
            FormKind::Append(Box::new(raw(a)), Box::new(raw(b)))
        }
        ExprKind::Map { base: None, fields } if fields.iter().all(|f| !f.exact) => {
            FormKind::Map(fields.iter().map(|f| (raw(&f.key), raw(&f.value))).collect())
        }
        ExprKind::Bin(elements) => FormKind::Bin(
            elements
                .iter()
                .map(|e| BinForm {
                    value: raw(&e.value),
                    size: e.size.as_ref().map(raw),
                    types: e.types.clone(),
                })
                .collect(),
        ),
        _ => FormKind::Stuck {
            what: super::head::describe(expr),
            children: generic_children(expr).into_iter().map(raw).collect(),
        },
    };
    Form::new(kind, expr.span)
}

/// The callee's arguments of a local call (what `old_type_test` renames).
fn call_args(expr: &Expr) -> &[Expr] {
    match &expr.kind {
        ExprKind::Call(_, args) => args,
        _ => &[],
    }
}

/// `guard_top_trans`: an old type test at the top of a guard gets its
/// `is_` name (`integer(X)` is `is_integer(X)`, `record(X, r)` is
/// `is_record(X, r)`).
fn old_type_test(expr: &Expr) -> Option<Atom> {
    let ExprKind::Call(callee, args) = &expr.kind else { return None };
    let name = callee.as_atom()?;
    let new = match (name.name(), args.len()) {
        ("atom", 1) => "is_atom",
        ("float", 1) => "is_float",
        ("integer", 1) => "is_integer",
        ("list", 1) => "is_list",
        ("number", 1) => "is_number",
        ("pid", 1) => "is_pid",
        ("port", 1) => "is_port",
        ("reference", 1) => "is_reference",
        ("tuple", 1) => "is_tuple",
        ("binary", 1) => "is_binary",
        ("function", 1) => "is_function",
        ("record", 2) => "is_record",
        _ => return None,
    };
    Some(Atom::new(new))
}

/// `ms_transform`'s name for a construct it cannot translate.
fn element_name(expr: &Expr) -> &'static str {
    match &expr.kind {
        ExprKind::Other { element, .. } => match element {
            Element::Lc => "list comprehension",
            Element::Bc => "binary comprehension",
            Element::Block => "begin/end block",
            Element::If => "if",
            Element::Case => "case",
            Element::Receive => "receive",
            Element::Try => "try",
            Element::Catch => "catch",
            other => other.node_name(),
        },
        ExprKind::Remote(..) => "external function call",
        ExprKind::Fun(_) => "fun",
        ExprKind::Map { .. } => "map",
        ExprKind::Record { .. } => "record",
        ExprKind::Call(..) => "call",
        _ => "expression",
    }
}

fn bool_test(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("is_atom" | "is_float" | "is_integer" | "is_list" | "is_number" | "is_pid" | "is_port", 1)
            | ("is_reference" | "is_tuple" | "is_map" | "is_binary" | "is_function", 1)
            | ("is_map_key" | "is_record", 2)
            | ("is_seq_trace", 0)
    )
}

fn real_guard_function(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("abs" | "hd" | "length" | "round" | "size" | "bit_size" | "byte_size" | "map_size", 1)
            | ("tl" | "trunc" | "float" | "node", 1)
            | ("element" | "max" | "min" | "map_get" | "binary_part", 2)
            | ("binary_part", 3)
            | ("node" | "self", 0)
    )
}

fn guard_function(name: &str, arity: usize) -> bool {
    real_guard_function(name, arity) || (name, arity) == ("get_tcw", 0)
}

fn action_function(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("set_seq_token" | "trace" | "enable_trace" | "disable_trace", 2)
            | ("get_seq_token" | "return_trace" | "exception_trace" | "process_dump", 0)
            | ("caller" | "caller_line" | "current_stacktrace", 0)
            | ("message" | "enable_trace" | "disable_trace" | "display" | "set_tcw", 1)
            | ("silent" | "current_stacktrace", 1)
            | ("trace", 3)
    )
}

fn bool_operator(name: &str, arity: usize) -> bool {
    matches!((name, arity), ("and" | "or" | "xor" | "andalso" | "orelse", 2) | ("not", 1))
}

fn arith_operator(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("+" | "-" | "bnot", 1)
            | ("+" | "-" | "*" | "/" | "div" | "rem" | "band" | "bor" | "bxor" | "bsl" | "bsr", 2)
    )
}

fn cmp_operator(name: &str, arity: usize) -> bool {
    matches!((name, arity), (">" | ">=" | "<" | "=<" | "==" | "=:=" | "/=" | "=/=", 2))
}

pub(super) fn is_operator(name: &str, arity: usize) -> bool {
    bool_operator(name, arity) || arith_operator(name, arity) || cmp_operator(name, arity)
}

fn is_imported_from_erlang(name: &str, arity: usize) -> bool {
    real_guard_function(name, arity) || bool_test(name, arity) || is_operator(name, arity)
}

pub(super) fn is_ms_function(name: &str, arity: usize, part: Part) -> bool {
    match part {
        Part::Body => {
            action_function(name, arity) || guard_function(name, arity) || bool_test(name, arity)
        }
        Part::Guard => guard_function(name, arity) || bool_test(name, arity),
    }
}
