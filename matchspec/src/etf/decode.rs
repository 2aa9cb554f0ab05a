//! Decoding: bytes to terms, with an explicit stack.
//!
//! The decoder reads one tag at a time. Leaves (numbers, atoms, binaries,
//! identifiers) are built in the heap at once; a container with elements
//! pushes a [`Frame`] and its elements' words collect on a value stack until
//! the last one is in, when the container is built from them. So the call
//! stack stays flat however deep the term, and every allocation grows with
//! bytes actually read.

use flate2::{Decompress, FlushDecompress, Status};

use super::error::{DecodeError, DecodeErrorKind as E};
use super::scan::PlainIndex;
use super::{MAX_UNCOMPRESSED_SIZE, VERSION, is_local_node, limit, tag};
use crate::term::{Atom, AtomError, ClosureParts, Heap, HeapSet, Term, Word};

/// Decodes one term from the external term format into a fresh [`Term`].
///
/// The input must be exactly one term: a version byte 131, then either the
/// term or a compressed term (tag 80), and nothing after it.
///
/// ```
/// use matchspec::etf;
/// let t = etf::decode(&[131, 104, 2, 119, 2, b'o', b'k', 97, 42]).unwrap();
/// assert_eq!(t.to_string(), "{ok,42}");
/// ```
pub fn decode(bytes: &[u8]) -> std::result::Result<Term, DecodeError> {
    let mut heap = Heap::new();
    let root = decode_into(bytes, &mut heap)?;
    Ok(Term::from_parts(heap, root))
}

/// Decodes one term into `heap` and returns its word there.
///
/// On error the heap is left as it was.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Heap;
/// let mut heap = Heap::new();
/// let a = etf::decode_into(&[131, 97, 1], &mut heap).unwrap();
/// let b = etf::decode_into(&[131, 107, 0, 2, b'h', b'i'], &mut heap).unwrap();
/// assert_eq!(heap.view(a).to_string(), "1");
/// assert_eq!(heap.view(b).to_string(), "\"hi\"");
/// ```
pub fn decode_into(bytes: &[u8], heap: &mut Heap) -> std::result::Result<Word, DecodeError> {
    undone_on_error(heap, |heap| decode_versioned(bytes, heap))
}

/// Decodes the term that starts at byte `at` of `bytes` (a part of a
/// larger term: no version byte there) into `heap` and returns its word;
/// error offsets count from the start of `bytes`. What a wire program's
/// match hands over: only the part of the input that is the result.
///
/// On error the heap is left as it was.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Heap;
/// let mut heap = Heap::new();
/// let pair = [131, 104, 2, 119, 2, b'o', b'k', 97, 42];
/// let second = etf::decode_subterm(&pair, 7, &mut heap).unwrap();
/// assert_eq!(heap.view(second).to_string(), "42");
/// ```
pub fn decode_subterm(
    bytes: &[u8],
    at: usize,
    heap: &mut Heap,
) -> std::result::Result<Word, DecodeError> {
    // A wire match's result is often an integer: no decoder for it.
    let small = match *bytes.get(at..).unwrap_or_default() {
        [tag::SMALL_INTEGER_EXT, n, ..] => Word::small(i64::from(n)),
        [tag::INTEGER_EXT, a, b, c, d, ..] => {
            Word::small(i64::from(i32::from_be_bytes([a, b, c, d])))
        }
        _ => None,
    };
    if let Some(word) = small {
        return Ok(word);
    }
    undone_on_error(heap, |heap| Decoder { input: bytes, pos: at, origin: 0, heap }.term())
}

/// Decodes the term at the start of `bytes` into `heap` and returns its
/// word and the number of bytes it took: for streams of terms written one
/// after another. Bytes after the term are left alone.
///
/// On error the heap is left as it was.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Heap;
/// let mut heap = Heap::new();
/// let stream = [131, 97, 1, 131, 100, 0, 1, b'a'];
/// let (first, used) = etf::decode_prefix(&stream, &mut heap).unwrap();
/// assert_eq!((heap.view(first).to_string(), used), ("1".to_owned(), 3));
/// let (second, _) = etf::decode_prefix(&stream[used..], &mut heap).unwrap();
/// assert_eq!(heap.view(second).to_string(), "a");
/// ```
pub fn decode_prefix(
    bytes: &[u8],
    heap: &mut Heap,
) -> std::result::Result<(Word, usize), DecodeError> {
    undone_on_error(heap, |heap| decode_versioned_prefix(bytes, heap))
}

