//! The plain subset of the external term format, scanned without building
//! anything: where a term ends, for streams of terms, and what the wire
//! program (`wire`) reads.
//!
//! A term is *plain* if it is made only of integers (`SMALL_INTEGER_EXT`,
//! `INTEGER_EXT`, and bignums, which may decode to small integers), finite
//! `NEW_FLOAT_EXT` floats, atoms, `[]`, `STRING_EXT`, `LIST_EXT` with at
//! least one element, tuples, binaries and bitstrings, pids, and maps of
//! at most 32 integer, ASCII atom or binary keys, and every one of them
//! decodes: lengths within the input, atoms of valid text and at most 255
//! characters, no two keys of a map equal. A plain term decodes without
//! error, each of its parts alone too, so the byte engine (`encoded`)
//! reads it knowing what decoding gives; where an encoding is not the only
//! one of its term (a bignum of a small value, a Latin-1 atom), its
//! readings compare values, or leave the op to the decoded term. Anything
//! else (ports, references, funs, compressed terms, an empty `LIST_EXT`,
//! which decodes to its tail) is left to the decoder, which then also
//! reports what is wrong with it.

use super::{limit, tag};
use crate::term::MAX_ATOM_CHARS;

/// The length of the plain term that starts `bytes` (version byte
/// included), or `None` if it is not plain or does not decode.
pub(crate) fn plain_len(bytes: &[u8]) -> Option<usize> {
    if *bytes.first()? != super::VERSION {
        return None;
    }
    valid_end(bytes, 1, 0)
}

/// Where the plain term that starts `bytes` (version byte first) ends,
/// walking its structure without checking what else makes it decode
/// (atom texts, float values, map keys): [`plain_len`] for a term that
/// decodes; for one that does not, a length or `None`.
pub(crate) fn plain_extent(bytes: &[u8]) -> Option<usize> {
    // The usual input, a small tuple mostly of scalars: a window at a time,
    // as the checking scan goes.
    if let Some(arity) = small_tuple_arity(bytes) {
        return small_tuple_walk::<false>(bytes, std::iter::repeat_with(|| None).take(arity));
    }
    if *bytes.first()? != super::VERSION {
        return None;
    }
    end_of::<false>(bytes, 1, 0)
}

/// [`plain_len`], also writing where each element of the term starts to
/// `elements` if it is a tuple (else leaving it empty; on `None`, anything): what the wire
/// program reads the input's elements by, without skipping to them.
#[inline(always)]
pub(crate) fn plain_len_indexed(bytes: &[u8], elements: &mut Vec<u32>) -> Option<usize> {
    // The usual input, a small tuple, inline; anything else out of line.
    let Some(arity) = small_tuple_arity(bytes) else {
        return other_len_indexed(bytes, elements);
    };
    // A stream's tuples mostly have the arity of the one before, and then
    // nothing is resized; every slot is written.
    if elements.len() != arity {
        elements.resize(arity, 0);
    }
    small_tuple_len(bytes, elements)
}

/// The arity of the small tuple `bytes` starts with (version byte first),
/// if it is one and short enough to be indexed in `u32` offsets.
#[inline(always)]
pub(crate) fn small_tuple_arity(bytes: &[u8]) -> Option<usize> {
    match *bytes {
        [super::VERSION, tag::SMALL_TUPLE_EXT, arity, ..] if bytes.len() <= u32::MAX as usize => {
            Some(usize::from(arity))
        }
        _ => None,
    }
}

/// The length of the plain small tuple `bytes` starts with, whose arity
/// ([`small_tuple_arity`]) is `elements.len()`, writing where each of
/// its elements starts to `elements`.
#[inline(always)]
pub(crate) fn small_tuple_len(bytes: &[u8], elements: &mut [u32]) -> Option<usize> {
    small_tuple_walk::<true>(bytes, elements.iter_mut().map(Some))
}

