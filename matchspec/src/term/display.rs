//! Printing terms as Erlang source text.
//!
//! The output is what `io:format("~tp")` would accept back through
//! `erl_scan`/`erl_parse`: atoms quoted only when needed, floats in Erlang's
//! shortest round-trip form (`0.1`, `1.0e20`, `-0.0`), printable lists as
//! strings, map keys in term order. The printer keeps an explicit stack, so
//! terms of any depth print.
//!
//! Pids, ports and references print as Erlang prints them (`<0.80.0>`,
//! `#Port<0.5>`, `#Ref<0.1.2.3>`) when they belong to this node
//! (`nonode@nohost`, creation 0). Erlang has no way to write other nodes'
//! identifiers, so they print in an extended form that the
//! `syntax` parser reads back:
//! `#Pid<'node@host'.Creation.Id.Serial>`, `#Port<'node@host'.Creation.Id>`,
//! `#Ref<'node@host'.Creation.W2.W1.W0>`. Local funs print as
//! `#Fun<Module.Index.Uniq>`, which no parser reads.

use std::fmt::{self, Write};

use super::view::Kind;
use super::word::Word;
use super::{Atom, HeapSet, TermRef};

impl fmt::Display for TermRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printer::new(f, true).print(*self)
    }
}

impl TermRef<'_> {
    /// Writes the term as [`Display`](fmt::Display) does, straight into
    /// `out`: without a `Formatter` between them, a writer of millions of
    /// small terms (a filter's results) spends its time on the terms.
    ///
    /// ```
    /// use matchspec::term::Term;
    /// let mut text = String::new();
    /// Term::parse("{ok, [1, 2], \"hi\"}")?.as_ref().write_text(&mut text)?;
    /// assert_eq!(text, "{ok,[1,2],\"hi\"}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_text(&self, out: &mut impl Write) -> fmt::Result {
        Printer::new(out, true).print(*self)
    }
}

/// A term printed as `~w` does: lists stay lists, even printable ones
/// (see [`TermRef::without_strings`]).
#[derive(Clone, Copy, Debug)]
pub struct WithoutStrings<'a>(pub(crate) TermRef<'a>);

impl fmt::Display for WithoutStrings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printer::new(f, false).print(self.0)
    }
}

/// Writes terms as Erlang source text.
pub(crate) struct Printer<'w, W: Write> {
    out: &'w mut W,
    /// Print printable lists as strings?
    strings: bool,
}

/// A term the printer walks: a decoded term ([`TermRef`]) or an encoded
/// one (`encoded::print`). Each says what it is one level down, and the
/// printer does the rest, so both print exactly alike.
pub(crate) trait Walk<'a>: Copy {
    /// The elements of a tuple, first to last.
    type Elements: Iterator<Item = Self>;

    /// What the term is, one level down.
    fn node(self) -> Node<'a, Self>;

    /// Writes a term [`node`](Walk::node) calls [`Node::Other`], pushing on
    /// `stack` what remains to print inside it.
    fn write_other<W: Write>(
        self,
        printer: &mut Printer<'_, W>,
        stack: &mut Vec<Task<Self>>,
    ) -> fmt::Result;
}

