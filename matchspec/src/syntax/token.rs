//! The tokens of Erlang term text (a logos lexer).
//!
//! This follows `erl_scan` for everything a term can contain. Literal values
//! are decoded here (escapes; numbers, whose syntax depends on the release,
//! in [`scan`](super::scan)), so the grammar only sees finished values. Whether a `.` ends a term depends on the next
//! character, which the [lexer adapter](super::lexer) checks.

use std::borrow::Cow;

use logos::{Lexer, Logos};
use num_bigint::BigInt;

use super::error::ParseErrorKind;
use crate::term::Atom;

/// One token. Punctuation is named by its text in the grammar.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error(ParseErrorKind, invalid_character))]
#[logos(skip r"[\x00-\x20\x{80}-\x{A0}]+")]
#[logos(skip(r"%[^\n]*", allow_greedy = true))]
pub(crate) enum Token<'input> {
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("<<")]
    LBin,
    #[token(">>")]
    RBin,
    #[token(",")]
    Comma,
    #[token("|")]
    Bar,
    #[token("#")]
    Hash,
    #[token("=>")]
    Arrow,
    #[token(":")]
    Colon,
    /// Only in map patterns and updates, which terms cannot contain; a token
    /// of its own so the error names it.
    #[token(":=")]
    ColonEq,
    #[token("/")]
    Slash,
    #[token("-")]
    Minus,
    #[token("+")]
    Plus,
    #[token(".")]
    Dot,
    #[token("fun")]
    Fun,

    // Operators and punctuation of expressions (funs); terms never hold them.
    #[token("->")]
    RArrow,
    #[token(";")]
    Semi,
    #[token("=")]
    Equals,
    #[token("==")]
    EqEq,
    #[token("=:=")]
    ExactEq,
    #[token("/=")]
    NotEq,
    #[token("=/=")]
    ExactNotEq,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("=<")]
    Le,
    #[token(">=")]
    Ge,
    #[token("*")]
    Star,
    #[token("++")]
    PlusPlus,
    #[token("--")]
    MinusMinus,
    #[token("!")]
    Bang,
    #[token("||")]
    DoubleBar,
    #[token("<-")]
    LArrow,
    #[token("<=")]
    LDoubleArrow,
    #[token("?=")]
    MaybeMatch,

    // **IMPORTANT** keep in sync with `term::display::is_lower`/`is_name_char`.
    #[regex(r"[a-zß-öø-ÿ][a-zA-Z0-9_@À-ÖØ-öø-ÿ]*", bare_atom)]
    #[regex(r"'([^'\\]|\\[\x00-\x{10FFFF}])*'", quoted_atom)]
    Atom(Atom),

    #[regex(r"'([^'\\]|\\[\x00-\x{10FFFF}])*\\?", unterminated_atom, priority = 1)]
    UnterminatedAtom,

    #[token("after", |l| l.slice())]
    #[token("and", |l| l.slice())]
    #[token("andalso", |l| l.slice())]
    #[token("band", |l| l.slice())]
    #[token("begin", |l| l.slice())]
    #[token("bnot", |l| l.slice())]
    #[token("bor", |l| l.slice())]
    #[token("bsl", |l| l.slice())]
    #[token("bsr", |l| l.slice())]
    #[token("bxor", |l| l.slice())]
    #[token("case", |l| l.slice())]
    #[token("catch", |l| l.slice())]
    #[token("cond", |l| l.slice())]
    #[token("div", |l| l.slice())]
    #[token("end", |l| l.slice())]
    #[token("if", |l| l.slice())]
    #[token("let", |l| l.slice())]
    #[token("not", |l| l.slice())]
    #[token("of", |l| l.slice())]
    #[token("or", |l| l.slice())]
    #[token("orelse", |l| l.slice())]
    #[token("receive", |l| l.slice())]
    #[token("rem", |l| l.slice())]
    #[token("try", |l| l.slice())]
    #[token("when", |l| l.slice())]
    #[token("xor", |l| l.slice())]
    #[token("maybe", |l| l.slice())]
    #[token("else", |l| l.slice())]
    Reserved(&'input str),

    #[regex(r"[A-Z_À-ÖØ-Þ][a-zA-Z0-9_@À-ÖØ-öø-ÿ]*", variable)]
    Var(&'input str),

    /// The first digit of a number: the [lexer adapter](super::lexer)
    /// reads the rest as the release does ([`scan`](super::scan)) and
    /// gives an [`Int`](Token::Int) or a [`Float`](Token::Float) instead.
    #[regex(r"[0-9]")]
    Digit,

    /// An integer literal (made by the lexer adapter, never by logos).
    Int(IntLit),

    /// A float literal (made by the lexer adapter, never by logos).
    Float(f64),

    #[regex(r"\$([^\\]|\\[\x00-\x{10FFFF}])", char_literal)]
    #[regex(r"\$\\[0-7]{1,3}", char_literal)]
    #[regex(r"\$\\x[0-9a-fA-F]{2}", char_literal)]
    #[regex(r"\$\\x\{[0-9a-fA-F]+\}", char_literal)]
    #[regex(r"\$\\\^[\x00-\x{10FFFF}]", char_literal)]
    Char(u32),

    #[regex(r"\$\\?", unterminated_char)]
    UnterminatedChar,

    #[regex(r#""([^"\\]|\\[\x00-\x{10FFFF}])*""#, string)]
    String(StrLit<'input>),

    #[regex(r#""([^"\\]|\\[\x00-\x{10FFFF}])*\\?"#, unterminated_string, priority = 1)]
    UnterminatedString,

    #[regex(r"<[0-9]+\.[0-9]+\.[0-9]+>", local_pid)]
    // A quoted node name may hold `>` and escaped quotes.
    #[regex(r"#(Pid|Port|Ref)<('([^'\\]|\\[\x00-\x{10FFFF}])*'|[^'>\n])*>", identifier)]
    Identifier(IdentLit),
}

/// An integer literal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum IntLit {
    Small(i64),
    Big(BigInt),
}

/// A string literal: its text when it had no escapes, else the decoded code
/// points (which need not be valid `char`s).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StrLit<'input> {
    Plain(&'input str),
    Decoded(Vec<u32>),
}

impl StrLit<'_> {
    /// The code points.
    pub(crate) fn code_points(&self) -> Cow<'_, [u32]> {
        match self {
            StrLit::Plain(s) => Cow::Owned(s.chars().map(u32::from).collect()),
            StrLit::Decoded(v) => Cow::Borrowed(v),
        }
    }
}

