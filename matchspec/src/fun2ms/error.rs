//! What can go wrong translating a fun, and the text of each error exactly
//! as `ms_transform:format_error/1` (OTP 27) writes it.

use std::fmt::{self, Write};

use crate::syntax::{Location, ParseError, Span, render_caret};
use crate::term::Atom;
use crate::term::display::{atom_needs_quotes, write_atom};

/// Where in the fun a guard-or-body error was found; `ms_transform` words
/// its messages differently for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// In a `when` guard.
    Guard,
    /// In the body.
    Body,
}

/// An error `ms_transform` reports, by its error code.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransformErrorKind {
    /// 1: the text is an expression but not a fun with clauses.
    NotAFun,
    /// 2: a table fun's head is not one variable or tuple.
    TableHead,
    /// 3: a trace fun's head is not one variable or list.
    TraceHead,
    /// 4: `=` below the top of a head.
    HeadMatch,
    /// 6: a variable neither the head nor the bindings give a value.
    Unbound(String),
    /// 7: a record in a head (msc knows no record definitions).
    HeadRecord(Atom),
    /// 9: a record field given twice in a head (only `_` can be detected
    /// without the definition).
    HeadDuplicateField(Atom, Atom),
    /// 10: an atom `'$N'` in a head, which a match spec would read as a
    /// variable.
    HeadDollarAtom(Atom),
    /// 11: a variable as a binary segment's value in a head (its name,
    /// which ms_transform writes as an atom).
    HeadBinVariable(String),
    /// 16, 116: `=` in a guard or body.
    Match(Part),
    /// 17, 117: a call of a function a match spec does not have.
    LocalCall(Part, Atom, usize),
    /// 18, 118: a construct a match spec cannot express (`case`, a list
    /// comprehension, ...), by `ms_transform`'s name for it.
    Element(Part, String),
    /// 20, 120: a record in a guard or body (msc knows no record definitions).
    Record(Part, Atom),
    /// 21, 121: a record field given twice (only `_` can be detected
    /// without the definition).
    DuplicateField(Part, Atom, Atom),
    /// 22, 122: a call of another module's function (or of an `erlang`
    /// function a match spec does not have).
    RemoteCall(Part, Atom, Atom, usize),
    /// 23, 123: a head variable as a binary segment's value in a guard or
    /// body (its name).
    BinVariable(Part, String),
    /// A record update whose field is not an atom: `ms_transform` throws a
    /// bare code 7 here, which `format_error/1` does not know.
    UnknownCode7,
}

impl TransformErrorKind {
    /// Is this about a record, which msc cannot expand?
    pub fn is_record(&self) -> bool {
        matches!(
            self,
            TransformErrorKind::HeadRecord(_)
                | TransformErrorKind::HeadDuplicateField(..)
                | TransformErrorKind::Record(..)
                | TransformErrorKind::DuplicateField(..)
                | TransformErrorKind::UnknownCode7
        )
    }
}

/// `ms_transform:format_error/1`, character for character.
impl fmt::Display for TransformErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TransformErrorKind as K;
        match self {
            K::NotAFun => f.write_str("Parameter of ets/dbg:fun2ms/1 is not a literal fun"),
            K::TableHead => {
                f.write_str("ets:fun2ms requires fun with single variable or tuple parameter")
            }
            K::TraceHead => {
                f.write_str("dbg:fun2ms requires fun with single variable or list parameter")
            }
            K::HeadMatch => f.write_str(
                "in fun head, only matching (=) on toplevel can be translated into match_spec",
            ),
            K::Unbound(name) => {
                write!(f, "the variable {name} is unbound, cannot translate into match_spec")
            }
            K::HeadRecord(name) => {
                write!(f, "fun head contains unknown record type {}", Tw(*name))
            }
            K::HeadDuplicateField(record, field) => write!(
                f,
                "fun head contains already defined field {} in record type {}",
                Tw(*field),
                Tw(*record)
            ),
            K::HeadDollarAtom(atom) => write!(
                f,
                "fun head contains atom {}, which conflics with reserved atoms in match_spec heads",
                W(atom.name())
            ),
            K::HeadBinVariable(var) => write!(
                f,
                "fun head contains bit syntax matching of variable {}, which cannot be translated \
                 into match_spec",
                W(var)
            ),
            K::Match(Part::Guard) => f.write_str(
                "fun with guard matching ('=' in guard) is illegal as match_spec as well",
            ),
            K::Match(Part::Body) => {
                f.write_str("fun with body matching ('=' in body) is illegal as match_spec")
            }
            K::LocalCall(part, name, arity) => write!(
                f,
                "fun containing the local function call '{}/{arity}' (called in {}) cannot be \
                 translated into match_spec",
                Tw(*name),
                part.word()
            ),
            K::Element(part, what) => write!(
                f,
                "the language element {what} (in {}) cannot be translated into match_spec",
                part.word()
            ),
            K::Record(part, name) => {
                write!(f, "fun {} contains unknown record type {}", part.word(), Tw(*name))
            }
            K::DuplicateField(part, record, field) => write!(
                f,
                "fun {} contains already defined field {} in record type {}",
                part.word(),
                Tw(*field),
                Tw(*record)
            ),
            K::RemoteCall(part, module, name, arity) => write!(
                f,
                "fun containing the remote function call '{}:{}/{arity}' (called in {}) cannot be \
                 translated into match_spec",
                W(module.name()),
                Tw(*name),
                part.word()
            ),
            K::BinVariable(part, var) => write!(
                f,
                "bit syntax construction with variable {} (in {}) cannot be translated into \
                 match_spec",
                W(var),
                part.word()
            ),
            K::UnknownCode7 => f.write_str("Unknown error code 7"),
        }
    }
}

