//! `erlang:match_spec_test/3`, and comparing answers with OTP's.
//!
//! [`match_spec_test`] answers exactly what OTP's `erlang:match_spec_test/3`
//! answers, with any engine: `{ok, Result, Flags, []}` or `{error,
//! [{error, Message}, ...]}`. The conformance corpora (`testdata/otp/` and
//! the shared OTP 27 corpus) hold lines `{Kind, MatchSpec, Input,
//! Expected}`; [`Case`] reads one and [`agrees`] decides whether an answer
//! matches the expected one, with the same rules as the corpus's own
//! `compare.escript`.
//!
//! ```
//! use matchspec::conformance::match_spec_test;
//! use matchspec::{spec::Kind, term::Term};
//!
//! let spec = Term::parse("[{['$1', '_'], [{is_atom, '$1'}], [{message, '$1'}, {return_trace}]}]").unwrap();
//! let input = Term::parse("[a, b]").unwrap();
//! let answer = match_spec_test(input.as_ref(), spec.as_ref(), Kind::Call);
//! assert_eq!(answer.to_string(), "{ok,a,[return_trace],[]}");
//! ```

use crate::CompiledSpec;
use crate::config::Config;
use crate::host::{Host, TestHost};
use crate::outcome::EvalError;
use crate::run::Run;
use crate::scratch::Scratch;
use crate::spec::Kind;
use crate::term::{Atom, Heap, Kind as TermKind, Term, TermRef, Word};

/// The configuration `match_spec_test` compiles with: ERTS's defaults, with
/// `set_seq_token` and `set_tcw` faked.
pub fn test_config() -> Config {
    Config::default().fake_destructive(true)
}

/// What `erlang:match_spec_test(Input, Spec, Kind)` returns, computed by
/// the interpreter. Kinds `send` and `receive` (which `match_spec_test`
/// does not have) are checked with their own rules and run like `trace`.
pub fn match_spec_test(input: TermRef<'_>, spec: TermRef<'_>, kind: Kind) -> Term {
    match_spec_test_with(input, spec, kind, &test_config(), &mut TestHost::default(), |spec| spec)
}

/// [`match_spec_test`] with a given configuration and host, on the engine
/// `prepare` puts the compiled spec on (`|spec| spec` is the interpreter).
pub fn match_spec_test_with<R: Run>(
    input: TermRef<'_>,
    spec: TermRef<'_>,
    kind: Kind,
    config: &Config,
    host: &mut dyn Host,
    prepare: impl FnOnce(CompiledSpec) -> R,
) -> Term {
    let mut heap = Heap::new();
    let compiled = match CompiledSpec::from_term(spec, kind, config) {
        Ok(compiled) => compiled,
        Err(errors) => {
            let list = errors.to_term(&mut heap);
            let root = heap.tuple(&[Word::atom(Atom::ERROR), list]);
            return Term::from_parts(heap, root);
        }
    };
    let engine = prepare(compiled);
    let mut scratch = Scratch::new();
    let outcome = engine.run(input, &mut scratch, host);
    let root = match outcome {
        // ERTS raises badarg for a trace input that is not a list.
        Err(EvalError::NotAnArgumentList { .. }) => {
            let raised = Word::atom(Atom::RAISED);
            heap.tuple(&[raised, Word::atom(Atom::ERROR), Word::atom(Atom::BADARG)])
        }
        Ok(outcome) => {
            let result = match outcome.result() {
                Some(r) => Term::from(r).copy_to(&mut heap),
                None => Word::atom(Atom::FALSE),
            };
            let flags = outcome.flags();
            let mut names = Vec::new();
            if flags.return_trace {
                names.push(Word::atom(Atom::RETURN_TRACE));
            }
            if flags.exception_trace {
                names.push(Word::atom(Atom::EXCEPTION_TRACE));
            }
            let flags = heap.list(&names);
            heap.tuple(&[Word::atom(Atom::OK), result, flags, Word::NIL])
        }
    };
    Term::from_parts(heap, root)
}

/// One line of a conformance corpus: `{Kind, MatchSpec, Input, Expected}`
/// (or without `Expected`).
#[derive(Clone, Copy, Debug)]
pub struct Case<'a> {
    /// The event kind.
    pub kind: Kind,
    /// The match spec.
    pub spec: TermRef<'a>,
    /// The input.
    pub input: TermRef<'a>,
    /// What OTP answered, if the line has it.
    pub expected: Option<TermRef<'a>>,
}