/// The end of the small tuple `bytes` starts with, one element per slot
/// of `starts` (writing where each starts to those that are `Some`):
/// checked as [`valid_end`] checks if `CHECK`, else its structure only
/// ([`plain_extent`]).
#[inline(always)]
fn small_tuple_walk<'a, const CHECK: bool>(
    bytes: &[u8],
    starts: impl Iterator<Item = Option<&'a mut u32>>,
) -> Option<usize> {
    // Walked as what is left of the term, so that one length check covers
    // a window.
    let mut rest = bytes.get(3..)?;
    for start in starts {
        if let Some(start) = start {
            *start = (bytes.len() - rest.len()) as u32;
        }
        rest = match rest.first_chunk::<WINDOW>().and_then(scalar_len) {
            // Within the window: no check.
            Some(len) => &rest[len..],
            None if CHECK => rest.get(other_end(rest, 0)?..)?,
            None => rest.get(end_of::<false>(rest, 0, 0)?..)?,
        };
    }
    Some(bytes.len() - rest.len())
}

/// [`plain_len_indexed`] of anything but a small tuple.
#[inline(never)]
fn other_len_indexed(bytes: &[u8], elements: &mut Vec<u32>) -> Option<usize> {
    if *bytes.first()? != super::VERSION || bytes.len() > u32::MAX as usize {
        return None;
    }
    // (A small tuple here is one cut short: the scan finds where.)
    let (arity, mut pos) = match *bytes.get(1)? {
        tag::LARGE_TUPLE_EXT => (u32_at(bytes, 2)?, 6),
        _ => {
            elements.clear();
            return valid_end(bytes, 1, 0);
        }
    };
    // Every element takes a byte at least: a larger arity is not plain,
    // and is refused before it sizes anything.
    if arity as usize > bytes.len() {
        return None;
    }
    elements.resize(arity as usize, 0);
    for start in elements.iter_mut() {
        *start = pos as u32;
        pos = element_end(bytes, pos)?;
    }
    (pos <= bytes.len()).then_some(pos)
}

/// The encoded size of the plain terms whose size their tag fixes, by tag
/// (0: any other).
pub const FIXED_SIZE: [u8; 256] = {
    let mut sizes = [0; 256];
    sizes[tag::SMALL_INTEGER_EXT as usize] = 2;
    sizes[tag::INTEGER_EXT as usize] = 5;
    sizes[tag::NIL_EXT as usize] = 1;
    sizes
};

/// The high bit of each of the first `n` bytes of a little-endian word,
/// by `n`: what a name of `n` bytes must not have set to be ASCII.
pub const HIGH_BITS: [u64; 9] = {
    let mut masks = [0; 9];
    let mut n = 1;
    while n < 9 {
        masks[n] = masks[n - 1] | 0x80 << (8 * (n - 1));
        n += 1;
    }
    masks
};

/// How many bytes [`scalar_len`] reads: a tag, a length and 8 bytes of
/// name. No scalar it measures is longer.
pub const WINDOW: usize = 10;

/// The length of the small integer or short ASCII atom (the scalars events
/// are mostly made of) that starts `window`, or `None` for anything else.
#[inline(always)]
fn scalar_len(&[tag, len, ref name @ ..]: &[u8; WINDOW]) -> Option<usize> {
    // One branch for both integer sizes: which one comes is data. (The
    // mask tells the compiler what the table holds: less than a window.)
    let size = FIXED_SIZE[usize::from(tag)] & 7;
    if size != 0 {
        return Some(usize::from(size));
    }
    if tag != tag::SMALL_ATOM_UTF8_EXT || len > 8 {
        return None;
    }
    let len = usize::from(len);
    (u64::from_le_bytes(*name) & HIGH_BITS[len] == 0).then_some(2 + len)
}

/// [`valid_end`] of one element, the scalars events are mostly made of
/// read inline (a term's end past the input is caught by the caller).
#[inline(always)]
fn element_end(bytes: &[u8], pos: usize) -> Option<usize> {
    match bytes.get(pos..).and_then(|rest| scalar_len(rest.first_chunk()?)) {
        Some(len) => Some(pos + len),
        None => other_end(bytes, pos),
    }
}