impl Part {
    fn word(self) -> &'static str {
        match self {
            Part::Guard => "guard",
            Part::Body => "body",
        }
    }
}

/// An atom as `~tw` writes it: quoted when needed, Unicode kept.
struct Tw(Atom);

impl fmt::Display for Tw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_atom(f, self.0.name())
    }
}

/// An atom as `~w` writes it: as `~tw`, but characters above 255 escaped.
/// An atom as `~w` writes it, from its name.
struct W<'a>(&'a str);

impl fmt::Display for W<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.0;
        if name.chars().all(|c| u32::from(c) <= 255) {
            return write_atom(f, name);
        }
        debug_assert!(atom_needs_quotes(name));
        let mut text = String::new();
        write_atom(&mut text, name)?;
        for c in text.chars() {
            if u32::from(c) > 255 {
                write!(f, "\\x{{{:X}}}", u32::from(c))?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// An error translating a fun, pointing into its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fun2msError(Box<Repr>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Repr {
    kind: Fun2msErrorKind,
    /// Where OTP reports it (the annotation of the offending node).
    location: Option<Location>,
    span: Span,
    caret_location: Location,
    line_text: String,
}

/// The kinds of [`Fun2msError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fun2msErrorKind {
    /// The text is not Erlang (`erl_scan` or `erl_parse` would reject it).
    Syntax(ParseError),
    /// An error `ms_transform` reports; its `Display` is the exact text.
    Transform(TransformErrorKind),
    /// `ms_transform` translates the fun but then crashes evaluating the
    /// result (e.g. `1 + 2` in a head, or a binary segment that is not a
    /// number): OTP raises `reason` instead of reporting an error.
    Crash {
        /// The Erlang exception OTP raises (`function_clause`, `badarg`).
        reason: &'static str,
        /// What could not be evaluated, in words.
        what: String,
    },
}

impl Fun2msError {
    pub(super) fn new(kind: Fun2msErrorKind, at: Option<Span>, span: Span, source: &str) -> Self {
        let start = (span.start as usize).min(source.len());
        let caret_location = Location::of(source, start);
        let line_start = source[..floor(source, start)].rfind('\n').map_or(0, |i| i + 1);
        let line_end =
            source[floor(source, start)..].find('\n').map_or(source.len(), |i| start + i);
        let line_text = source[line_start..line_end].trim_end_matches('\r').to_owned();
        let location = at.map(|at| Location::of(source, at.start as usize));
        Fun2msError(Box::new(Repr { kind, location, span, caret_location, line_text }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &Fun2msErrorKind {
        &self.0.kind
    }

    /// The message alone: for an error `ms_transform` reports, exactly its
    /// `format_error/1` text.
    pub fn message(&self) -> String {
        match &self.0.kind {
            Fun2msErrorKind::Syntax(e) => e.message(),
            Fun2msErrorKind::Transform(k) => k.to_string(),
            Fun2msErrorKind::Crash { reason, what } => {
                format!("{what}: ms_transform crashes on it ({reason}) instead of translating")
            }
        }
    }

    /// Where OTP 27 reports the error (line and column of the offending
    /// node's annotation), when it reports one.
    pub fn location(&self) -> Option<Location> {
        match &self.0.kind {
            Fun2msErrorKind::Syntax(e) => Some(e.location()),
            _ => self.0.location,
        }
    }

    /// The text underlined.
    pub fn span(&self) -> Span {
        match &self.0.kind {
            Fun2msErrorKind::Syntax(e) => e.span(),
            _ => self.0.span,
        }
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Fun2msError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Fun2msErrorKind::Syntax(e) = &self.0.kind {
            return e.fmt(f);
        }
        render_caret(f, &self.message(), self.0.caret_location, &self.0.line_text, self.0.span)?;
        if let Fun2msErrorKind::Transform(k) = &self.0.kind
            && k.is_record()
        {
            f.write_str(
                "\n  = note: msc reads no record definitions; write the record as a tuple",
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Fun2msError {}

impl From<ParseError> for Fun2msError {
    fn from(e: ParseError) -> Fun2msError {
        let span = e.span();
        Fun2msError(Box::new(Repr {
            location: Some(e.location()),
            caret_location: e.location(),
            line_text: String::new(),
            span,
            kind: Fun2msErrorKind::Syntax(e),
        }))
    }
}
