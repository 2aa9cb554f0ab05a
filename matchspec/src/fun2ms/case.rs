//! The cases of a fun2ms corpus: `{Dialect, FunText}` or `{Dialect,
//! FunText, Bindings}`, either with a trailing Expected, and whether an
//! answer agrees with Expected.

use super::{Dialect, Fun2msError, Fun2msErrorKind};
use crate::syntax::Location;
use crate::term::{Term, TermRef};

/// One case.
#[derive(Debug)]
pub struct FunCase<'a> {
    /// `table` (`ets:fun2ms`) or `trace` (`dbg:fun2ms`).
    pub dialect: Dialect,
    /// The fun's text.
    pub fun: String,
    /// The shell's bindings: name and value.
    pub bindings: Vec<(String, Term)>,
    /// What OTP answered, if the case says.
    pub expected: Option<TermRef<'a>>,
}

impl<'a> FunCase<'a> {
    /// `{Dialect, FunText}`, `{Dialect, FunText, Bindings}`, either with a
    /// trailing Expected (a tuple, so a third element that is a list is
    /// the bindings).
    pub fn from_term(term: TermRef<'a>) -> Option<FunCase<'a>> {
        let t = term.as_tuple()?;
        let dialect = match t.get(0)?.as_atom()?.name() {
            "table" | "ets" => Dialect::Table,
            "trace" | "dbg" => Dialect::Trace,
            _ => return None,
        };
        let fun = text_of(t.get(1)?)?;
        let (bindings, expected) = match t.len() {
            2 => (None, None),
            3 if t.get(2)?.as_tuple().is_some() => (None, t.get(2)),
            3 => (t.get(2), None),
            4 => (t.get(2), t.get(3)),
            _ => return None,
        };
        let bindings = match bindings {
            None => Vec::new(),
            Some(list) => {
                let mut out = Vec::new();
                for item in list.proper_list()? {
                    let pair = item.as_tuple().filter(|p| p.len() == 2)?;
                    let name = pair.get(0)?.as_atom()?.name().to_owned();
                    out.push((name, Term::from(pair.get(1)?)));
                }
                out
            }
        };
        Some(FunCase { dialect, fun, bindings, expected })
    }
}

/// An Erlang string (a list of code points) as text.
fn text_of(term: TermRef<'_>) -> Option<String> {
    let mut text = String::new();
    for item in term.proper_list()? {
        text.push(char::from_u32(u32::try_from(item.as_i64()?).ok()?)?);
    }
    Some(text)
}

impl FunCase<'_> {
    /// The bindings as [`fun2ms`](super::fun2ms) takes them.
    pub fn named_bindings(&self) -> Vec<(&str, Term)> {
        self.bindings.iter().map(|(n, t)| (n.as_str(), t.clone())).collect()
    }

    /// Why `answer` differs from the expected one, if the case gives one
    /// and it does. Expected is `{ok, Spec}`, `{error, Text}` or `{error,
    /// Text, Location}` (an error ms_transform reports: same text, same
    /// place), `{exception, Class, Reason}` (ms_transform crashes: msc must
    /// report a crash) or `{parse_error, Location, Text}` (not Erlang: msc
    /// must report a syntax error).
    pub fn disagreement(&self, answer: &Result<Term, Fun2msError>) -> Option<String> {
        disagreement(self.expected?, answer)
    }
}

fn disagreement(expected: TermRef<'_>, answer: &Result<Term, Fun2msError>) -> Option<String> {
    use Fun2msErrorKind as E;
    let t = expected.as_tuple()?;
    let tag = t.get(0).and_then(|a| a.as_atom()).map_or("", |a| a.name());
    let got = match answer {
        Ok(spec) => format!("{{ok,{spec}}}"),
        Err(e) => format!("an error at {:?}: {}", e.location(), e.message()),
    };
    let agrees = match (tag, answer) {
        ("ok", Ok(spec)) => t.get(1).is_some_and(|s| s.eq_exact(&spec.as_ref())),
        ("error", Err(e)) => {
            let text_ok = t.get(1).and_then(text_of).is_some_and(|x| x == e.message());
            let at_ok = match t.get(2) {
                None => true,
                Some(loc) => location_of(loc) == e.location(),
            };
            text_ok && at_ok && matches!(e.kind(), E::Transform(_))
        }
        ("exception", Err(e)) => matches!(e.kind(), E::Crash { .. }),
        ("parse_error", Err(e)) => matches!(e.kind(), E::Syntax(_)),
        _ => false,
    };
    (!agrees).then(|| format!("expected {expected}\n  got {got}"))
}

/// `{Line, Column}` (or `none`) as a location.
fn location_of(term: TermRef<'_>) -> Option<Location> {
    let t = term.as_tuple().filter(|t| t.len() == 2)?;
    let line = u32::try_from(t.get(0)?.as_i64()?).ok()?;
    let column = u32::try_from(t.get(1)?.as_i64()?).ok()?;
    Some(Location { line, column })
}
