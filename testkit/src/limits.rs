//! Text built to reach msc's limits, for the text targets (`parse_text`,
//! `fun2ms`): random bytes rarely make a 256-character name or a term
//! nested five thousand deep, so a few bytes choose each piece's size from
//! the values either side of a limit.
//!
//! The limits: names (variables and atoms) of 255 characters, counted in
//! characters, not bytes; nesting around the checker's
//! [`DEFAULT_MAX_NESTING`](matchspec::config::DEFAULT_MAX_NESTING); integers
//! around 64 bits and the small-integer edge; long strings and binaries.

use arbitrary::{Result, Unstructured};

/// The lengths a name is made at: either side of 255.
const NAME_LENGTHS: &[usize] = &[1, 2, 254, 255, 256, 257, 300];

/// The depths a nested term is made at: either side of the checker's
/// limit, and some way past it.
const DEPTHS: &[usize] = &[1, 2, 64, 1000, 4558, 4559, 4560, 6000];

/// Digit counts of integer literals: either side of 64 bits and beyond.
const DIGITS: &[usize] = &[1, 9, 18, 19, 20, 39, 40, 400];

/// A variable name at one of [`NAME_LENGTHS`], ASCII or not.
pub fn variable(u: &mut Unstructured<'_>) -> Result<String> {
    let len = *u.choose(NAME_LENGTHS)?;
    let fill = *u.choose(&['a', '_', '9', 'é', 'Ø'])?;
    Ok(std::iter::once('V').chain(std::iter::repeat_n(fill, len - 1)).collect())
}

/// An atom at one of [`NAME_LENGTHS`], quoted or bare.
pub fn atom(u: &mut Unstructured<'_>) -> Result<String> {
    let len = *u.choose(NAME_LENGTHS)?;
    let fill = *u.choose(&['a', 'é', ' ', '\''])?;
    let body: String = std::iter::repeat_n(fill, len).collect();
    Ok(match fill {
        'a' if u.arbitrary()? => body,
        '\'' => format!("'{}'", body.replace('\'', "\\'")),
        _ => format!("'{body}'"),
    })
}

/// An integer literal of one of [`DIGITS`] digits, perhaps negative or in
/// a base.
pub fn integer(u: &mut Unstructured<'_>) -> Result<String> {
    let digits = *u.choose(DIGITS)?;
    let sign = if u.arbitrary()? { "-" } else { "" };
    let body: String = std::iter::repeat_n('9', digits).collect();
    Ok(match u.int_in_range(0..=3)? {
        0 => format!("{sign}16#{}", body.replace('9', "f")),
        1 => format!("{sign}{}", "134217728"),
        _ => format!("{sign}{body}"),
    })
}

/// `inner` inside tuples, lists, maps or calls, at one of [`DEPTHS`].
pub fn nested(u: &mut Unstructured<'_>, inner: &str) -> Result<String> {
    let depth = *u.choose(DEPTHS)?;
    let (open, close) = *u.choose(&[
        ("{", "}"),
        ("[", "]"),
        ("#{k => ", "}"),
        ("{element, 1, {", "}}"),
        ("-(", ")"),
        ("(", ")"),
    ])?;
    let mut text = String::with_capacity(depth * (open.len() + close.len()) + inner.len());
    for _ in 0..depth {
        text.push_str(open);
    }
    text.push_str(inner);
    for _ in 0..depth {
        text.push_str(close);
    }
    Ok(text)
}

/// Any of the pieces above, or a long string or binary.
pub fn piece(u: &mut Unstructured<'_>, var: &str) -> Result<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 => variable(u)?,
        1 => atom(u)?,
        2 => integer(u)?,
        3 => nested(u, var)?,
        4 => format!("\"{}\"", "s".repeat(*u.choose(&[0, 255, 256, 70_000])?)),
        5 => format!("<<{}:{}>>", var, *u.choose(&[0, 1, 8, 64, 65, 1 << 24])?),
        _ => var.to_owned(),
    })
}

/// A fun with pieces at the limits in its head, guard and body.
pub fn fun_text(u: &mut Unstructured<'_>) -> Result<String> {
    let var = variable(u)?;
    let head = match u.int_in_range(0..=3)? {
        0 => format!("{{{var}}}"),
        1 => format!("[{var}]"),
        2 => format!("{{<<{var}:8>>}}"),
        _ => format!("{{{}, {var}}}", piece(u, &var)?),
    };
    let guard =
        if u.arbitrary()? { format!(" when {} > 1", piece(u, &var)?) } else { String::new() };
    Ok(format!("fun({head}){guard} -> {} end", piece(u, &var)?))
}

/// Dot-terminated terms made of pieces at the limits (a variable in a
/// term is an error too).
pub fn terms_text(u: &mut Unstructured<'_>) -> Result<String> {
    let mut text = String::new();
    for _ in 0..u.int_in_range(1..=3)? {
        let inner = if u.arbitrary()? { atom(u)? } else { integer(u)? };
        text.push_str(&piece(u, &inner)?);
        text.push_str(".\n");
    }
    Ok(text)
}