/// A pid, port or reference literal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum IdentLit {
    Pid { node: Atom, creation: u32, id: u32, serial: u32 },
    Port { node: Atom, creation: u32, id: u64 },
    Ref { node: Atom, creation: u32, ids: Vec<u32> },
}

fn unterminated_atom<'s>(_: &mut Lexer<'s, Token<'s>>) -> Result<(), ParseErrorKind> {
    Err(ParseErrorKind::UnterminatedAtom)
}

fn unterminated_char<'s>(_: &mut Lexer<'s, Token<'s>>) -> Result<(), ParseErrorKind> {
    Err(ParseErrorKind::UnterminatedChar)
}

fn unterminated_string<'s>(_: &mut Lexer<'s, Token<'s>>) -> Result<(), ParseErrorKind> {
    Err(ParseErrorKind::UnterminatedString)
}

fn invalid_character<'s>(lex: &mut Lexer<'s, Token<'s>>) -> ParseErrorKind {
    ParseErrorKind::InvalidCharacter(lex.slice().chars().next().unwrap_or('\0'))
}

fn intern(name: &str) -> Result<Atom, ParseErrorKind> {
    Atom::try_new(name).map_err(|err| match err {
        crate::term::AtomError::TooLong => ParseErrorKind::AtomTooLong,
        _ => ParseErrorKind::TooManyAtoms,
    })
}

/// A variable name: at most 255 characters, as an atom (`fun2ms` makes
/// atoms of them).
fn variable<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<&'s str, ParseErrorKind> {
    let name = lex.slice();
    if name.len() > crate::term::MAX_ATOM_CHARS
        && name.chars().count() > crate::term::MAX_ATOM_CHARS
    {
        return Err(ParseErrorKind::VariableTooLong);
    }
    Ok(name)
}

fn bare_atom<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<Atom, ParseErrorKind> {
    intern(lex.slice())
}

fn quoted_atom<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<Atom, ParseErrorKind> {
    let slice = lex.slice();
    let body = &slice[1..slice.len() - 1];
    if !body.contains('\\') {
        return intern(body);
    }
    let mut name = String::with_capacity(body.len());
    for c in unescape(body)? {
        name.push(char::from_u32(c).ok_or(ParseErrorKind::BadCodePoint(c))?);
    }
    intern(&name)
}

fn char_literal<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<u32, ParseErrorKind> {
    let body = &lex.slice()[1..];
    let decoded = unescape(body)?;
    match decoded.as_slice() {
        [c] => Ok(*c),
        _ => Err(ParseErrorKind::BadEscape),
    }
}

fn string<'input>(
    lex: &mut Lexer<'input, Token<'input>>,
) -> Result<StrLit<'input>, ParseErrorKind> {
    let slice = lex.slice();
    let body = &slice[1..slice.len() - 1];
    if body.contains('\\') { Ok(StrLit::Decoded(unescape(body)?)) } else { Ok(StrLit::Plain(body)) }
}

