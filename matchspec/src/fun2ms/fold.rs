//! Constant folding as `erl_eval:partial_eval/1` does it.
//!
//! `ms_transform` tries every operator expression of a guard or body: it
//! evaluates the expression if it is built only of number, atom, tuple and
//! list literals and operators, and keeps the value if that is an integer,
//! a float or an atom. Anything else (a variable, a string literal, a call,
//! an exception, a tuple or list result) leaves the expression as it is.
//! The operators are `erlang`'s own functions, which for arithmetic and
//! comparison are the guard functions of [`crate::bif`].

use num_bigint::BigInt;

use super::form::{FormKind, int_value};
use crate::bif::{self, Bif, Env, Value};
use crate::syntax::expr::{Expr, ExprKind, Op};
use crate::term::{Atom, Heap, HeapSet, Kind, Word};

/// Folds operator expressions, remembering the value (or the failure) of
/// every subexpression it evaluated: the translator tries each operator of
/// a nest, outermost first, and each try evaluates the operands beneath,
/// so without this a nest `d` deep costs `d * d` (a variable at the bottom
/// fails every level's try).
#[derive(Default)]
pub(super) struct Folder {
    heap: Heap,
    /// By the expression's address: the translator's expressions outlive
    /// the folder and do not move.
    values: rustc_hash::FxHashMap<*const Expr, Option<Word>>,
}

impl Folder {
    /// The folded value of operator `op` on `args`, if `partial_eval`
    /// folds it.
    pub(super) fn fold_op(&mut self, op: Op, args: &[&Expr]) -> Option<FormKind> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.eval(arg)?);
        }
        let word = apply(op, &values, &mut self.heap)?;
        let value = self.heap.view(word);
        match value.kind() {
            Kind::Small(v) => Some(FormKind::Int(BigInt::from(v))),
            Kind::Big(_) => value.as_bigint().map(FormKind::Int),
            Kind::Float(f) => Some(FormKind::Float(f)),
            _ => word.as_atom().map(FormKind::Atom),
        }
    }

    /// `erl_eval:ev_expr/1`: `None` where it raises.
    fn eval(&mut self, expr: &Expr) -> Option<Word> {
        let key: *const Expr = expr;
        if let Some(&known) = self.values.get(&key) {
            return known;
        }
        let value = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.eval_inner(expr));
        self.values.insert(key, value);
        value
    }

    fn eval_inner(&mut self, expr: &Expr) -> Option<Word> {
        match &expr.kind {
            ExprKind::Int(i) => Some(self.heap.bigint(&int_value(i))),
            ExprKind::Char(c) => Some(self.heap.int(i64::from(*c))),
            ExprKind::Float(f) => self.heap.try_float(*f),
            ExprKind::Atom(a) => Some(Word::atom(*a)),
            ExprKind::Nil => Some(Word::NIL),
            ExprKind::Tuple(elements) => {
                let words = elements.iter().map(|e| self.eval(e)).collect::<Option<Vec<_>>>()?;
                Some(self.heap.tuple(&words))
            }
            ExprKind::Cons(head, tail) => {
                let head = self.eval(head)?;
                let tail = self.eval(tail)?;
                Some(self.heap.cons(head, tail))
            }
            ExprKind::Op1(op, operand) => {
                let operand = self.eval(operand)?;
                apply(*op, &[operand], &mut self.heap)
            }
            ExprKind::Op2(op, left, right) => {
                let left = self.eval(left)?;
                let right = self.eval(right)?;
                apply(*op, &[left, right], &mut self.heap)
            }
            _ => None,
        }
    }
}

/// `erlang:Op(Args...)`.
fn apply(op: Op, args: &[Word], heap: &mut Heap) -> Option<Word> {
    match (op.0, args) {
        ("and", &[a, b]) => boolean(a, b, |a, b| a && b),
        ("or", &[a, b]) => boolean(a, b, |a, b| a || b),
        // `erlang:'++'/2`: only `[] ++ X` can give a number or an atom.
        ("++", &[a, b]) if a.is_nil() => Some(b),
        // `andalso` and `orelse` are not functions; `--` gives a list;
        // `!` would send a message (msc never does; a send to a literal
        // name is left unfolded, as it is when no such process exists).
        _ => {
            let bif = Bif::lookup(Atom::new(op.0), args.len())?;
            let view = HeapSet::single(heap);
            let refs: Vec<_> = args.iter().map(|&w| view.term(w)).collect();
            let value = bif::call(bif, &refs, &Env::default()).ok()?;
            Some(match value {
                Value::Word(w) => w,
                Value::Int(i) => heap.bigint(&i),
                Value::Int128(i) => heap.int128(i),
                Value::Float(f) => heap.try_float(f)?,
                Value::Binary(bytes) => heap.binary(&bytes),
            })
        }
    }
}

fn boolean(a: Word, b: Word, f: impl Fn(bool, bool) -> bool) -> Option<Word> {
    let a = as_bool(a)?;
    let b = as_bool(b)?;
    Some(Word::atom(if f(a, b) { Atom::TRUE } else { Atom::FALSE }))
}

fn as_bool(w: Word) -> Option<bool> {
    match w.as_atom() {
        Some(Atom::TRUE) => Some(true),
        Some(Atom::FALSE) => Some(false),
        _ => None,
    }
}