/// [`element_end`] of an element [`scalar_len`] did not read from a window
/// (an integer without a window's bytes after it is still read inline).
#[inline(always)]
fn other_end(bytes: &[u8], pos: usize) -> Option<usize> {
    match FIXED_SIZE[usize::from(*bytes.get(pos)?)] {
        0 => any_end(bytes, pos),
        size => Some(pos + usize::from(size)),
    }
}

/// [`valid_end`] out of line: the elements [`element_end`] does not read
/// itself.
#[inline(never)]
fn any_end(bytes: &[u8], pos: usize) -> Option<usize> {
    valid_end(bytes, pos, 0)
}

/// Where the top-level elements of a plain term start, found while
/// measuring it ([`term_len_indexed`](super::term_len_indexed)): a stream
/// reader that must find where each term ends finds this on the way, and
/// the wire program (`WireProgram::decide_indexed`, a layer above) then
/// reads the term without scanning it again.
///
/// It holds to the bytes it was found on (the same address and length):
/// given other bytes, the wire program scans them itself. Only bytes
/// changed in place in between would be read with a stale index.
///
/// ```
/// use matchspec::etf::{self, PlainIndex};
/// use matchspec::wire::Verdict;
/// use matchspec::{CompiledSpec, Config, Scratch, spec::Kind, term::Term};
///
/// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default())?;
/// let mut stream = etf::encode(Term::parse("{7, no}")?.as_ref())?;
/// stream.extend(etf::encode(Term::parse("{8, ok}")?.as_ref())?);
/// let (mut index, mut scratch) = (PlainIndex::new(), Scratch::new());
/// let len = index.measure(&stream).expect("a plain term");
/// let first = &stream[..len];
/// let wire = spec.wire().expect("a table spec");
/// assert_eq!(wire.decide_indexed(first, &index, &mut scratch), Verdict::NoMatch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct PlainIndex {
    elements: Vec<u32>,
    /// The address and length of the term it indexes (`len` 0: none).
    address: usize,
    len: usize,
}

impl PlainIndex {
    /// An index of nothing yet.
    pub fn new() -> PlainIndex {
        PlainIndex::default()
    }

    /// Measures and indexes the plain term at the start of `bytes` (more
    /// may follow): its length, or `None` (indexing nothing) if it is not
    /// plain, or not whole: then [`term_len_indexed`](super::term_len_indexed)
    /// says why.
    pub fn measure(&mut self, bytes: &[u8]) -> Option<usize> {
        self.len = 0;
        let len = plain_len_indexed(bytes, &mut self.elements)?;
        (self.address, self.len) = (bytes.as_ptr() as usize, len);
        Some(len)
    }

    /// Forgets what it indexed: for a reader about to hand out a term it
    /// did not measure, where the bytes it measured may since have been
    /// replaced by others of the same length at the same address.
    ///
    /// ```
    /// use matchspec::etf::{self, PlainIndex};
    /// use matchspec::wire::Verdict;
    /// use matchspec::{CompiledSpec, Config, Scratch, spec::Kind, term::Term};
    ///
    /// let spec = CompiledSpec::compile("[{{e, '$1', y}, [], ['$1']}]", Kind::Table, &Config::default())?;
    /// let wire = spec.wire().expect("a table spec");
    /// let mut buffer = etf::encode(Term::parse("{e, 1, xyzw}")?.as_ref())?;
    /// let mut index = PlainIndex::new();
    /// index.measure(&buffer);
    /// // Other bytes of the same length, read into the same place.
    /// buffer.copy_from_slice(&etf::encode(Term::parse("{e, 300, y}")?.as_ref())?);
    /// index.clear();
    /// let verdict = wire.decide_indexed(&buffer, &index, &mut Scratch::new());
    /// assert_eq!(verdict, Verdict::Match { result: 6 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Remembers `elements` as the index of `term`, a plain term a scan
    /// indexed (for a later run on the same bytes).
    pub(crate) fn remember(&mut self, term: &[u8], elements: &[u32]) {
        self.elements.clear();
        self.elements.extend_from_slice(elements);
        (self.address, self.len) = (term.as_ptr() as usize, term.len());
    }

