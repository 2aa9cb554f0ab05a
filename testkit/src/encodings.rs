//! Other encodings of a term: what `term_to_binary/1` does not write but
//! older nodes, other implementations and hand-made bytes do (Latin-1
//! atoms, `INTEGER_EXT` for small values, `LARGE_TUPLE_EXT` for small
//! tuples, `LIST_EXT` for strings), all decoding to the same term: what
//! the byte engine must read as the decoder does.

use matchspec::etf;

/// The tags the rewrites read.
mod tag {
    pub const SMALL_INTEGER_EXT: u8 = 97;
    pub const INTEGER_EXT: u8 = 98;
    pub const ATOM_EXT: u8 = 100;
    pub const SMALL_TUPLE_EXT: u8 = 104;
    pub const LARGE_TUPLE_EXT: u8 = 105;
    pub const NIL_EXT: u8 = 106;
    pub const STRING_EXT: u8 = 107;
    pub const LIST_EXT: u8 = 108;
    pub const SMALL_ATOM_UTF8_EXT: u8 = 119;
    pub const ATOM_UTF8_EXT: u8 = 118;
}

/// The rewrites [`variants`] makes, as bits of a style.
pub const ALL_STYLES: std::ops::Range<u8> = 1..16;

/// `bytes` and the other encodings of the same term: Latin-1 atoms,
/// `INTEGER_EXT` for small values, `LARGE_TUPLE_EXT`, `LIST_EXT` for
/// strings.
pub fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    variants_in(bytes, ALL_STYLES)
}

/// [`variants`] in the styles `styles` only (bit 1: `INTEGER_EXT`, 2:
/// Latin-1 atoms, 4: `LARGE_TUPLE_EXT`, 8: `LIST_EXT` strings).
pub fn variants_in(bytes: &[u8], styles: impl IntoIterator<Item = u8>) -> Vec<Vec<u8>> {
    let mut out = vec![bytes.to_vec()];
    // (Each rewrite measures every part again: quadratic in the length.)
    if bytes.len() > MAX_LEN || etf::term_len(bytes) != Ok(bytes.len()) {
        return out;
    }
    for style in styles {
        let mut rewritten = vec![etf::VERSION];
        if rewrite(bytes, 1, style, 0, &mut rewritten).is_some() {
            out.push(rewritten);
        }
    }
    out
}

/// The longest encoding [`variants`] rewrites; a longer one has none.
pub const MAX_LEN: usize = 2048;

/// How deep [`rewrite`] goes (it recurses): a deeper term has no variants.
const MAX_DEPTH: u32 = 64;

/// Writes the plain term at `pos`, `depth` terms deep, to `out` in `style`
/// (a bit set of rewrites); returns where it ends.
fn rewrite(bytes: &[u8], pos: usize, style: u8, depth: u32, out: &mut Vec<u8>) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let tag = bytes[pos];
    let end = pos + etf::term_len(&[&[etf::VERSION], &bytes[pos..]].concat()).ok()? - 1;
    match tag {
        tag::SMALL_INTEGER_EXT if style & 1 != 0 => {
            out.push(tag::INTEGER_EXT);
            out.extend(u32::from(bytes[pos + 1]).to_be_bytes());
        }
        tag::SMALL_ATOM_UTF8_EXT | tag::ATOM_UTF8_EXT if style & 2 != 0 => {
            let text = atom_text(bytes, pos)?;
            let name = std::str::from_utf8(text).ok()?;
            match name.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect::<Option<Vec<u8>>>()
            {
                Some(latin1) => {
                    out.push(tag::ATOM_EXT);
                    out.extend((latin1.len() as u16).to_be_bytes());
                    out.extend(latin1);
                }
                None => out.extend(&bytes[pos..end]),
            }
        }
        tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT => {
            let (arity, mut at) = match tag {
                tag::SMALL_TUPLE_EXT => (u32::from(bytes[pos + 1]), pos + 2),
                _ => (u32::from_be_bytes(bytes[pos + 1..pos + 5].try_into().ok()?), pos + 5),
            };
            if style & 4 != 0 {
                out.push(tag::LARGE_TUPLE_EXT);
                out.extend(arity.to_be_bytes());
            } else {
                out.extend(&bytes[pos..at]);
            }
            for _ in 0..arity {
                at = rewrite(bytes, at, style, depth + 1, out)?;
            }
        }
        tag::LIST_EXT => {
            let len = u32::from_be_bytes(bytes[pos + 1..pos + 5].try_into().ok()?);
            out.extend(&bytes[pos..pos + 5]);
            let mut at = pos + 5;
            for _ in 0..=len {
                at = rewrite(bytes, at, style, depth + 1, out)?;
            }
        }
        tag::STRING_EXT if style & 8 != 0 && bytes[pos + 1..pos + 3] != [0, 0] => {
            let text = &bytes[pos + 3..end];
            out.push(tag::LIST_EXT);
            out.extend((text.len() as u32).to_be_bytes());
            for &b in text {
                out.extend([tag::SMALL_INTEGER_EXT, b]);
            }
            out.push(tag::NIL_EXT);
        }
        _ => out.extend(&bytes[pos..end]),
    }
    Some(end)
}

/// The text of the UTF-8 atom whose tag is at `pos`.
fn atom_text(bytes: &[u8], pos: usize) -> Option<&[u8]> {
    let (len, from) = match bytes[pos] {
        tag::SMALL_ATOM_UTF8_EXT => (usize::from(bytes[pos + 1]), pos + 2),
        _ => (usize::from(u16::from_be_bytes([bytes[pos + 1], bytes[pos + 2]])), pos + 3),
    };
    bytes.get(from..from + len)
}
