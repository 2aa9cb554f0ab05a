//! Terms as the ERTS C printer writes them (`%T` in `erts_printf`).
//!
//! ERTS builds match-spec error messages with this printer, and tools
//! compare those messages as text, so we reproduce it byte for byte. It
//! differs from `io_lib` in many small ways: reserved words are not quoted
//! but `@` forces quotes, floats are `printf("%.6e")`, strings escape only
//! `\n` and `"` and write Latin-1 characters as single raw bytes (while atoms
//! are UTF-8), maps have no spaces. The output is therefore bytes, not a
//! Rust string. Maps print in the order ERTS of the release keeps them
//! ([`erts_order`](super::erts_layout::erts_order)).

use super::TermRef;
use super::view::Kind;
use crate::Release;

/// Appends the `%T` text of `term` that ERTS of `release` writes to `out`,
/// stopping once `out` holds at least `limit` bytes (ERTS cuts its messages
/// anyway, and a huge term must not cost more than the bytes that are
/// kept).
pub(crate) fn write(out: &mut Vec<u8>, term: TermRef<'_>, limit: usize, release: Release) {
    enum Task<'a> {
        Term(TermRef<'a>),
        Bytes(&'static [u8]),
        ListRest(TermRef<'a>),
    }
    let mut stack = vec![Task::Term(term)];
    while let Some(task) = stack.pop() {
        if out.len() >= limit {
            return;
        }
        let t = match task {
            Task::Bytes(b) => {
                out.extend_from_slice(b);
                continue;
            }
            Task::ListRest(rest) => {
                match rest.kind() {
                    Kind::Nil => {}
                    Kind::Cons(cons) => {
                        out.push(b',');
                        stack.push(Task::ListRest(cons.tail()));
                        stack.push(Task::Term(cons.head()));
                    }
                    _ => {
                        out.push(b'|');
                        stack.push(Task::Term(rest));
                    }
                }
                continue;
            }
            Task::Term(t) => t,
        };
        match t.kind() {
            Kind::Small(v) => out.extend_from_slice(v.to_string().as_bytes()),
            Kind::Big(b) => out.extend_from_slice(b.to_bigint().to_string().as_bytes()),
            Kind::Float(f) => write_float(out, f),
            Kind::Atom(a) => write_atom(out, a.name()),
            Kind::Nil => out.extend_from_slice(b"[]"),
            Kind::Cons(cons) => {
                if let Some(bytes) = latin1_string(t) {
                    out.push(b'"');
                    for b in bytes {
                        match b {
                            b'\n' => out.extend_from_slice(b"\\n"),
                            b'"' => out.extend_from_slice(b"\\\""),
                            b => out.push(b),
                        }
                    }
                    out.push(b'"');
                } else {
                    out.push(b'[');
                    stack.push(Task::Bytes(b"]"));
                    stack.push(Task::ListRest(cons.tail()));
                    stack.push(Task::Term(cons.head()));
                }
            }
            Kind::Tuple(tuple) => {
                out.push(b'{');
                stack.push(Task::Bytes(b"}"));
                for (i, e) in tuple.iter().enumerate().rev() {
                    stack.push(Task::Term(e));
                    if i > 0 {
                        stack.push(Task::Bytes(b","));
                    }
                }
            }
            Kind::Map(map) => {
                out.extend_from_slice(b"#{");
                stack.push(Task::Bytes(b"}"));
                // ERTS prints a map in the order it stores it.
                let keys: Vec<TermRef<'_>> = map.keys().collect();
                let values: Vec<TermRef<'_>> = map.values().collect();
                let pairs: Vec<_> = super::erts_layout::erts_order(map, release)
                    .into_iter()
                    .map(|i| (keys[i], values[i]))
                    .collect();
                for (i, (k, v)) in pairs.into_iter().enumerate().rev() {
                    stack.push(Task::Term(v));
                    stack.push(Task::Bytes(b"=>"));
                    stack.push(Task::Term(k));
                    if i > 0 {
                        stack.push(Task::Bytes(b","));
                    }
                }
            }
            Kind::Bits(bits) => write_bits(out, bits.bytes(), bits.bit_len()),
            Kind::Pid(p) => out.extend_from_slice(format!("<0.{}.{}>", p.id, p.serial).as_bytes()),
            Kind::Port(p) => out.extend_from_slice(format!("#Port<0.{}>", p.id).as_bytes()),
            Kind::Ref(r) => {
                out.extend_from_slice(b"#Ref<0");
                for id in r.ids().rev() {
                    out.extend_from_slice(format!(".{id}").as_bytes());
                }
                out.push(b'>');
            }
            Kind::Export(e) => {
                out.extend_from_slice(b"fun ");
                write_atom(out, e.module.name());
                out.push(b':');
                write_atom(out, e.function.name());
                out.extend_from_slice(format!("/{}", e.arity).as_bytes());
            }
            Kind::Closure(c) => {
                let text =
                    format!("#Fun<{}.{}.{}>", c.module().name(), c.old_index(), c.old_uniq());
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// Appends `%T`'s spelling of an atom: quoted unless it is a lowercase
/// Latin-1 letter followed by Latin-1 letters, digits and `_`; escaped
/// either way.
pub(crate) fn write_atom(out: &mut Vec<u8>, name: &str) {
    let lower =
        |c: char| c.is_ascii_lowercase() || (('\u{df}'..='\u{ff}').contains(&c) && c != '\u{f7}');
    let upper =
        |c: char| c.is_ascii_uppercase() || (('\u{c0}'..='\u{de}').contains(&c) && c != '\u{d7}');
    let mut chars = name.chars();
    let bare = match chars.next() {
        Some(first) => {
            lower(first) && chars.all(|c| c.is_ascii_digit() || c == '_' || lower(c) || upper(c))
        }
        None => false,
    };
    if !bare {
        out.push(b'\'');
    }
    for c in name.chars() {
        match c {
            '\'' => out.extend_from_slice(b"\\'"),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{b}' => out.extend_from_slice(b"\\v"),
            c if (c as u32) < 0x20 || (0x80..0xa0).contains(&(c as u32)) => {
                out.extend_from_slice(format!("\\{:03o}", c as u32).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    if !bare {
        out.push(b'\'');
    }
}

/// `printf("%.6e")`: six decimals, an exponent with a sign and at least two digits.
fn write_float(out: &mut Vec<u8>, f: f64) {
    let text = format!("{f:.6e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    out.extend_from_slice(format!("{mantissa}e{sign}{:02}", exp.abs()).as_bytes());
}

/// The bytes of a proper, non-empty list whose elements are all tab,
/// newline, return, 32..=126 or 160..=255 (what `%T` prints as a string).
fn latin1_string(list: TermRef<'_>) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut items = list.list_items();
    for item in items.by_ref() {
        let b = item.word().as_small().and_then(|v| u8::try_from(v).ok())?;
        if !matches!(b, 9 | 10 | 13 | 32..=126 | 160..=255) {
            return None;
        }
        bytes.push(b);
    }
    (items.tail().is_nil() && !bytes.is_empty()).then_some(bytes)
}

fn write_bits(out: &mut Vec<u8>, bytes: &[u8], bit_len: u64) {
    let whole = (bit_len / 8) as usize;
    let rest = (bit_len % 8) as u32;
    if rest == 0 && whole > 0 && bytes[..whole].iter().all(|b| (32..=126).contains(b)) {
        out.extend_from_slice(b"<<\"");
        for &b in &bytes[..whole] {
            if b == b'"' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.extend_from_slice(b"\">>");
        return;
    }
    out.extend_from_slice(b"<<");
    let mut parts: Vec<String> = bytes[..whole].iter().map(u8::to_string).collect();
    if rest != 0 {
        parts.push(format!("{}:{}", bytes[whole] >> (8 - rest), rest));
    }
    out.extend_from_slice(parts.join(",").as_bytes());
    out.extend_from_slice(b">>");
}