/// One level of a term, as [`Walk::node`] sees it.
pub(crate) enum Node<'a, T: Walk<'a>> {
    /// An integer that fits a word.
    Small(i64),
    /// A float.
    Float(f64),
    /// An atom, by name.
    Atom(std::borrow::Cow<'a, str>),
    /// `[]`.
    Nil,
    /// A list cell: its head and its tail.
    Cons(T, T),
    /// A tuple.
    Tuple(T::Elements),
    /// A binary.
    Binary(&'a [u8]),
    /// Anything else, which [`Walk::write_other`] writes.
    Other,
}

/// What the printer still has to write, innermost last.
pub(crate) enum Task<T> {
    Term(T),
    Text(&'static str),
    /// The rest of a list after an element: `,X...`, `|T` or nothing.
    ListRest(T),
}

impl<'w, W: Write> Printer<'w, W> {
    /// A printer into `out`, printing printable lists as strings if
    /// `strings` (as `~tp`; else as `~w`).
    pub(crate) fn new(out: &'w mut W, strings: bool) -> Printer<'w, W> {
        Printer { out, strings }
    }

    /// Writes `term`.
    pub(crate) fn print<'a, T: Walk<'a>>(&mut self, term: T) -> fmt::Result {
        // Allocated only for a container: most results are scalars.
        let mut stack = Vec::new();
        self.print_one(term, &mut stack)?;
        while let Some(task) = stack.pop() {
            match task {
                Task::Text(s) => self.out.write_str(s)?,
                Task::ListRest(rest) => match rest.node() {
                    Node::Nil => {}
                    Node::Cons(head, tail) => {
                        self.out.write_char(',')?;
                        stack.push(Task::ListRest(tail));
                        stack.push(Task::Term(head));
                    }
                    _ => {
                        self.out.write_char('|')?;
                        stack.push(Task::Term(rest));
                    }
                },
                Task::Term(t) => self.print_one(t, &mut stack)?,
            }
        }
        Ok(())
    }

    fn print_one<'a, T: Walk<'a>>(&mut self, t: T, stack: &mut Vec<Task<T>>) -> fmt::Result {
        match t.node() {
            Node::Small(v) => write_integer(self.out, v),
            Node::Float(v) => write_float(self.out, v),
            Node::Atom(name) => write_atom(self.out, &name),
            Node::Nil => self.out.write_str("[]"),
            Node::Cons(head, tail) => {
                if let Some(text) = printable_string(t).filter(|_| self.strings) {
                    return write_quoted(self.out, &text, '"');
                }
                self.out.write_char('[')?;
                stack.push(Task::Text("]"));
                stack.push(Task::ListRest(tail));
                stack.push(Task::Term(head));
                Ok(())
            }
            Node::Tuple(elements) => {
                self.out.write_char('{')?;
                stack.push(Task::Text("}"));
                // Pushed first to last, then turned around: the stack pops
                // the first element first.
                let from = stack.len();
                for (i, e) in elements.enumerate() {
                    if i > 0 {
                        stack.push(Task::Text(","));
                    }
                    stack.push(Task::Term(e));
                }
                stack[from..].reverse();
                Ok(())
            }
            Node::Binary(bytes) => {
                write_bits(self.out, bytes, bytes.len() as u64 * 8, self.strings)
            }
            Node::Other => t.write_other(self, stack),
        }
    }
}

/// The elements of a decoded tuple.
pub(crate) struct Elements<'a> {
    heaps: HeapSet<'a>,
    words: std::slice::Iter<'a, Word>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = TermRef<'a>;

    fn next(&mut self) -> Option<TermRef<'a>> {
        self.words.next().map(|&w| self.heaps.term(w))
    }
}

impl<'a> Walk<'a> for TermRef<'a> {
    type Elements = Elements<'a>;

    #[inline]
    fn node(self) -> Node<'a, Self> {
        match self.kind() {
            Kind::Small(v) => Node::Small(v),
            Kind::Float(v) => Node::Float(v),
            Kind::Atom(a) => Node::Atom(std::borrow::Cow::Borrowed(a.name())),
            Kind::Nil => Node::Nil,
            Kind::Cons(cons) => Node::Cons(cons.head(), cons.tail()),
            Kind::Tuple(tuple) => {
                Node::Tuple(Elements { heaps: self.heaps(), words: tuple.words().iter() })
            }
            Kind::Bits(bits) if bits.is_binary() => Node::Binary(bits.bytes()),
            Kind::Big(_)
            | Kind::Map(_)
            | Kind::Bits(_)
            | Kind::Pid(_)
            | Kind::Port(_)
            | Kind::Ref(_)
            | Kind::Export(_)
            | Kind::Closure(_) => Node::Other,
        }
    }