    /// The elements of `term`, if this indexes exactly those bytes.
    pub(crate) fn elements_of(&self, term: &[u8]) -> Option<&[u32]> {
        (self.len != 0 && term.len() == self.len && term.as_ptr() as usize == self.address)
            .then_some(&self.elements)
    }
}

/// The end of the plain term at `pos`, if it is one and decodes; `maps`
/// is how many maps it is inside.
#[inline(always)]
fn valid_end(bytes: &[u8], pos: usize, maps: u32) -> Option<usize> {
    end_of::<true>(bytes, pos, maps)
}

/// [`valid_end`], checking what makes a term plain only if `CHECK`:
/// without, the end of a part of a term checked before (the lengths are
/// still read within the bytes).
#[inline(always)]
fn end_of<const CHECK: bool>(bytes: &[u8], mut pos: usize, maps: u32) -> Option<usize> {
    // Terms still to read: one per element of the containers opened.
    let mut pending: u64 = 1;
    while pending > 0 {
        pending -= 1;
        let tag = *bytes.get(pos)?;
        pos += 1;
        match tag {
            tag::SMALL_INTEGER_EXT => pos += 1,
            tag::INTEGER_EXT => pos += 4,
            tag::NEW_FLOAT_EXT => {
                let bits = u64::from_be_bytes(bytes.get(pos..pos + 8)?.try_into().ok()?);
                if CHECK && !f64::from_bits(bits).is_finite() {
                    return None;
                }
                pos += 8;
            }
            tag::SMALL_ATOM_UTF8_EXT => {
                let len = usize::from(*bytes.get(pos)?);
                let text = bytes.get(pos + 1..pos + 1 + len)?;
                // ASCII is valid UTF-8 of one character a byte.
                if CHECK && !text.is_ascii() {
                    valid_utf8_atom(text)?;
                }
                pos += 1 + len;
            }
            tag::ATOM_UTF8_EXT => {
                let len = usize::from(u16_at(bytes, pos)?);
                let text = bytes.get(pos + 2..pos + 2 + len)?;
                if CHECK
                    && (len > limit::ATOM_UTF8_BYTES || !(len <= MAX_ATOM_CHARS && text.is_ascii()))
                {
                    valid_utf8_atom(text)?;
                }
                pos += 2 + len;
            }
            tag::SMALL_ATOM_EXT => pos += 1 + usize::from(*bytes.get(pos)?),
            tag::ATOM_EXT => {
                let len = usize::from(u16_at(bytes, pos)?);
                if len > limit::ATOM_LATIN1_BYTES {
                    return None;
                }
                pos += 2 + len;
            }
            tag::NIL_EXT => {}
            tag::STRING_EXT => pos += 2 + usize::from(u16_at(bytes, pos)?),
            tag::LIST_EXT => {
                let len = u32_at(bytes, pos)?;
                if len == 0 {
                    return None;
                }
                pending += u64::from(len) + 1;
                pos += 4;
            }
            tag::SMALL_TUPLE_EXT => {
                pending += u64::from(*bytes.get(pos)?);
                pos += 1;
            }
            tag::LARGE_TUPLE_EXT => {
                pending += u64::from(u32_at(bytes, pos)?);
                pos += 4;
            }
            tag::BINARY_EXT => pos += 4 + u32_at(bytes, pos)? as usize,
            tag::BIT_BINARY_EXT => {
                let len = u32_at(bytes, pos)? as usize;
                let bits = *bytes.get(pos + 4)?;
                if len == 0 || bits == 0 || bits > 8 {
                    return None;
                }
                pos += 5 + len;
            }
            tag::SMALL_BIG_EXT => pos += 2 + usize::from(*bytes.get(pos)?),
            tag::LARGE_BIG_EXT => {
                let len = u32_at(bytes, pos)?;
                if u64::from(len) > limit::BIG_BYTES {
                    return None;
                }
                pos += 5 + len as usize;
            }
            tag::NEW_PID_EXT | tag::PID_EXT => pos = valid_pid(bytes, pos - 1)?,
            tag::MAP_EXT if CHECK => pos = valid_map(bytes, pos - 1, maps)?,
            tag::MAP_EXT => {
                pending += 2 * u64::from(u32_at(bytes, pos)?);
                pos += 4;
            }
            _ => return None,
        }
        // No check of `pos` here: reading the next tag past the end fails,
        // and every tag moves on a byte at least, so however much is
        // pending the loop stops within the input's length.
    }
    (pos <= bytes.len()).then_some(pos)
}

