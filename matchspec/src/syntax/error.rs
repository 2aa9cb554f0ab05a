//! Syntax errors: what went wrong, where, and how to show it.

use std::fmt;

/// A byte range in source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: clamp(start), end: clamp(end) }
    }

    /// The range of bytes, for slicing.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The empty span where this one starts.
    pub fn first(self) -> Span {
        Span { start: self.start, end: self.start }
    }

    /// The span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

fn clamp(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub column: u32,
}

impl Location {
    /// The location of byte `offset` in `source`.
    pub fn of(source: &str, offset: usize) -> Location {
        let offset = floor_char_boundary(source, offset.min(source.len()));
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            line: clamp(before.matches('\n').count() + 1),
            column: clamp(before[line_start..].chars().count() + 1),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A syntax error in term text.
///
/// `Display` shows the message with the line:column and the offending line
/// with a caret under the problem:
///
/// ```
/// use matchspec::syntax::parse_term;
/// let err = parse_term("{a, [1, 2}, 3}").unwrap_err();
/// assert_eq!(err.to_string(), "\
/// error: unexpected `}`; expected `,`, `]` or `|`
///  --> 1:10
///   |
/// 1 | {a, [1, 2}, 3}
///   |          ^");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    kind: ParseErrorKind,
    span: Span,
    location: Location,
    line_text: String,
}

/// The kinds of syntax errors.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A character that starts no token, e.g. `{a, ~}`.
    InvalidCharacter(char),
    /// A string with no closing quote, e.g. `"abc`.
    UnterminatedString,
    /// A quoted atom with no closing quote, e.g. `'abc`.
    UnterminatedAtom,
    /// A `$` at the end of the input.
    UnterminatedChar,
    /// A malformed escape sequence, e.g. `"\x{zz}"`.
    BadEscape,
    /// A code point that is not a valid character where one is needed, e.g.
    /// `'\x{D800}'` in an atom.
    BadCodePoint(u32),
    /// An integer base outside 2..=36, e.g. `37#1`.
    BadBase(u32),
    /// A digit too large for the base (the scanner stops at the first one,
    /// so `2#102` is `2#10` and `2`).
    BadDigit,
    /// A float too large for a double, e.g. `1.0e400` (or, from OTP 29,
    /// `2#1.0#e1024`).
    FloatOutOfRange,
    /// A number with a name character right after it, which OTP 29 rejects
    /// (`erl_scan`'s `{illegal, integer}` or `{illegal, float}`), e.g. `1e5`,
    /// `1_`, `16#ffz`, `1.5a`, `1.e5`. OTP 27 read a number and a name.
    RunOnNumber {
        /// Was the number a float (or a `.` right after it)?
        float: bool,
        /// The text it runs into.
        into: String,
    },
    /// A float with no digit before its `.` or in its exponent, e.g.
    /// `1.0e`, `10#.5`, `10#1.5#e`.
    BadFloat,
    /// A based number with no digit after its `#`, e.g. `16#` or `2#2`.
    MissingDigits,
    /// A based float's `#e` with no digit after it, e.g. `16#1.8#e` (OTP
    /// 29's `erl_scan` crashes on it).
    MissingExponentDigits,
    /// An atom of more than 255 characters.
    AtomTooLong,
    /// A variable name of more than 255 characters (`erl_scan`'s `{illegal,
    /// var}`: Erlang names variables with atoms).
    VariableTooLong,
    /// The atom table is full.
    TooManyAtoms,
    /// A variable, which a term cannot contain, e.g. `{X, 1}`.
    Variable(String),
    /// A reserved word used as an atom without quotes, e.g. `{and, 1}`.
    ReservedWord(String),
    /// A malformed `<0.1.2>`, `#Port<...>`, `#Ref<...>`, `#Pid<...>` literal.
    BadIdentifier(String),
    /// Two string literals with no white space between them, e.g. `"a""b"`
    /// (OTP 27 rejects this).
    AdjacentStrings,
    /// A `.` that does not end a term (it must be followed by white space,
    /// a comment or the end of the input).
    BadDot,
    /// A malformed fun, e.g. a named fun whose clauses differ in name.
    BadFun(String),
    /// An invalid binary segment, e.g. `<<1.5>>` (a float needs `/float`).
    BadSegment(String),
    /// A token the grammar does not allow here.
    UnexpectedToken {
        /// The token found.
        found: String,
        /// What would have been accepted, in display form.
        expected: Vec<String>,
    },
    /// The input ended inside a term.
    UnexpectedEnd {
        /// What would have been accepted, in display form.
        expected: Vec<String>,
    },
    /// Text after the one term that was asked for, e.g. `a. b.` parsed as one term.
    TrailingInput,
    /// A complete term followed by another with no `.` between them, e.g.
    /// `{a, 1}` and `{b, 2}.` on two lines: the error points just after
    /// the first term.
    MissingDot {
        /// Where the complete term's last character is.
        after: Location,
    },
    /// No term at all (only white space and comments).
    Empty,
}