/// Decodes Erlang escape sequences (`erl_scan`'s rules) into code points.
pub(crate) fn unescape(text: &str) -> Result<Vec<u32>, ParseErrorKind> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(u32::from(c));
            continue;
        }
        let e = chars.next().ok_or(ParseErrorKind::BadEscape)?;
        let code = match e {
            'b' => 8,
            'd' => 127,
            'e' => 27,
            'f' => 12,
            'n' => 10,
            'r' => 13,
            's' => 32,
            't' => 9,
            'v' => 11,
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                value
            }
            'x' => {
                if chars.peek() == Some(&'{') {
                    chars.next();
                    let mut hex = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(d) if d.is_ascii_hexdigit() => hex.push(d),
                            _ => return Err(ParseErrorKind::BadEscape),
                        }
                    }
                    let value =
                        u32::from_str_radix(&hex, 16).map_err(|_| ParseErrorKind::BadEscape)?;
                    if value > 0x10ffff || (0xd800..=0xdfff).contains(&value) {
                        return Err(ParseErrorKind::BadCodePoint(value));
                    }
                    value
                } else {
                    let hi = chars.next().and_then(|d| d.to_digit(16));
                    let lo = chars.next().and_then(|d| d.to_digit(16));
                    match (hi, lo) {
                        (Some(hi), Some(lo)) => hi * 16 + lo,
                        _ => return Err(ParseErrorKind::BadEscape),
                    }
                }
            }
            '^' => {
                let c = chars.next().ok_or(ParseErrorKind::BadEscape)?;
                match c {
                    'a'..='z' | 'A'..='Z' => u32::from(c) & 31,
                    '@' => 0,
                    '[' => 27,
                    '\\' => 28,
                    ']' => 29,
                    '^' => 30,
                    '_' => 31,
                    '?' => 127,
                    _ => return Err(ParseErrorKind::BadEscape),
                }
            }
            other => u32::from(other),
        };
        out.push(code);
    }
    Ok(out)
}

fn local_pid<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<IdentLit, ParseErrorKind> {
    let inner = &lex.slice()[1..lex.slice().len() - 1];
    let nums: Vec<&str> = inner.split('.').collect();
    let bad = || {
        ParseErrorKind::BadIdentifier(
            "pid numbers out of range (node 0, id and serial below 2^32); a pid of another node \
             is written #Pid<'node@host'.Creation.Id.Serial>"
                .to_owned(),
        )
    };
    match nums.as_slice() {
        ["0", id, serial] => Ok(IdentLit::Pid {
            node: Atom::NONODE,
            creation: 0,
            id: id.parse().map_err(|_| bad())?,
            serial: serial.parse().map_err(|_| bad())?,
        }),
        _ => Err(bad()),
    }
}

/// Parses `#Pid<...>`, `#Port<...>` and `#Ref<...>`: `0.N...` on this node or
/// `'node'.Creation.N...` on another.
fn identifier<'s>(lex: &mut Lexer<'s, Token<'s>>) -> Result<IdentLit, ParseErrorKind> {
    let slice = lex.slice();
    let open = slice.find('<').unwrap_or(0);
    let what = &slice[1..open];
    let inner = &slice[open + 1..slice.len() - 1];
    let usage = match what {
        "Pid" => "#Pid<'node@host'.Creation.Id.Serial>",
        "Port" => "#Port<0.Id> or #Port<'node@host'.Creation.Id>",
        _ => "#Ref<0.N.N.N> or #Ref<'node@host'.Creation.N.N.N>",
    };
    let bad = || ParseErrorKind::BadIdentifier(format!("malformed {what} literal; write {usage}"));
    let (node, creation, rest) = if let Some(rest) = inner.strip_prefix("0.") {
        (Atom::NONODE, 0, rest)
    } else {
        let (node, rest) = split_node(inner).ok_or_else(bad)?;
        let (creation, rest) = rest.split_once('.').ok_or_else(bad)?;
        (intern(&node)?, creation.parse().map_err(|_| bad())?, rest)
    };
    let nums: Vec<&str> = rest.split('.').collect();
    match (what, nums.as_slice()) {
        ("Pid", [id, serial]) if node != Atom::NONODE || creation != 0 => Ok(IdentLit::Pid {
            node,
            creation,
            id: id.parse().map_err(|_| bad())?,
            serial: serial.parse().map_err(|_| bad())?,
        }),
        ("Port", [id]) => Ok(IdentLit::Port { node, creation, id: id.parse().map_err(|_| bad())? }),
        ("Ref", ids) if (1..=5).contains(&ids.len()) => {
            // Written most significant first; stored least significant first.
            let ids: Result<Vec<u32>, _> = ids.iter().rev().map(|n| n.parse::<u32>()).collect();
            Ok(IdentLit::Ref { node, creation, ids: ids.map_err(|_| bad())? })
        }
        _ => Err(bad()),
    }
}

/// Splits `'node@host'.rest` or `node@host.rest` into the node name and the rest.
fn split_node(text: &str) -> Option<(String, &str)> {
    if let Some(quoted) = text.strip_prefix('\'') {
        // The name ends at the first quote that is not escaped.
        let mut escaped = false;
        let (end, _) = quoted.char_indices().find(|&(_, c)| {
            let close = c == '\'' && !escaped;
            escaped = c == '\\' && !escaped;
            close
        })?;
        let name = &quoted[..end];
        let rest = quoted[end + 1..].strip_prefix('.')?;
        let decoded: Option<String> =
            unescape(name).ok()?.into_iter().map(char::from_u32).collect();
        Some((decoded?, rest))
    } else {
        let (name, rest) = text.split_once('.')?;
        Some((name.to_owned(), rest))
    }
}