/// Most keys of a plain map.
const MAP_KEYS: usize = 32;

/// Most maps a plain term nests (each costs the scan a call).
const MAP_DEPTH: u32 = 8;

/// A plain map's key: an integer, an atom of ASCII text (which both atom
/// encodings write alike) or a binary, so that equal keys are seen to be
/// equal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MapKey<'a> {
    Integer(i64),
    Atom(&'a [u8]),
    Binary(&'a [u8]),
}

/// The plain map key at `pos`, and where it ends.
#[inline]
fn map_key(bytes: &[u8], pos: usize) -> Option<(MapKey<'_>, usize)> {
    Some(match *bytes.get(pos)? {
        tag::SMALL_INTEGER_EXT => (MapKey::Integer(i64::from(*bytes.get(pos + 1)?)), pos + 2),
        tag::INTEGER_EXT => (MapKey::Integer(i64::from(u32_at(bytes, pos + 1)? as i32)), pos + 5),
        tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT => {
            let (len, text) = atom_at(bytes, pos)?;
            if !text.is_ascii() {
                return None;
            }
            (MapKey::Atom(text), pos + 1 + len)
        }
        tag::BINARY_EXT => {
            let len = u32_at(bytes, pos + 1)? as usize;
            (MapKey::Binary(bytes.get(pos + 5..pos + 5 + len)?), pos + 5 + len)
        }
        _ => return None,
    })
}

/// The end of the map whose tag is at `at`, if it is plain: at most
/// [`MAP_KEYS`] keys, each an integer, an ASCII atom or a binary, no two
/// equal (the decoder rejects duplicate keys), values plain.
fn valid_map(bytes: &[u8], at: usize, maps: u32) -> Option<usize> {
    if maps >= MAP_DEPTH {
        return None;
    }
    let size = u32_at(bytes, at + 1)? as usize;
    if size > MAP_KEYS {
        return None;
    }
    // Where each key starts: read again to compare (a few bytes each),
    // where keeping the keys themselves would clear far more per map.
    let mut starts = [0u32; MAP_KEYS];
    let mut pos = at + 5;
    for i in 0..size {
        let previous = &starts[..i];
        let end = match short_atom_key(bytes, pos) {
            // The usual key: compared as a word with the others like it
            // (no other key can be equal to it).
            Some((word, end)) => {
                let same = |&start: &u32| short_atom_key(bytes, start as usize).map(|(w, _)| w);
                if previous.iter().any(|start| same(start) == Some(word)) {
                    return None;
                }
                end
            }
            None => {
                let (key, end) = map_key(bytes, pos)?;
                for &start in previous {
                    if map_key(bytes, start as usize)?.0 == key {
                        return None;
                    }
                }
                end
            }
        };
        starts[i] = u32::try_from(pos).ok()?;
        pos = match bytes.get(end..).and_then(|rest| scalar_len(rest.first_chunk()?)) {
            Some(len) => end + len,
            None => valid_end(bytes, end, maps + 1)?,
        };
    }
    Some(pos)
}

/// The map key at `pos` if it is an atom of 1 to 8 ASCII bytes (in any
/// encoding): its text as a little-endian word, the high bit of its last
/// byte set (equal words, equal atoms), and where it ends. `None`: any
/// other key, or one too near the end of the bytes to read a word.
#[inline(always)]
fn short_atom_key(bytes: &[u8], pos: usize) -> Option<(u64, usize)> {
    let (text, len) = match *bytes.get(pos)? {
        tag::SMALL_ATOM_UTF8_EXT | tag::SMALL_ATOM_EXT => {
            (pos + 2, usize::from(*bytes.get(pos + 1)?))
        }
        tag::ATOM_UTF8_EXT | tag::ATOM_EXT => (pos + 3, usize::from(u16_at(bytes, pos + 1)?)),
        _ => return None,
    };
    if len == 0 || len > 8 {
        return None;
    }
    let word = u64::from_le_bytes(*bytes.get(text..)?.first_chunk::<8>()?);
    let word = if len == 8 { word } else { word & ((1 << (8 * len)) - 1) };
    if word & HIGH_BITS[len] != 0 {
        return None;
    }
    Some((word | 0x80 << (8 * (len - 1)), text + len))
}

/// Checks a UTF-8 atom's text as the decoder does: valid UTF-8 of at most
/// [`MAX_ATOM_CHARS`] characters (in at most 4 bytes each).
fn valid_utf8_atom(text: &[u8]) -> Option<()> {
    if text.len() > limit::ATOM_UTF8_BYTES {
        return None;
    }
    let name = std::str::from_utf8(text).ok()?;
    (name.len() <= MAX_ATOM_CHARS || name.chars().count() <= MAX_ATOM_CHARS).then_some(())
}

/// The end of the plain term at `pos` of a term [`plain_len`] accepted
/// (checked again on the way: the scan is the one [`plain_len`] makes).
pub(crate) fn skip(bytes: &[u8], pos: usize) -> Option<usize> {
    valid_end(bytes, pos, 0)
}

/// The end of the part at `pos` of a term a scan found plain already: its
/// lengths read (within the bytes), nothing checked again.
#[inline]
pub(crate) fn skip_plain(bytes: &[u8], pos: usize) -> Option<usize> {
    end_of::<false>(bytes, pos, 0)
}

/// The end of the pid whose tag is at `at`, if it decodes: its node an
/// atom, a creation of the old format at most 3, and a pid of this node
/// (`nonode@nohost`, creation 0) within 28 bits.
fn valid_pid(bytes: &[u8], at: usize) -> Option<usize> {
    let node_at = at + 1;
    let (node_len, node) = atom_at(bytes, node_at)?;
    if is_utf8_tag(bytes[node_at]) {
        std::str::from_utf8(node).ok()?;
    }
    let id_at = node_at + 1 + node_len;
    let id = u32_at(bytes, id_at)?;
    let (creation, end) = match bytes[at] {
        tag::PID_EXT => (u32::from(*bytes.get(id_at + 8)?), id_at + 9),
        _ => (u32_at(bytes, id_at + 8)?, id_at + 12),
    };
    if bytes[at] == tag::PID_EXT && creation > limit::TINY_CREATION {
        return None;
    }
    if node == b"nonode@nohost" && creation == 0 && id >> limit::LOCAL_PID_NUMBER_BITS != 0 {
        return None;
    }
    Some(end)
}

/// Is `tag` one of the UTF-8 atom tags?
pub(crate) fn is_utf8_tag(tag: u8) -> bool {
    matches!(tag, tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT)
}

/// The atom whose tag is at `at`: the bytes after its tag (length field
/// and text) and its text.
pub(crate) fn atom_at(bytes: &[u8], at: usize) -> Option<(usize, &[u8])> {
    let (field, len) = match *bytes.get(at)? {
        tag::ATOM_EXT | tag::ATOM_UTF8_EXT => (2, usize::from(u16_at(bytes, at + 1)?)),
        tag::SMALL_ATOM_EXT | tag::SMALL_ATOM_UTF8_EXT => (1, usize::from(*bytes.get(at + 1)?)),
        _ => return None,
    };
    let most =
        if is_utf8_tag(bytes[at]) { limit::ATOM_UTF8_BYTES } else { limit::ATOM_LATIN1_BYTES };
    if len > most {
        return None;
    }
    let text = bytes.get(at + 1 + field..at + 1 + field + len)?;
    Some((field + len, text))
}

pub(crate) fn u16_at(bytes: &[u8], pos: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(pos..pos + 2)?.try_into().ok()?))
}

pub(crate) fn u32_at(bytes: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(pos..pos + 4)?.try_into().ok()?))
}