/// Logos needs a default error; every path that produces one replaces it
/// with a precise kind.
impl Default for ParseErrorKind {
    fn default() -> ParseErrorKind {
        ParseErrorKind::InvalidCharacter('\u{fffd}')
    }
}

impl ParseError {
    pub(crate) fn new(kind: ParseErrorKind, span: Span, source: &str) -> ParseError {
        let start = (span.start as usize).min(source.len());
        let start = floor_char_boundary(source, start);
        let location = Location::of(source, start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line_text = source[line_start..line_end].trim_end_matches('\r').to_owned();
        ParseError { kind, span, location, line_text }
    }

    /// The same error in a text that had `lines` more lines before it (a
    /// stream whose earlier lines were read and dropped).
    pub fn with_line_offset(mut self, lines: u32) -> ParseError {
        self.location.line = self.location.line.saturating_add(lines);
        if let ParseErrorKind::MissingDot { after } = &mut self.kind {
            after.line = after.line.saturating_add(lines);
        }
        self
    }

    /// The same error with "a term" among the expected tokens called
    /// `what` instead (the expression grammar's word for it).
    pub(crate) fn expecting(mut self, what: &str) -> ParseError {
        if let ParseErrorKind::UnexpectedToken { expected, .. }
        | ParseErrorKind::UnexpectedEnd { expected } = &mut self.kind
        {
            for e in expected.iter_mut().filter(|e| *e == "a term") {
                *e = what.to_owned();
            }
            expected.sort();
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }

    /// Where, in bytes of the source text.
    pub fn span(&self) -> Span {
        self.span
    }

    /// Where, as line and column.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The message alone, without location or caret.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::InvalidCharacter(c) => write!(f, "invalid character {c:?}"),
            ParseErrorKind::UnterminatedString => f.write_str("unterminated string"),
            ParseErrorKind::UnterminatedAtom => f.write_str("unterminated quoted atom"),
            ParseErrorKind::UnterminatedChar => f.write_str("unterminated character literal"),
            ParseErrorKind::BadEscape => f.write_str("invalid escape sequence"),
            ParseErrorKind::BadCodePoint(c) => write!(f, "invalid code point {c:#x}"),
            ParseErrorKind::BadBase(b) => write!(f, "integer base {b} is not in 2..36"),
            ParseErrorKind::BadDigit => f.write_str("digit too large for the integer's base"),
            ParseErrorKind::FloatOutOfRange => f.write_str("float out of range"),
            ParseErrorKind::RunOnNumber { float, into } => {
                let what = if *float { "float" } else { "integer" };
                write!(
                    f,
                    "illegal {what}: the number runs into `{into}` (put a space between them)"
                )
            }
            ParseErrorKind::BadFloat => {
                f.write_str("illegal float: digits are needed before its `.` and in its exponent")
            }
            ParseErrorKind::MissingDigits => f.write_str("no digits after the base's `#`"),
            ParseErrorKind::MissingExponentDigits => {
                f.write_str("illegal float: no digits in the exponent after `#e`")
            }
            ParseErrorKind::AtomTooLong => f.write_str("atom longer than 255 characters"),
            ParseErrorKind::VariableTooLong => {
                f.write_str("variable name longer than 255 characters")
            }
            ParseErrorKind::TooManyAtoms => f.write_str("system_limit: the atom table is full"),
            ParseErrorKind::Variable(v) => {
                write!(
                    f,
                    "variable `{v}` in a term; terms cannot contain variables (quote it for an atom: '{v}')"
                )
            }
            ParseErrorKind::ReservedWord(w) => {
                write!(f, "`{w}` is a reserved word; quote it for an atom: '{w}'")
            }
            ParseErrorKind::BadIdentifier(why) => f.write_str(why),
            ParseErrorKind::AdjacentStrings => {
                f.write_str("adjacent strings need white space between them")
            }
            ParseErrorKind::BadDot => {
                f.write_str("`.` must end a term and be followed by white space or the end")
            }
            ParseErrorKind::BadFun(why) => f.write_str(why),
            ParseErrorKind::BadSegment(why) => write!(f, "invalid binary segment: {why}"),
            ParseErrorKind::UnexpectedToken { found, expected } => {
                write!(f, "unexpected {found}")?;
                write_expected(f, expected)
            }
            ParseErrorKind::UnexpectedEnd { expected } => {
                f.write_str("unexpected end of input")?;
                write_expected(f, expected)
            }
            ParseErrorKind::TrailingInput => f.write_str("unexpected text after the term"),
            ParseErrorKind::MissingDot { after } => {
                write!(f, "missing `.` after the term that ends at {after}")
            }
            ParseErrorKind::Empty => f.write_str("no term in the input"),
        }
    }
}