/// Runs `decode` on `heap`, dropping what it built if it fails: a caller's
/// heap is left as it was by a term that does not decode.
fn undone_on_error<T>(
    heap: &mut Heap,
    decode: impl FnOnce(&mut Heap) -> std::result::Result<T, DecodeError>,
) -> std::result::Result<T, DecodeError> {
    let mark = heap.len();
    let result = decode(heap);
    if result.is_err() {
        heap.truncate(mark);
    }
    result
}

/// The number of bytes the term at the start of `bytes` takes, or why it
/// does not decode: where each term of a stream of terms ends. A term of
/// plain data (numbers, atoms, lists, tuples, binaries, pids) is measured
/// without building it; any other is decoded into a heap that is then
/// dropped.
///
/// ```
/// use matchspec::etf;
/// assert_eq!(etf::term_len(&[131, 97, 1, 131, 106]), Ok(3));
/// assert!(etf::term_len(&[131, 104, 2, 97]).is_err());
/// ```
pub fn term_len(bytes: &[u8]) -> std::result::Result<usize, DecodeError> {
    match super::scan::plain_len(bytes) {
        Some(len) => Ok(len),
        None => decode_prefix(bytes, &mut Heap::new()).map(|(_, len)| len),
    }
}

/// Where the term at the start of `bytes` ends, if it is plain data and
/// whole, found from its structure alone: what [`term_len`] gives for a
/// term that decodes, without checking what else makes it decode (atom
/// texts, float values, map keys). A term that does not decode may get a
/// length here; `None` says only that this walk cannot tell (not plain,
/// or not whole), and [`term_len`] then measures it (or says why not).
///
/// For a thread that splits a stream of terms into runs for readers that
/// check each term again: it finds the same ends at a fraction of the
/// cost of checking.
///
/// ```
/// use matchspec::etf;
/// assert_eq!(etf::term_extent(&[131, 97, 1, 131, 106]), Some(3));
/// // A float that is not finite does not decode, but ends all the same.
/// let nan = [131, 70, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0];
/// assert_eq!(etf::term_extent(&nan), Some(10));
/// assert!(etf::term_len(&nan).is_err());
/// assert_eq!(etf::term_extent(&[131, 104, 2, 97]), None);
/// ```
pub fn term_extent(bytes: &[u8]) -> Option<usize> {
    super::scan::plain_extent(bytes)
}

/// [`term_len`], indexing a plain term's elements in `index` on the way
/// (and clearing it for any other): what a stream reader measures each
/// term with, so that the wire program need not scan it again.
///
/// ```
/// use matchspec::etf::{self, PlainIndex};
/// let mut index = PlainIndex::new();
/// assert_eq!(etf::term_len_indexed(&[131, 104, 1, 97, 1, 131], &mut index), Ok(5));
/// ```
pub fn term_len_indexed(
    bytes: &[u8],
    index: &mut PlainIndex,
) -> std::result::Result<usize, DecodeError> {
    match index.measure(bytes) {
        Some(len) => Ok(len),
        None => decode_prefix(bytes, &mut Heap::new()).map(|(_, len)| len),
    }
}

fn decode_versioned_prefix(
    bytes: &[u8],
    heap: &mut Heap,
) -> std::result::Result<(Word, usize), DecodeError> {
    match (bytes.first(), bytes.get(1)) {
        (Some(&VERSION), Some(&tag::COMPRESSED)) => {
            let (payload, used) = inflate_prefix(bytes)?;
            let word = Decoder { input: &payload, pos: 0, origin: 1, heap }
                .whole_term()
                .map_err(DecodeError::inside_compressed)?;
            Ok((word, used))
        }
        (Some(&VERSION), Some(&(tag::DIST_HEADER | tag::DIST_FRAG_HEADER))) => {
            Err(DecodeError::new(E::DistributionHeader, 1))
        }
        (Some(&VERSION), _) => {
            let mut decoder = Decoder { input: bytes, pos: 1, origin: 0, heap };
            let word = decoder.term()?;
            Ok((word, decoder.pos))
        }
        (Some(&version), _) => Err(DecodeError::new(E::BadVersion(version), 0)),
        (None, _) => Err(DecodeError::new(E::UnexpectedEnd, 0)),
    }
}