    fn write_other<W: Write>(
        self,
        printer: &mut Printer<'_, W>,
        stack: &mut Vec<Task<Self>>,
    ) -> fmt::Result {
        let out = &mut *printer.out;
        match self.kind() {
            Kind::Big(b) => write!(out, "{}", b.to_bigint()),
            Kind::Map(map) => {
                out.write_str("#{")?;
                stack.push(Task::Text("}"));
                for (i, (k, v)) in map.iter().enumerate().collect::<Vec<_>>().into_iter().rev() {
                    stack.push(Task::Term(v));
                    stack.push(Task::Text(" => "));
                    stack.push(Task::Term(k));
                    if i > 0 {
                        stack.push(Task::Text(","));
                    }
                }
                Ok(())
            }
            Kind::Bits(bits) => write_bits(out, bits.bytes(), bits.bit_len(), printer.strings),
            Kind::Pid(p) if is_local(p.node, p.creation) => {
                write!(out, "<0.{}.{}>", p.id, p.serial)
            }
            Kind::Pid(p) => {
                out.write_str("#Pid<")?;
                write_atom(out, p.node.name())?;
                write!(out, ".{}.{}.{}>", p.creation, p.id, p.serial)
            }
            Kind::Port(p) if is_local(p.node, p.creation) => write!(out, "#Port<0.{}>", p.id),
            Kind::Port(p) => {
                out.write_str("#Port<")?;
                write_atom(out, p.node.name())?;
                write!(out, ".{}.{}>", p.creation, p.id)
            }
            Kind::Ref(r) => {
                out.write_str("#Ref<")?;
                if is_local(r.node, r.creation) {
                    out.write_char('0')?;
                } else {
                    write_atom(out, r.node.name())?;
                    write!(out, ".{}", r.creation)?;
                }
                for id in r.ids().rev() {
                    write!(out, ".{id}")?;
                }
                out.write_char('>')
            }
            Kind::Export(e) => {
                out.write_str("fun ")?;
                write_atom(out, e.module.name())?;
                out.write_char(':')?;
                write_atom(out, e.function.name())?;
                write!(out, "/{}", e.arity)
            }
            Kind::Closure(c) => {
                write!(out, "#Fun<{}.{}.{}>", c.module().name(), c.old_index(), c.old_uniq())
            }
            // (`node` names these.)
            Kind::Small(_)
            | Kind::Float(_)
            | Kind::Atom(_)
            | Kind::Nil
            | Kind::Cons(_)
            | Kind::Tuple(_) => Ok(()),
        }
    }
}

fn is_local(node: Atom, creation: u32) -> bool {
    node == Atom::NONODE && creation == 0
}

/// Writes an atom as Erlang source, quoting it only when needed.
pub(crate) fn write_atom<W: Write>(out: &mut W, name: &str) -> fmt::Result {
    if atom_needs_quotes(name) { write_quoted(out, name, '\'') } else { out.write_str(name) }
}

/// Erlang's reserved words, which must be quoted to be atoms.
const RESERVED: &[&str] = &[
    "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
    "catch", "cond", "div", "else", "end", "fun", "if", "let", "maybe", "not", "of", "or",
    "orelse", "receive", "rem", "try", "when", "xor",
];

/// Does `name` have to be quoted to read back as an atom?
pub(crate) fn atom_needs_quotes(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if is_lower(c) => !chars.all(is_name_char) || RESERVED.contains(&name),
        _ => true,
    }
}

/// Lowercase letters that may start an unquoted atom (ASCII and Latin-1).
pub(crate) fn is_lower(c: char) -> bool {
    c.is_ascii_lowercase() || (('\u{df}'..='\u{ff}').contains(&c) && c != '\u{f7}')
}

/// Characters that may follow in an unquoted atom or a variable.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || c == '@'
        || (('\u{c0}'..='\u{ff}').contains(&c) && c != '\u{d7}' && c != '\u{f7}')
}

/// Writes `text` between `quote`s with Erlang escapes.
pub(crate) fn write_quoted<W: Write>(out: &mut W, text: &str, quote: char) -> fmt::Result {
    out.write_char(quote)?;
    for c in text.chars() {
        write_escaped_char(out, c, quote)?;
    }
    out.write_char(quote)
}

