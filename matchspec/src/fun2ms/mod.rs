//! Match specs written as Erlang funs: `ms_transform`'s translation,
//! exactly as OTP 27 does it.
//!
//! `ets:fun2ms(fun({K, V}) when V > 100 -> K end)` is how Erlang users
//! write match specs: `ms_transform` turns the fun's clauses into
//! `[{{'$1','$2'},[{'>','$2',100}],['$1']}]`. [`fun2ms`] does the same from
//! the fun's text, with the same spec or the same error (the text of
//! `ms_transform:format_error/1`, at the same place), for both dialects:
//! [`Dialect::Table`] (`ets:fun2ms`) and [`Dialect::Trace`] (`dbg:fun2ms`).
//!
//! ```
//! use matchspec::fun2ms::{Dialect, fun2ms};
//!
//! let spec = fun2ms("fun({K, V}) when V > 100 -> K end", Dialect::Table, &[]).unwrap();
//! assert_eq!(spec.to_string(), "[{{'$1','$2'},[{'>','$2',100}],['$1']}]");
//!
//! let err = fun2ms("fun({K, V}) -> K = V end", Dialect::Table, &[]).unwrap_err();
//! assert_eq!(err.message(), "fun with body matching ('=' in body) is illegal as match_spec");
//! ```
//!
//! # How it works
//!
//! The text is parsed by the term grammar's expression rules into the
//! abstract format `ms_transform` works on (`syntax::expr`). Then, clause
//! by clause (a guard with `;` is one clause per alternative): the head is
//! checked and translated (`head`), the guard and body are translated
//! (`guard`), constants folded as `erl_eval:partial_eval/1` would
//! (`fold`). Finally variables the head does not bind take their values
//! from the bindings, and the result is evaluated into a term (`finish`).
//! Each step reports the first error in the order `ms_transform` meets
//! them.
//!
//! # Where msc differs
//!
//! * Records: `ms_transform` expands records from the module's definitions;
//!   msc has none, so a record gives the error OTP gives for an unknown
//!   record, with a note saying so.
//! * Where `ms_transform` crashes instead of reporting an error (`1 + 2` in
//!   a head, a binary segment of the wrong type), msc reports
//!   [`Fun2msErrorKind::Crash`], naming the exception OTP raises.
//! * `A ! B` on two literals is never folded (Erlang would send a message).

mod back;
mod case;
mod error;
mod finish;
mod fold;
mod form;
mod guard;
mod head;

pub use back::{FunText, NoFun, spec_to_fun};
pub use case::FunCase;
pub use error::{Fun2msError, Fun2msErrorKind, Part, TransformErrorKind};

use crate::syntax::expr::{Clause, Expr, ExprKind};
use crate::syntax::{SourceMap, Syntax, parse_expr};
use crate::term::{Heap, Term};
use form::{Form, FormKind};
use guard::Translator;
use head::Failure;

/// Which `fun2ms`: the head a fun must have differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `ets:fun2ms/1`: the head is one variable or tuple (the object).
    Table,
    /// `dbg:fun2ms/1`: the head is one variable or list (the arguments).
    Trace,
}

/// Does `text` hold a fun rather than a spec term: is its first token
/// `fun`, after white space and comments? Hosts that take either use this to
/// choose between [`fun2ms`] and the term parser.
///
/// ```
/// use matchspec::fun2ms::is_fun_text;
/// assert!(is_fun_text("% keep big ones\nfun({K, V}) when V > 9 -> K end"));
/// assert!(!is_fun_text("[{'_', [], [true]}]"));
/// assert!(!is_fun_text("funny"));
/// ```
pub fn is_fun_text(text: &str) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        match rest.strip_prefix('%') {
            Some(comment) => rest = comment.split_once('\n').map_or("", |(_, r)| r),
            None => break,
        }
    }
    rest.strip_prefix("fun").is_some_and(|after| {
        !after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '@')
    })
}