impl<'a> Case<'a> {
    /// Reads a corpus line; `None` if it is not a 3- or 4-tuple with a kind
    /// atom first.
    pub fn from_term(t: TermRef<'a>) -> Option<Case<'a>> {
        let tuple = t.as_tuple()?;
        if !(3..=4).contains(&tuple.len()) {
            return None;
        }
        let kind = Kind::from_name(tuple.get(0)?.as_atom()?.name())?;
        Some(Case { kind, spec: tuple.get(1)?, input: tuple.get(2)?, expected: tuple.get(3) })
    }
}

/// Does answer `got` agree with OTP's `expected`? The rules of the shared
/// corpus's `compare.escript`: pids compare equal to each other; for kinds
/// `send` and `receive`, `{accept, R}` agrees with `{ok, R, _, _}` and
/// `reject` with any `{error, _}`; two "Excessive nesting" errors agree
/// (ERTS's limit depends on its C stack).
pub fn agrees(expected: TermRef<'_>, got: TermRef<'_>) -> bool {
    let tag = |t: TermRef<'_>| t.as_tuple().and_then(|t| t.get(0)).and_then(|e| e.as_atom());
    match (expected.kind(), tag(expected)) {
        (TermKind::Atom(a), _) if a.name() == "reject" => return tag(got) == Some(Atom::ERROR),
        // Accepted by `trace_pattern`, but running it would crash OTP.
        (TermKind::Atom(a), _) if a.name() == "accept" => return tag(got) == Some(Atom::OK),
        // `trace_pattern` accepts `[]` (no match spec); as
        // `match_spec_test` we answer what it said.
        (TermKind::Tuple(t), Some(a))
            if a.name() == "accept_but_match_spec_test_said" && t.len() == 2 =>
        {
            return t.get(1).is_some_and(|said| same_modulo_pids(said, got));
        }
        (TermKind::Tuple(t), Some(a)) if a.name() == "accept" && t.len() == 2 => {
            let result = t.get(1);
            let got_ok = got.as_tuple().filter(|g| g.len() == 4 && tag(got) == Some(Atom::OK));
            return match (result, got_ok.and_then(|g| g.get(1))) {
                (Some(r), Some(g)) => same_modulo_pids(r, g),
                _ => false,
            };
        }
        _ => {}
    }
    same_modulo_pids(expected, got) || (nesting_error(expected) && nesting_error(got))
}

/// Is `t` `{error, [{error, "Excessive nesting..."} | _]}`?
fn nesting_error(t: TermRef<'_>) -> bool {
    let first_message = t
        .as_tuple()
        .filter(|t| t.get(0).and_then(|a| a.as_atom()) == Some(Atom::ERROR))
        .and_then(|t| t.get(1))
        .and_then(|l| l.as_cons())
        .and_then(|c| c.head().as_tuple())
        .and_then(|e| e.get(1));
    let Some(message) = first_message else { return false };
    let prefix: Vec<i64> = "Excessive nesting".bytes().map(i64::from).collect();
    let chars: Vec<i64> =
        message.list_items().take(prefix.len()).filter_map(|c| c.as_i64()).collect();
    chars == prefix
}

/// Exact equality, except that any two pids are equal, and equal to the
/// atom `'PID'` (as the corpus tools normalise every pid to it).
fn same_modulo_pids(a: TermRef<'_>, b: TermRef<'_>) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        let pid_like = |t: TermRef<'_>| {
            matches!(t.kind(), TermKind::Pid(_)) || t.as_atom().is_some_and(|a| a.name() == "PID")
        };
        match (a.kind(), b.kind()) {
            // A corpus may have written its pids as the atom 'PID' already.
            _ if pid_like(a) && pid_like(b) => {}
            (TermKind::Tuple(x), TermKind::Tuple(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y.iter()));
            }
            (TermKind::Cons(x), TermKind::Cons(y)) => {
                stack.push((x.head(), y.head()));
                stack.push((x.tail(), y.tail()));
            }
            (TermKind::Map(x), TermKind::Map(y)) if x.len() == y.len() => {
                stack.extend(x.keys().zip(y.keys()));
                stack.extend(x.values().zip(y.values()));
            }
            _ => {
                if !a.eq_exact(&b) {
                    return false;
                }
            }
        }
    }
    true
}