fn decode_versioned(bytes: &[u8], heap: &mut Heap) -> std::result::Result<Word, DecodeError> {
    let Some(&version) = bytes.first() else {
        return Err(DecodeError::new(E::UnexpectedEnd, 0));
    };
    if version != VERSION {
        return Err(DecodeError::new(E::BadVersion(version), 0));
    }
    match bytes.get(1) {
        Some(&tag::COMPRESSED) => {
            let payload = inflate(bytes)?;
            // Offsets into the payload count as if it followed the version byte.
            Decoder { input: &payload, pos: 0, origin: 1, heap }
                .whole_term()
                .map_err(DecodeError::inside_compressed)
        }
        Some(&(tag::DIST_HEADER | tag::DIST_FRAG_HEADER)) => {
            Err(DecodeError::new(E::DistributionHeader, 1))
        }
        _ => Decoder { input: bytes, pos: 1, origin: 0, heap }.whole_term(),
    }
}

/// Expands the zlib data of a compressed term (`bytes` starts with the
/// version byte and tag 80) and checks it against the declared size; the
/// zlib stream must end the input.
fn inflate(bytes: &[u8]) -> std::result::Result<Vec<u8>, DecodeError> {
    let (out, used) = inflate_prefix(bytes)?;
    if used < bytes.len() {
        return Err(DecodeError::new(E::TrailingBytes(bytes.len() - used), used));
    }
    Ok(out)
}

/// [`inflate`] for a compressed term followed by other bytes: also returns
/// how many bytes of `bytes` the term took.
fn inflate_prefix(bytes: &[u8]) -> std::result::Result<(Vec<u8>, usize), DecodeError> {
    const DATA: usize = 6;
    let Some(size) = bytes.get(2..DATA) else {
        return Err(DecodeError::new(E::UnexpectedEnd, bytes.len()));
    };
    let declared = u32::from_be_bytes([size[0], size[1], size[2], size[3]]);
    let data = &bytes[DATA..];
    let reachable = (data.len() as u64).saturating_mul(limit::ZLIB_RATIO);
    if declared > MAX_UNCOMPRESSED_SIZE || u64::from(declared) > reachable {
        let kind = E::BadUncompressedSize { declared, compressed: data.len() };
        return Err(DecodeError::new(kind, 2));
    }
    // The output may hold one byte more than declared, to notice data that
    // expands further; it grows as data comes out, never to the declared
    // size up front.
    let cap = declared as usize + 1;
    let mut out: Vec<u8> = Vec::with_capacity(cap.min(data.len().saturating_mul(4) + 64));
    let mut z = Decompress::new(true);
    loop {
        if out.len() == out.capacity() {
            if out.len() >= cap {
                let kind = E::UncompressedSizeMismatch { declared, actual: out.len() as u64 };
                return Err(DecodeError::new(kind, 2));
            }
            let grow = out.len().max(4096).min(cap - out.len());
            out.reserve_exact(grow);
        }
        let (in_before, out_before) = (z.total_in(), out.len());
        let rest = &data[in_before as usize..];
        let status = z
            .decompress_vec(rest, &mut out, FlushDecompress::None)
            .map_err(|e| DecodeError::new(E::Zlib(e.to_string()), DATA + in_before as usize))?;
        match status {
            Status::StreamEnd => break,
            Status::Ok | Status::BufError => {
                if z.total_in() == in_before && out.len() == out_before {
                    // No progress with room to write: the stream is cut short.
                    return Err(DecodeError::new(E::UnexpectedEnd, bytes.len()));
                }
            }
        }
    }
    let used = z.total_in() as usize;
    if out.len() != declared as usize {
        let kind = E::UncompressedSizeMismatch { declared, actual: out.len() as u64 };
        return Err(DecodeError::new(kind, 2));
    }
    Ok((out, DATA + used))
}

/// A container whose elements are still being decoded.
#[derive(Debug)]
struct Frame {
    kind: FrameKind,
    /// Where the container's tag is (for errors and the fun size check).
    at: usize,
    /// Where its elements start on the value stack.
    start: usize,
    /// Elements still to come.
    remaining: usize,
}

#[derive(Debug)]
enum FrameKind {
    Tuple,
    /// Elements, then the tail.
    List,
    /// Keys and values alternating.
    Map,
    /// Free variables of the fun whose other fields are read.
    Fun(Box<FunHead>),
}