/// Translates the text of a fun into a match spec, as `ets:fun2ms/1` or
/// `dbg:fun2ms/1` would in a shell where `bindings` are bound: a variable
/// the fun's head does not bind takes its value from there (as
/// `{const, Value}`).
pub fn fun2ms(
    text: &str,
    dialect: Dialect,
    bindings: &[(&str, Term)],
) -> Result<Term, Fun2msError> {
    fun2ms_with_spans(text, dialect, bindings).map(|(spec, _)| spec)
}

/// [`fun2ms`], and where in the fun's text each part of the spec came from.
pub fn fun2ms_with_spans(
    text: &str,
    dialect: Dialect,
    bindings: &[(&str, Term)],
) -> Result<(Term, SourceMap), Fun2msError> {
    fun2ms_with_syntax(text, dialect, bindings, Syntax::default())
}

/// [`fun2ms_with_spans`] reading the fun's text in `syntax` (the free
/// functions read the default release's): OTP 29 reads `16#1.8` as a
/// float, where OTP 27 reads `16#1` and then fails at `.8`.
///
/// ```
/// use matchspec::Release;
/// use matchspec::fun2ms::{Dialect, fun2ms_with_syntax};
/// use matchspec::syntax::Syntax;
/// let fun = "fun(X) when X > 16#1.8 -> X end";
/// let (spec, _) = fun2ms_with_syntax(fun, Dialect::Table, &[], Syntax::default()).unwrap();
/// assert_eq!(spec.to_string(), "[{'$1',[{'>','$1',1.5}],['$1']}]");
/// let otp27 = Syntax::of(Release::Otp27);
/// assert!(fun2ms_with_syntax(fun, Dialect::Table, &[], otp27).is_err());
/// ```
pub fn fun2ms_with_syntax(
    text: &str,
    dialect: Dialect,
    bindings: &[(&str, Term)],
    syntax: Syntax,
) -> Result<(Term, SourceMap), Fun2msError> {
    let expr = parse_expr(text, syntax)?;
    let fail = |(kind, at, span): Failure| {
        Fun2msError::new(Fun2msErrorKind::Transform(kind), Some(at), span, text)
    };
    let ExprKind::Fun(clauses) = &expr.kind else {
        return Err(fail((TransformErrorKind::NotAFun, expr.at, expr.span)));
    };
    let mut translated = Vec::new();
    for clause in clauses {
        // `ms_clause_expand`: a guard with alternatives (`;`) is one clause
        // per alternative.
        if clause.guards.is_empty() {
            translated.push(translate_clause(clause, None, dialect).map_err(fail)?);
        }
        for guard in &clause.guards {
            translated.push(translate_clause(clause, Some(guard), dialect).map_err(fail)?);
        }
    }
    let mut spec = Form::list(translated, expr.span);
    let mut heap = Heap::new();
    finish::fix_up(&mut spec, bindings, &mut heap).map_err(fail)?;
    let mut map = SourceMap::default();
    match finish::normalise(&spec, &mut heap, &mut map) {
        Ok(root) => Ok((Term::from_parts(heap, root), map)),
        Err(crash) => Err(Fun2msError::new(
            Fun2msErrorKind::Crash { reason: crash.reason, what: crash.what },
            None,
            crash.span,
            text,
        )),
    }
}

/// `ms_clause`: `{Head, Guards, Body}`.
fn translate_clause(
    clause: &Clause,
    guard: Option<&[Expr]>,
    dialect: Dialect,
) -> Result<Form, Failure> {
    head::check_type(clause, dialect)?;
    let (head, bindings) = head::transform(&clause.params[0])?;
    let guards = match guard {
        None => Form::new(FormKind::Nil, head.span),
        Some(tests) => {
            let span = tests.iter().fold(tests[0].span, |s, t| s.to(t.span));
            Translator::new(&bindings, Part::Guard).list(tests, span)?
        }
    };
    let body_span = clause.body.iter().fold(clause.body[0].span, |s, e| s.to(e.span));
    let body = Translator::new(&bindings, Part::Body).list(&clause.body, body_span)?;
    let span = clause.at.to(body_span);
    Ok(Form::tuple(vec![head, guards, body], span))
}