fn write_expected(f: &mut fmt::Formatter<'_>, expected: &[String]) -> fmt::Result {
    match expected {
        [] => Ok(()),
        [one] => write!(f, "; expected {one}"),
        [init @ .., last] => write!(f, "; expected {} or {last}", init.join(", ")),
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        render_caret(f, &self.kind.to_string(), self.location, &self.line_text, self.span)
    }
}

impl std::error::Error for ParseError {}

/// The most characters of a source line an error shows; a longer line is
/// cut around the caret, as rustc does.
const MAX_SHOWN: usize = 100;

/// Draws `error: MESSAGE`, the location and the line with a caret under the
/// span, in the style of rustc. Shared by every error that points into text.
/// A line longer than [`MAX_SHOWN`] characters is cut to a window around the
/// caret, with `...` where text was left out; the location stays exact.
pub(crate) fn render_caret(
    f: &mut impl fmt::Write,
    message: &str,
    location: Location,
    line_text: &str,
    span: Span,
) -> fmt::Result {
    let gutter = location.line.to_string();
    let pad = " ".repeat(gutter.len());
    writeln!(f, "error: {message}")?;
    writeln!(f, "{pad}--> {location}")?;
    writeln!(f, "{pad} |")?;
    let chars: Vec<char> = line_text.chars().collect();
    let column = (location.column as usize - 1).min(chars.len());
    let width = (span.end.saturating_sub(span.start) as usize).max(1);
    // Carets count characters of the line, not bytes of the span.
    let mut carets = 0;
    let mut bytes = 0;
    for c in &chars[column..] {
        if bytes >= width {
            break;
        }
        bytes += c.len_utf8();
        carets += 1;
    }
    let carets = carets.max(1);
    let (start, end) = window(chars.len(), column);
    let before = if start > 0 { "..." } else { "" };
    let after = if end < chars.len() { "..." } else { "" };
    let shown: String = chars[start..end].iter().collect();
    writeln!(f, "{gutter} | {before}{shown}{after}")?;
    let carets = carets.min(end.saturating_sub(column)).max(1);
    let indent = before.len() + column - start;
    write!(f, "{pad} | {}{}", " ".repeat(indent), "^".repeat(carets))
}

/// The characters `start..end` of a line of `len` to show for a caret at
/// `column`: all of it if short, else [`MAX_SHOWN`] of them with the caret
/// a third of the way in (or as far as the line allows).
fn window(len: usize, column: usize) -> (usize, usize) {
    if len <= MAX_SHOWN {
        return (0, len);
    }
    let lead = MAX_SHOWN / 3;
    let start = column.saturating_sub(lead).min(len - MAX_SHOWN);
    (start, start + MAX_SHOWN)
}
