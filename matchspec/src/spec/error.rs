//! Errors in match specs: ERTS's messages, plus where they are.

use std::fmt;

use crate::syntax::{Location, SourceMap, Span, Step};
use crate::term::{Heap, TermRef, Word};

/// Everything wrong with a spec, in the order ERTS reports it.
///
/// ERTS stops at the first clause that has errors and reports all of that
/// clause's (so one mistake can cascade into several messages); so do we.
/// [`SpecErrors::to_term`] is exactly the list `erlang:match_spec_test/3`
/// returns; `Display` adds, beyond ERTS, where each error is (when the spec
/// came from text, the line and a caret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecErrors {
    pub(crate) errors: Vec<SpecError>,
}

/// One error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub(crate) kind: SpecErrorKind,
    pub(crate) message: Vec<u8>,
    pub(crate) path: Vec<Step>,
    pub(crate) source: Option<SourceInfo>,
}

/// Where an error is in the source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceInfo {
    /// The bytes of the offending part.
    pub span: Span,
    /// Its line and column.
    pub location: Location,
    /// The text of its first line.
    pub line_text: String,
}

/// The kinds of spec errors, one per ERTS message template.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// The spec is not a non-empty list, e.g. `[]` or `foo`.
    NotAList,
    /// The spec is an improper list, e.g. `[{'_',[],[]} | x]`.
    NotAProperList,
    /// A clause is not `{Head, Guards, Body}`, e.g. `[{'_', []}]`.
    ClauseNotATriple,
    /// A trace head is an improper list, e.g. `[{['$1' | '_'], [], []}]`.
    HeadNotAProperList,
    /// A map key in a head is a variable, e.g. `#{'$1' => 1}`.
    VariableInMapKey,
    /// A map key in a head is `'_'`.
    UnderscoreInMapKey,
    /// A trace head that is not a list, tuple, `'_'` or `'$N'`, e.g. `foo`.
    InvalidHead,
    /// A table body that is `[]` or not a list.
    BodyReturnsNothing,
    /// Guards or body not a list, e.g. `{'_', foo, [true]}`.
    ExpressionsNotAList,
    /// Guards or body an improper list.
    ExpressionsNotAProperList,
    /// A variable not bound in the head, e.g. `[{'_', [{'>', '$1', 0}], [true]}]`.
    UnboundVariable(u32),
    /// A tuple that is neither a call nor `{{...}}`, e.g. `{1, 2}`.
    NotACallOrTuple,
    /// An unknown function, e.g. `{foo, '$1'}`.
    UnknownFunction,
    /// A function not allowed here, e.g. `{get_tcw}` in a table spec.
    WrongContext,
    /// Nesting deeper than the limit (`system_limit`).
    ExcessiveNesting,
    /// Renumbering variables (quirk Q1) needed a new `'$N'` atom and the
    /// atom table is full. ERTS would crash; we refuse the spec.
    AtomTableFull,
    /// `{const}` or `{const, A, B}`.
    ConstArity,
    /// `{'and'}` and friends with no arguments.
    NoArguments,
    /// A trace-only special form in a table spec.
    WrongDialect,
    /// A special form the event does not allow, e.g. `{caller}` on send.
    NotAllowedForEvent,
    /// A special form that is only allowed in bodies, used in a guard.
    InGuard,
    /// A special form with the wrong number of arguments.
    WrongArity,
    /// `{current_stacktrace, N}` where N is not a small integer.
    NonSmallArgument,
    /// `{current_stacktrace, N}` where N is negative.
    NegativeArgument,
}

impl SpecError {
    /// What kind of error.
    pub fn kind(&self) -> &SpecErrorKind {
        &self.kind
    }

    /// ERTS's message, as the bytes ERTS returns (Latin-1 characters of
    /// printed strings as single bytes, atom text as UTF-8, cut at 99
    /// bytes).
    pub fn message_bytes(&self) -> &[u8] {
        &self.message
    }

    /// ERTS's message as text (bytes that are not UTF-8 read as Latin-1).
    pub fn message(&self) -> String {
        match std::str::from_utf8(&self.message) {
            Ok(s) => s.to_owned(),
            Err(_) => self.message.iter().map(|&b| char::from(b)).collect(),
        }
    }

    /// The path from the spec to the offending part.
    pub fn path(&self) -> &[Step] {
        &self.path
    }

    /// Where the offending part is in the source text, if the spec came from text.
    pub fn source(&self) -> Option<&SourceInfo> {
        self.source.as_ref()
    }
}

impl SpecErrors {
    /// The errors, in ERTS's order.
    pub fn errors(&self) -> &[SpecError] {
        &self.errors
    }

    /// Did the spec fail because of `system_limit` (nesting) rather than
    /// `badarg`? (`ets:match_spec_compile/1` raises the one or the other.)
    pub fn is_system_limit(&self) -> bool {
        self.errors.iter().any(|e| e.kind == SpecErrorKind::ExcessiveNesting)
    }

    /// The error list as `erlang:match_spec_test/3` returns it:
    /// `[{error, "message"}, ...]`, built in `heap`.
    pub fn to_term(&self, heap: &mut Heap) -> Word {
        let items: Vec<Word> = self
            .errors
            .iter()
            .map(|e| {
                let chars: Vec<Word> =
                    e.message.iter().map(|&b| Word::small_unchecked(i64::from(b))).collect();
                let text = heap.list(&chars);
                heap.tuple(&[Word::atom(crate::term::Atom::ERROR), text])
            })
            .collect();
        heap.list(&items)
    }

    /// Resolves each error's path to a span of `source`, the text `spec`
    /// was parsed from with `map` its source map.
    pub(crate) fn locate(&mut self, source: &str, map: &SourceMap, spec: TermRef<'_>) {
        for e in &mut self.errors {
            if let Some(span) = map.span_of(spec, &e.path) {
                let start = span.start as usize;
                let location = Location::of(source, start);
                let line_start = source[..start.min(source.len())].rfind('\n').map_or(0, |i| i + 1);
                let line_end =
                    source[line_start..].find('\n').map_or(source.len(), |i| line_start + i);
                let line_text = source[line_start..line_end].trim_end_matches('\r').to_owned();
                e.source = Some(SourceInfo { span, location, line_text });
            }
        }
    }
}

impl fmt::Display for SpecErrors {
    /// Each error as `error: MESSAGE`, with the source line and a caret
    /// when known, else the path into the spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            match &e.source {
                Some(src) => crate::syntax::render_caret(
                    f,
                    &e.message(),
                    src.location,
                    &src.line_text,
                    src.span,
                )?,
                None => {
                    write!(f, "error: {}", e.message())?;
                    if !e.path.is_empty() {
                        write!(f, "\n  at {}", PathDisplay(&e.path))?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

/// A path written the way a reader finds it: `clause 2, guard 1, argument 3`.
struct PathDisplay<'a>(&'a [Step]);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" > ")?;
            }
            match (i, step) {
                (0, Step::Element(n)) => write!(f, "clause {}", n + 1)?,
                (1, Step::Element(0)) => f.write_str("head")?,
                (1, Step::Element(1)) => f.write_str("guards")?,
                (1, Step::Element(2)) => f.write_str("body")?,
                (_, Step::Element(n)) => write!(f, "element {}", n + 1)?,
                (_, Step::Tail(n)) => write!(f, "tail after {n}")?,
                (_, Step::Key(n)) => write!(f, "key {}", n + 1)?,
                (_, Step::Value(n)) => write!(f, "value {}", n + 1)?,
            }
        }
        Ok(())
    }
}