/// The fields of a `NEW_FUN_EXT` read before its free variables.
#[derive(Debug)]
struct FunHead {
    size: u32,
    arity: u8,
    uniq: [u8; 16],
    index: u32,
    module: Atom,
    old_index: u32,
    old_uniq: u32,
    pid: Word,
    /// Number of free variables.
    free: u32,
}

/// The most entries a stack kept between decodes may have room for.
const KEPT_STACK: usize = 4096;

thread_local! {
    /// The value and frame stacks, kept between decodes.
    static STACKS: std::cell::Cell<(Vec<Word>, Vec<Frame>)> = const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

struct Decoder<'a, 'h> {
    input: &'a [u8],
    pos: usize,
    /// Added to positions in errors (1 inside a compressed payload).
    origin: usize,
    heap: &'h mut Heap,
}

/// What reading one tag gave.
enum Step {
    /// A complete term.
    Done(Word),
    /// A container was pushed; its elements come next.
    Open,
}

type Result<T> = std::result::Result<T, DecodeError>;

impl<'a> Decoder<'a, '_> {
    /// Decodes the term at `pos`, which must end the input.
    fn whole_term(mut self) -> Result<Word> {
        let word = self.term()?;
        if self.pos < self.input.len() {
            return Err(self.err(E::TrailingBytes(self.input.len() - self.pos)));
        }
        Ok(word)
    }

    fn term(&mut self) -> Result<Word> {
        // The commonest results of all, read at once.
        match self.input.get(self.pos..) {
            Some(&[tag::SMALL_INTEGER_EXT, value, ..]) => {
                self.pos += 2;
                return Ok(Word::small_unchecked(value.into()));
            }
            Some(&[tag::INTEGER_EXT, a, b, c, d, ..]) => {
                self.pos += 5;
                return Ok(Word::small_unchecked(i32::from_be_bytes([a, b, c, d]).into()));
            }
            _ => {}
        }
        // A scalar needs no stacks (a wire match's result often is one).
        let scalar = |tag: u8| {
            matches!(
                tag,
                tag::SMALL_INTEGER_EXT
                    | tag::INTEGER_EXT
                    | tag::SMALL_ATOM_UTF8_EXT
                    | tag::ATOM_UTF8_EXT
                    | tag::NIL_EXT
                    | tag::NEW_FLOAT_EXT
                    | tag::BINARY_EXT
            )
        };
        if self.input.get(self.pos).is_some_and(|&tag| scalar(tag)) {
            let mut frames = Vec::new();
            return match self.step(&mut frames, 0)? {
                Step::Done(word) => Ok(word),
                // Not for these tags; were it so, go on as below would.
                Step::Open => self.term_with(&mut Vec::new(), &mut frames),
            };
        }
        // The stacks of the last decode on this thread, emptied: most
        // terms are small, and a stream decodes millions of them.
        let (mut values, mut frames) = STACKS.take();
        let result = self.term_with(&mut values, &mut frames);
        // Keep them for the next term unless a huge one grew them.
        if values.capacity() <= KEPT_STACK && frames.capacity() <= KEPT_STACK {
            values.clear();
            frames.clear();
            STACKS.set((values, frames));
        }
        result
    }

    fn term_with(&mut self, values: &mut Vec<Word>, frames: &mut Vec<Frame>) -> Result<Word> {
        'tags: loop {
            let mut word = match self.step(frames, values.len())? {
                Step::Done(word) => word,
                Step::Open => continue,
            };
            // Hand the finished word to the container waiting for it, and
            // close every container that completes.
            while let Some(mut frame) = frames.pop() {
                values.push(word);
                frame.remaining -= 1;
                if frame.remaining > 0 {
                    frames.push(frame);
                    continue 'tags;
                }
                word = self.close(frame, values)?;
            }
            return Ok(word);
        }
    }

    /// Reads one tag: a leaf or empty container is built at once, a container
    /// with elements is pushed on `frames`.
    fn step(&mut self, frames: &mut Vec<Frame>, start: usize) -> Result<Step> {
        let at = self.pos;
        let tag = self.u8()?;
        let mut open = |kind: FrameKind, remaining: usize| -> Result<Step> {
            frames.push(Frame { kind, at, start, remaining });
            Ok(Step::Open)
        };
        let word = match tag {
            tag::SMALL_INTEGER_EXT => Word::small_unchecked(self.u8()?.into()),
            tag::INTEGER_EXT => Word::small_unchecked(self.u32()? as i32 as i64),
            tag::SMALL_BIG_EXT | tag::LARGE_BIG_EXT => {
                let (negative, limbs) = self.big(tag)?;
                self.heap.big_from_parts(negative, &limbs)
            }
            tag::NEW_FLOAT_EXT => {
                let value = f64::from_bits(self.u64()?);
                self.heap.try_float(value).ok_or_else(|| self.err_at(E::NonFiniteFloat, at))?
            }
            tag::FLOAT_EXT => {
                let text = self.bytes(31)?;
                let value = parse_float_text(text).and_then(|v| self.heap.try_float(v));
                value.ok_or_else(|| self.err_at(E::BadFloatText, at))?
            }
            tag::ATOM_EXT | tag::SMALL_ATOM_EXT | tag::ATOM_UTF8_EXT | tag::SMALL_ATOM_UTF8_EXT => {
                Word::atom(self.atom_body(tag)?)
            }
            tag::ATOM_CACHE_REF => return Err(self.err_at(E::AtomCacheRef, at)),
            tag::NIL_EXT => Word::NIL,
            tag::SMALL_TUPLE_EXT | tag::LARGE_TUPLE_EXT => {
                let arity =
                    if tag == tag::SMALL_TUPLE_EXT { self.u8()?.into() } else { self.u32()? };
                let arity = self.count(arity.into(), 1)?;
                if arity == 0 {
                    self.heap.tuple(&[])
                } else {
                    return open(FrameKind::Tuple, arity);
                }
            }
            tag::STRING_EXT => {
                let len = self.u16()?;
                let bytes = self.bytes(len.into())?;
                let chars: Vec<Word> =
                    bytes.iter().map(|&b| Word::small_unchecked(b.into())).collect();
                self.heap.list(&chars)
            }
            tag::LIST_EXT => {
                let len = self.u32()?;
                // The elements, then the tail: at least one byte each.
                let count = self.count(u64::from(len) + 1, 1)?;
                return open(FrameKind::List, count);
            }
            tag::BINARY_EXT => {
                let len = self.u32()?;
                let len = self.count(len.into(), 1)?;
                let bytes = self.bytes(len)?;
                self.heap.binary(bytes)
            }
            tag::BIT_BINARY_EXT => {
                let len = self.u32()?;
                let bits_at = self.pos;
                let bits = self.u8()?;
                if bits == 0 || bits > 8 {
                    return Err(self.err_at(E::BadBitCount(bits), bits_at));
                }
                if len == 0 {
                    return Err(self.err_at(E::EmptyBitBinary, at));
                }
                let len = self.count(len.into(), 1)?;
                let bytes = self.bytes(len)?;
                self.heap.bitstring(bytes, (len as u64 - 1) * 8 + u64::from(bits))
            }
            tag::MAP_EXT => {
                let size = self.u32()?;
                let count = self.count(u64::from(size) * 2, 1)?;
                if count == 0 {
                    self.heap.map_from_sorted(std::iter::empty(), std::iter::empty())
                } else {
                    return open(FrameKind::Map, count);
                }
            }
            tag::PID_EXT | tag::NEW_PID_EXT => self.pid_body(tag)?,
            tag::PORT_EXT | tag::NEW_PORT_EXT | tag::V4_PORT_EXT => self.port_body(tag)?,
            tag::REFERENCE_EXT | tag::NEW_REFERENCE_EXT | tag::NEWER_REFERENCE_EXT => {
                self.ref_body(tag)?
            }
            tag::EXPORT_EXT => {
                let module = self.atom_field("an atom (the module of an export)")?;
                let function = self.atom_field("an atom (the function of an export)")?;
                let arity_at = self.pos;
                let arity = self.small_field("an integer (the arity of an export)")?;
                let arity =
                    u8::try_from(arity).map_err(|_| self.err_at(E::BadArity(arity), arity_at))?;
                self.heap.export_fun(module, function, arity)
            }
            tag::NEW_FUN_EXT => {
                let fun = self.fun_head()?;
                let free = self.count(fun.free.into(), 1)?;
                if free == 0 {
                    return Ok(Step::Done(self.build_fun(&fun, &[], at)?));
                }
                return open(FrameKind::Fun(Box::new(fun)), free);
            }
            tag::FUN_EXT => return Err(self.err_at(E::FunExt, at)),
            tag::LOCAL_EXT => return Err(self.err_at(E::LocalExt, at)),
            other => return Err(self.err_at(E::UnknownTag(other), at)),
        };
        Ok(Step::Done(word))
    }

    /// Builds the container of `frame` from its elements at the top of `values`.
    fn close(&mut self, frame: Frame, values: &mut Vec<Word>) -> Result<Word> {
        let elements = &values[frame.start..];
        let word = match frame.kind {
            FrameKind::Tuple => self.heap.tuple(elements),
            FrameKind::List => match elements.split_last() {
                Some((&tail, elements)) => self.heap.list_with_tail(elements, tail),
                // A list frame always waits for its tail.
                None => Word::NIL,
            },
            FrameKind::Map => self.map(elements).map_err(|kind| self.err_at(kind, frame.at))?,
            FrameKind::Fun(fun) => self.build_fun(&fun, elements, frame.at)?,
        };
        values.truncate(frame.start);
        Ok(word)
    }

    /// A map of alternating keys and values, in any key order. The map
    /// remembers the order the keys came in, so that encoding it again
    /// writes the same bytes.
    fn map(&mut self, elements: &[Word]) -> std::result::Result<Word, E> {
        let pairs: Vec<(Word, Word)> = elements.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        let view = HeapSet::single(self.heap);
        let mut keys: Vec<Word> = pairs.iter().map(|p| p.0).collect();
        keys.sort_by(|a, b| view.term(*a).cmp_exact(&view.term(*b)));
        if keys.windows(2).any(|w| view.term(w[0]).eq_exact(&view.term(w[1]))) {
            return Err(E::DuplicateMapKey);
        }
        Ok(self.heap.map_in_order(&pairs))
    }

    // ---- Leaves ----------------------------------------------------------------

    /// The sign and 64-bit limbs of a `SMALL_BIG_EXT` or `LARGE_BIG_EXT`.
    fn big(&mut self, tag: u8) -> Result<(bool, Vec<u64>)> {
        let len_at = self.pos;
        let len = if tag == tag::SMALL_BIG_EXT { self.u8()?.into() } else { self.u32()? };
        if u64::from(len) > limit::BIG_BYTES {
            return Err(self.err_at(E::BigTooLarge(len.into()), len_at));
        }
        // Any non-zero sign byte means negative, as in ERTS.
        let negative = self.u8()? != 0;
        let digits = self.bytes(len as usize)?;
        let limbs = digits
            .chunks(8)
            .map(|chunk| {
                let mut limb = [0u8; 8];
                limb[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(limb)
            })
            .collect();
        Ok((negative, limbs))
    }

    fn atom_body(&mut self, tag: u8) -> Result<Atom> {
        let len_at = self.pos;
        let (len, utf8) = match tag {
            tag::ATOM_EXT => (usize::from(self.u16()?), false),
            tag::SMALL_ATOM_EXT => (usize::from(self.u8()?), false),
            tag::ATOM_UTF8_EXT => (usize::from(self.u16()?), true),
            _ => (usize::from(self.u8()?), true),
        };
        let most = if utf8 { limit::ATOM_UTF8_BYTES } else { limit::ATOM_LATIN1_BYTES };
        if len > most {
            return Err(self.err_at(E::AtomTooLong, len_at));
        }
        let text_at = self.pos;
        let text = self.bytes(len)?;
        let result = if utf8 {
            let name =
                std::str::from_utf8(text).map_err(|_| self.err_at(E::InvalidUtf8, text_at))?;
            Atom::try_new(name)
        } else {
            // Latin-1: every byte is the code point of the same number.
            let name: String = text.iter().map(|&b| char::from(b)).collect();
            Atom::try_new(&name)
        };
        result.map_err(|e| {
            let kind = match e {
                AtomError::TooLong => E::AtomTooLong,
                AtomError::TableFull => E::AtomTableFull,
            };
            self.err_at(kind, text_at)
        })
    }

    /// An atom in a field that must hold one (a node, a module, a function).
    fn atom_field(&mut self, expected: &'static str) -> Result<Atom> {
        let at = self.pos;
        match self.u8()? {
            tag @ (tag::ATOM_EXT
            | tag::SMALL_ATOM_EXT
            | tag::ATOM_UTF8_EXT
            | tag::SMALL_ATOM_UTF8_EXT) => self.atom_body(tag),
            tag::ATOM_CACHE_REF => Err(self.err_at(E::AtomCacheRef, at)),
            found => Err(self.err_at(E::UnexpectedTag { expected, found }, at)),
        }
    }

    /// An integer in a field ERTS requires to be a small integer (the arity
    /// of an export, the old index and uniq of a fun). Fields are read in
    /// place rather than as general terms, so that a field cannot nest.
    fn small_field(&mut self, expected: &'static str) -> Result<i64> {
        let at = self.pos;
        match self.u8()? {
            tag::SMALL_INTEGER_EXT => Ok(self.u8()?.into()),
            tag::INTEGER_EXT => Ok(i64::from(self.u32()? as i32)),
            tag @ (tag::SMALL_BIG_EXT | tag::LARGE_BIG_EXT) => {
                let (negative, limbs) = self.big(tag)?;
                let magnitude = match limbs.iter().rposition(|&l| l != 0) {
                    None => 0,
                    Some(0) => limbs[0],
                    Some(_) => return Err(self.err_at(E::NotSmall, at)),
                };
                let value = if negative {
                    0i64.checked_sub_unsigned(magnitude)
                } else {
                    i64::try_from(magnitude).ok()
                };
                value
                    .filter(|v| (limit::OTP_MIN_SMALL..=limit::OTP_MAX_SMALL).contains(v))
                    .ok_or_else(|| self.err_at(E::NotSmall, at))
            }
            found => Err(self.err_at(E::UnexpectedTag { expected, found }, at)),
        }
    }

    fn pid_body(&mut self, tag: u8) -> Result<Word> {
        let node = self.atom_field("an atom (the node of a pid)")?;
        let id_at = self.pos;
        let id = self.u32()?;
        let serial = self.u32()?;
        let creation = if tag == tag::PID_EXT { self.tiny_creation()? } else { self.u32()? };
        if is_local_node(node, creation) && id >> limit::LOCAL_PID_NUMBER_BITS != 0 {
            return Err(self.err_at(E::BadLocalPid(id), id_at));
        }
        Ok(self.heap.pid(node, id, serial, creation))
    }

    fn port_body(&mut self, tag: u8) -> Result<Word> {
        let node = self.atom_field("an atom (the node of a port)")?;
        let id_at = self.pos;
        let id = if tag == tag::V4_PORT_EXT { self.u64()? } else { self.u32()?.into() };
        let creation = if tag == tag::PORT_EXT { self.tiny_creation()? } else { self.u32()? };
        if is_local_node(node, creation) && id > limit::LOCAL_PORT_NUMBER_MAX {
            return Err(self.err_at(E::BadLocalPort(id), id_at));
        }
        Ok(self.heap.port(node, id, creation))
    }

    fn ref_body(&mut self, tag: u8) -> Result<Word> {
        let len_at = self.pos;
        let len = match tag {
            tag::REFERENCE_EXT => 1,
            _ => usize::from(self.u16()?),
        };
        if len == 0 {
            return Err(self.err_at(E::BadReference("no id words"), len_at));
        }
        if len > limit::REF_WORDS {
            return Err(self.err_at(E::BadReference("more than 5 id words"), len_at));
        }
        let node = self.atom_field("an atom (the node of a reference)")?;
        let (creation, words_at, words) = match tag {
            tag::REFERENCE_EXT => {
                let words_at = self.pos;
                let word = self.u32()?;
                (self.tiny_creation()?, words_at, vec![word])
            }
            _ => {
                let creation =
                    if tag == tag::NEW_REFERENCE_EXT { self.tiny_creation()? } else { self.u32()? };
                let words_at = self.pos;
                let words = (0..len).map(|_| self.u32()).collect::<Result<Vec<u32>>>()?;
                (creation, words_at, words)
            }
        };
        let local = is_local_node(node, creation);
        // The old formats, and references of this node, keep 18 bits in the first word.
        if (tag != tag::NEWER_REFERENCE_EXT || local) && words[0] >> limit::REF_WORD0_BITS != 0 {
            return Err(self.err_at(E::BadReference("first id word above 18 bits"), words_at));
        }
        let mut words = words;
        if local && words.len() < limit::LOCAL_REF_WORDS {
            // ERTS stores this node's references with three words.
            words.resize(limit::LOCAL_REF_WORDS, 0);
        }
        Ok(self.heap.reference(node, creation, &words))
    }

    /// A creation of the old formats: one byte, at most 3.
    fn tiny_creation(&mut self) -> Result<u32> {
        let at = self.pos;
        let creation = u32::from(self.u8()?);
        if creation > limit::TINY_CREATION {
            return Err(self.err_at(E::BadCreation(creation), at));
        }
        Ok(creation)
    }

    /// The fields of a `NEW_FUN_EXT` up to its free variables; `pos` is
    /// after the tag.
    fn fun_head(&mut self) -> Result<FunHead> {
        let size = self.u32()?;
        let arity = self.u8()?;
        let mut uniq = [0u8; 16];
        uniq.copy_from_slice(self.bytes(16)?);
        let index = self.u32()?;
        let free_at = self.pos;
        let free = self.u32()?;
        if free > limit::FREE_VARS {
            return Err(self.err_at(E::TooManyFreeVariables(free), free_at));
        }
        let module = self.atom_field("an atom (the module of a fun)")?;
        // ERTS keeps the old index and uniq as C ints: the low 32 bits.
        let old_index = self.small_field("an integer (the old index of a fun)")? as u32;
        let old_uniq = self.small_field("an integer (the old uniq of a fun)")? as u32;
        let pid_at = self.pos;
        let pid = match self.u8()? {
            tag @ (tag::PID_EXT | tag::NEW_PID_EXT) => self.pid_body(tag)?,
            found => {
                return Err(self.err_at(E::UnexpectedTag { expected: "a pid", found }, pid_at));
            }
        };
        Ok(FunHead { size, arity, uniq, index, module, old_index, old_uniq, pid, free })
    }

    /// Builds a fun whose tag was at `at` once its free variables are read,
    /// checking its size field against the bytes it took.
    fn build_fun(&mut self, fun: &FunHead, free: &[Word], at: usize) -> Result<Word> {
        // The size counts from the size field (after the tag) to the end.
        let actual = (self.pos - at - 1) as u64;
        if actual != u64::from(fun.size) {
            let kind = E::FunSizeMismatch { declared: fun.size, actual };
            return Err(self.err_at(kind, at + 1));
        }
        Ok(self.heap.closure(&ClosureParts {
            arity: fun.arity,
            uniq: fun.uniq,
            index: fun.index,
            module: fun.module,
            old_index: fun.old_index,
            old_uniq: fun.old_uniq,
            pid: fun.pid,
            free,
        }))
    }

    // ---- Bytes ------------------------------------------------------------------

    fn err(&self, kind: E) -> DecodeError {
        self.err_at(kind, self.pos)
    }

    fn err_at(&self, kind: E, pos: usize) -> DecodeError {
        DecodeError::new(kind, self.origin + pos)
    }

    /// Checks that `len` elements of at least `min_bytes` each can follow, and
    /// returns `len`: a length field never makes the decoder reserve or wait
    /// for more than the input holds.
    fn count(&self, len: u64, min_bytes: u64) -> Result<usize> {
        let left = self.input.len() - self.pos;
        match len.checked_mul(min_bytes) {
            Some(need) if need <= left as u64 => Ok(len as usize),
            _ => Err(self.err(E::LengthExceedsInput { len, left })),
        }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let input: &'a [u8] = self.input;
        match input.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.err_at(E::UnexpectedEnd, self.input.len())),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }
}

/// Parses the 31-byte text of a `FLOAT_EXT` as ERTS does
/// (`sys_chars_to_double`): up to the first NUL, `[+-]digits[.,]digits`,
/// then an optional exponent, nothing else; the value must be finite
/// (underflow to zero is fine).
fn parse_float_text(raw: &[u8]) -> Option<f64> {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let text = &raw[..end];
    let digits = |from: usize| {
        text[from.min(text.len())..].iter().take_while(|b| b.is_ascii_digit()).count()
    };
    let mut i = usize::from(matches!(text.first(), Some(b'+' | b'-')));
    let n = digits(i);
    if n == 0 {
        return None;
    }
    i += n;
    if !matches!(text.get(i), Some(b'.' | b',')) {
        return None;
    }
    let point = i;
    i += 1;
    let n = digits(i);
    if n == 0 {
        return None;
    }
    i += n;
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(text.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    if i != text.len() {
        return None;
    }
    // ERTS accepts either decimal separator; Rust's parser wants a point.
    let mut ascii = text.to_vec();
    ascii[point] = b'.';
    let value: f64 = std::str::from_utf8(&ascii).ok()?.parse().ok()?;
    value.is_finite().then_some(value)
}