fn write_escaped_char<W: Write>(out: &mut W, c: char, quote: char) -> fmt::Result {
    match c {
        '\\' => out.write_str("\\\\"),
        c if c == quote => {
            out.write_char('\\')?;
            out.write_char(c)
        }
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        '\u{b}' => out.write_str("\\v"),
        '\u{8}' => out.write_str("\\b"),
        '\u{c}' => out.write_str("\\f"),
        '\u{1b}' => out.write_str("\\e"),
        '\u{7f}' => out.write_str("\\d"),
        // Other control characters, C0 and C1, as three octal digits.
        c if (c as u32) < 0x20 || (0x80..0xa0).contains(&(c as u32)) => {
            write!(out, "\\{:03o}", c as u32)
        }
        c => out.write_char(c),
    }
}

/// The characters of a list that `~tp` would print as a string.
fn printable_string<'a, T: Walk<'a>>(list: T) -> Option<String> {
    let mut text = String::new();
    let mut rest = list;
    loop {
        match rest.node() {
            Node::Cons(head, tail) => {
                let Node::Small(v) = head.node() else { return None };
                let c = u32::try_from(v).ok().and_then(char::from_u32)?;
                if !is_printable(c) {
                    return None;
                }
                text.push(c);
                rest = tail;
            }
            Node::Nil => return Some(text),
            _ => return None,
        }
    }
}

/// `io_lib:printable_list/1` for one character, with the default printable
/// range (`latin1`).
fn is_printable(c: char) -> bool {
    matches!(c as u32, 32..=126 | 0xa0..=0xff | 8..=13 | 27)
}

fn write_bits<W: Write>(out: &mut W, bytes: &[u8], bit_len: u64, text: bool) -> fmt::Result {
    let whole = (bit_len / 8) as usize;
    let rest = (bit_len % 8) as u32;
    if text && whole > 0 && rest == 0 {
        // As `~tp`: UTF-8 text first, then Latin-1 text, else bytes.
        let bytes = &bytes[..whole];
        if let Ok(text) = std::str::from_utf8(bytes)
            && text.chars().all(is_printable)
        {
            out.write_str("<<")?;
            write_quoted(out, text, '"')?;
            return out.write_str(if text.is_ascii() { ">>" } else { "/utf8>>" });
        }
        if bytes.iter().all(|&b| is_printable(char::from(b))) {
            let text: String = bytes.iter().map(|&b| char::from(b)).collect();
            out.write_str("<<")?;
            write_quoted(out, &text, '"')?;
            return out.write_str(">>");
        }
    }
    out.write_str("<<")?;
    for (i, b) in bytes[..whole].iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write!(out, "{b}")?;
    }
    if rest != 0 {
        if whole > 0 {
            out.write_char(',')?;
        }
        write!(out, "{}:{}", bytes[whole] >> (8 - rest), rest)?;
    }
    out.write_str(">>")
}

/// Writes `v` in decimal, as `{v}` would, without the formatting
/// machinery: integers are what filters print most.
fn write_integer(out: &mut impl Write, v: i64) -> fmt::Result {
    out.write_str(itoa::Buffer::new().format(v))
}

/// Writes a float in Erlang's shortest round-trip form (`io_lib`'s `~p`,
/// `float_to_list(F, [short])`), as ERTS does it: the shortest digits that
/// read back to the same double (Ryu), in fixed notation when that is no
/// longer than scientific notation, except where fixed notation would show
/// digits beyond a double's precision.
pub(crate) fn write_float<W: Write>(out: &mut W, value: f64) -> fmt::Result {
    if value == 0.0 {
        return out.write_str(if value.is_sign_negative() { "-0.0" } else { "0.0" });
    }
    if value < 0.0 {
        out.write_char('-')?;
    }
    let (digits, e) = shortest_digits(value.abs());
    let n = digits.len() as i64;
    // |value| = DIGITS * 10^e; `sci` is the exponent in d.ddd notation.
    let sci = e + n - 1;
    let (lo, hi) = match (n, sci) {
        (1, _) => (-4, 2),
        (_, s) if s >= 10 => (-(n + 2), 2),
        _ => (-(n + 2), 1),
    };
    let mantissa: u64 = digits.parse().unwrap_or(0);
    let imprecise = (mantissa >= 1 << 53 && e == 0)
        || (mantissa > (1u64 << 52) / 5 && e == 1)
        || (mantissa > (1u64 << 51) / 25 && e == 2);
    if (lo..=hi).contains(&e) && !imprecise {
        if e >= 0 {
            out.write_str(&digits)?;
            for _ in 0..e {
                out.write_char('0')?;
            }
            out.write_str(".0")
        } else if n + e > 0 {
            let (int, frac) = digits.split_at((n + e) as usize);
            write!(out, "{int}.{frac}")
        } else {
            out.write_str("0.")?;
            for _ in 0..-(n + e) {
                out.write_char('0')?;
            }
            out.write_str(&digits)
        }
    } else {
        let (first, rest) = digits.split_at(1);
        write!(out, "{first}.{}e{sci}", if rest.is_empty() { "0" } else { rest })
    }
}

/// The shortest round-trip decimal digits of a positive finite `value` (no
/// trailing zeros) and the power of ten they are scaled by.
fn shortest_digits(value: f64) -> (String, i64) {
    let mut buf = ryu::Buffer::new();
    // Ryu writes "d.ddde[-]x" for every value when asked for exponent form
    // through `format_finite`'s scientific branch; normalise both of its forms.
    let text = buf.format_finite(value);
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, x)) => (m, x.parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{int}{frac}");
    let mut e = exp - frac.len() as i64;
    let trimmed_front = digits.trim_start_matches('0');
    digits = trimmed_front.to_owned();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        e += 1;
    }
    (digits, e)
}

impl fmt::Display for Word {
    /// A word without its heap: immediates print as terms, pointers as `#Ptr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.as_small(), self.as_atom()) {
            (Some(v), _) => write!(f, "{v}"),
            (_, Some(a)) => write_atom(f, a.name()),
            _ if self.is_nil() => f.write_str("[]"),
            _ => write!(f, "{self:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_float(value: f64, expect: &str) {
        let mut s = String::new();
        write_float(&mut s, value).unwrap();
        assert_eq!(s, expect, "float {value:e}");
    }

    #[test]
    fn floats_print_in_erlang_short_form() {
        for (v, text) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (0.01, "0.01"),
            (0.0001, "0.0001"),
            (1.0e-5, "1.0e-5"),
            (100.0, "100.0"),
            (1000.0, "1.0e3"),
            (1.0e20, "1.0e20"),
            (2.5, "2.5"),
            (-1.5, "-1.5"),
            (1.23456, "1.23456"),
            (123456.789, "123456.789"),
            (1234.5, "1234.5"),
            (1500.0, "1.5e3"),
            (150.0, "150.0"),
            (999999.0, "999999.0"),
            (1.0e6, "1.0e6"),
            (123456789.0, "123456789.0"),
            (12345678900.0, "12345678900.0"),
            (123456789000.0, "1.23456789e11"),
            (900719925474099.0, "900719925474099.0"),
            (9007199254740990.0, "9007199254740990.0"),
            (9007199254740992.0, "9.007199254740992e15"),
            (9007199254741010.0, "9.00719925474101e15"),
            (12345678901234567890.0, "1.2345678901234567e19"),
            (0.0015, "0.0015"),
            (0.000123, "1.23e-4"),
            (0.0012345, "0.0012345"),
            (2.5e-7, "2.5e-7"),
            (5.0e-324, "5.0e-324"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (1.7976931348623157e308, "1.7976931348623157e308"),
            (0.3333333333333333, "0.3333333333333333"),
            (224043003990950.12, "224043003990950.12"),
        ] {
            check_float(v, text);
        }
    }

    #[test]
    fn atoms_quote_when_needed() {
        for (name, text) in [
            ("ok", "ok"),
            ("hello world", "'hello world'"),
            ("Caps", "'Caps'"),
            ("$1x", "'$1x'"),
            ("_x", "'_x'"),
            ("a@b_C9", "a@b_C9"),
            ("and", "'and'"),
            ("", "''"),
            ("it's", "'it\\'s'"),
            ("ñandú", "ñandú"),
            ("λ", "'λ'"),
        ] {
            let mut s = String::new();
            write_atom(&mut s, name).unwrap();
            assert_eq!(s, text);
        }
    }
}
