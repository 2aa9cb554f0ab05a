//! Encoding: terms to bytes, as `term_to_binary/1` writes them.

use flate2::{Compress, Compression, FlushCompress, Status};

use super::error::EncodeError;
use super::{VERSION, is_local_node, limit, tag};
use crate::Release;
use crate::term::{Atom, Kind, Map, TermRef, Word};

/// Encodes `term` as `term_to_binary/1` of the default release (OTP 29)
/// does: [`encode_for`] that release.
///
/// The bytes are identical to OTP's except for the order of entries of
/// some maps, which depends on the atom table of the node (see the
/// [module documentation](super)); [`encode_deterministic`] has no such
/// exception.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Term;
/// let t = Term::parse("[1, 300, -1.5 | x]").unwrap();
/// assert_eq!(
///     etf::encode(t.as_ref()).unwrap(),
///     [131, 108, 0, 0, 0, 3, 97, 1, 98, 0, 0, 1, 44, 70, 191, 248, 0, 0, 0, 0, 0, 0, 119, 1, b'x'],
/// );
/// ```
pub fn encode(term: TermRef<'_>) -> Result<Vec<u8>, EncodeError> {
    encode_for(term, Release::default())
}

/// Encodes `term` as `term_to_binary/1` of `release` does. Releases differ
/// only in the order of the entries of maps of over 32 keys
/// ([`Change::Erts17MapHash`](crate::Change::Erts17MapHash)).
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Term;
/// use matchspec::Release;
/// let floats: Vec<String> = (1..=33).map(|i| format!("{i}.5 => {i}")).collect();
/// let t = Term::parse(&format!("#{{{}}}", floats.join(", "))).unwrap();
/// let otp27 = etf::encode_for(t.as_ref(), Release::Otp27).unwrap();
/// let otp29 = etf::encode_for(t.as_ref(), Release::Otp29).unwrap();
/// assert_eq!(otp27.len(), otp29.len());
/// assert_ne!(otp27, otp29);
/// assert_eq!(etf::decode(&otp29).unwrap(), t);
/// ```
pub fn encode_for(term: TermRef<'_>, release: Release) -> Result<Vec<u8>, EncodeError> {
    Encoder::new(term, MapOrder::Otp(release)).run()
}

/// Encodes `term` as `term_to_binary(Term, [deterministic])` does: like
/// [`encode`], but every map in exact key order. The bytes are identical to
/// OTP's (27 and 29) for every term.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Term;
/// let t = Term::parse("#{b => 1, a => 2}").unwrap();
/// let bytes = etf::encode_deterministic(t.as_ref()).unwrap();
/// assert_eq!(bytes, [131, 116, 0, 0, 0, 2, 119, 1, b'a', 97, 2, 119, 1, b'b', 97, 1]);
/// ```
pub fn encode_deterministic(term: TermRef<'_>) -> Result<Vec<u8>, EncodeError> {
    Encoder::new(term, MapOrder::Sorted).run()
}

/// Appends `term`'s encoding as [`encode_for`] `release` writes it, without
/// the version byte, to `out`: for a term written inside another. On an
/// error `out` is as it was.
pub(crate) fn encode_inside(
    term: TermRef<'_>,
    out: &mut Vec<u8>,
    release: Release,
) -> Result<(), EncodeError> {
    let len = out.len();
    let mut encoder = Encoder {
        term,
        order: MapOrder::Otp(release),
        out: std::mem::take(out),
        stack: vec![Task::Term(term.word())],
    };
    let written = encoder.write();
    *out = encoder.out;
    if written.is_err() {
        out.truncate(len);
    }
    written
}

/// Encodes `term` and compresses it with zlib at `level` (0 to 9), as
/// `term_to_binary(Term, [{compressed, Level}])` of the default release
/// does ([`encode_compressed_for`] that release); the `compressed` option
/// alone is level 6.
///
/// As in OTP, level 0 and terms that compression does not make smaller give
/// the plain encoding. The compressed bytes are a valid zlib stream that OTP
/// decodes, but not the same bytes OTP's zlib writes.
///
/// ```
/// use matchspec::etf;
/// use matchspec::term::Term;
/// let t = Term::string(&"a".repeat(1000));
/// let bytes = etf::encode_compressed(t.as_ref(), 6).unwrap();
/// assert_eq!(&bytes[..6], &[131, 80, 0, 0, 3, 235]); // COMPRESSED, 1003 bytes uncompressed
/// assert!(bytes.len() < 100);
/// assert_eq!(etf::decode(&bytes).unwrap(), t);
/// ```
pub fn encode_compressed(term: TermRef<'_>, level: u32) -> Result<Vec<u8>, EncodeError> {
    encode_compressed_for(term, level, Release::default())
}

/// [`encode_compressed`], with the map order of `release` (as
/// [`encode_for`]).
pub fn encode_compressed_for(
    term: TermRef<'_>,
    level: u32,
    release: Release,
) -> Result<Vec<u8>, EncodeError> {
    if level > 9 {
        return Err(EncodeError::BadCompressionLevel(level));
    }
    let plain = encode_for(term, release)?;
    if level == 0 {
        return Ok(plain);
    }
    let body = &plain[1..];
    let Ok(size) = u32::try_from(body.len()) else {
        // The header cannot hold the size; OTP would not compress either.
        return Ok(plain);
    };
    // OTP gives zlib an output buffer of the uncompressed size less 5 and
    // falls back to the plain encoding if the stream does not fit.
    let room = body.len().saturating_sub(5);
    let mut out = Vec::with_capacity(6 + room);
    out.extend_from_slice(&[VERSION, tag::COMPRESSED]);
    out.extend_from_slice(&size.to_be_bytes());
    let mut z = Compress::new(Compression::new(level), true);
    let mut stream = Vec::with_capacity(room);
    match z.compress_vec(body, &mut stream, FlushCompress::Finish) {
        Ok(Status::StreamEnd) => {
            out.extend_from_slice(&stream);
            Ok(out)
        }
        _ => Ok(plain),
    }
}

/// How to order the entries of maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MapOrder {
    /// As OTP of this release stores them, where that can be known.
    Otp(Release),
    /// In exact key order (the `deterministic` option).
    Sorted,
}

/// What the encoder still has to write, innermost last.
enum Task {
    Term(Word),
    /// The elements of a `LIST_EXT` from this cell on, then its tail.
    ListRest(Word),
    /// Write the size of the fun whose size field is at this offset.
    FunSize(usize),
}

struct Encoder<'a> {
    term: TermRef<'a>,
    order: MapOrder,
    out: Vec<u8>,
    stack: Vec<Task>,
}

impl<'a> Encoder<'a> {
    fn new(term: TermRef<'a>, order: MapOrder) -> Encoder<'a> {
        Encoder { term, order, out: vec![VERSION], stack: vec![Task::Term(term.word())] }
    }

    fn run(mut self) -> Result<Vec<u8>, EncodeError> {
        self.write()?;
        Ok(self.out)
    }

    /// Writes what is on the stack.
    fn write(&mut self) -> Result<(), EncodeError> {
        while let Some(task) = self.stack.pop() {
            match task {
                Task::Term(word) => self.term(self.term.with_word(word))?,
                Task::ListRest(word) => match self.term.with_word(word).as_cons() {
                    Some(cons) => {
                        self.stack.push(Task::ListRest(cons.tail().word()));
                        self.stack.push(Task::Term(cons.head().word()));
                    }
                    None => self.stack.push(Task::Term(word)),
                },
                Task::FunSize(at) => {
                    let size = len32("fun", (self.out.len() - at) as u64)?;
                    self.out[at..at + 4].copy_from_slice(&size.to_be_bytes());
                }
            }
        }
        Ok(())
    }

    /// Writes `t`, or its head and pushes the tasks that write the rest.
    fn term(&mut self, t: TermRef<'a>) -> Result<(), EncodeError> {
        match t.kind() {
            Kind::Small(v) => self.integer(v),
            Kind::Big(big) => {
                let limbs: Vec<u64> = big.limbs().collect();
                self.big(big.is_negative(), &limbs)?;
            }
            Kind::Float(f) => {
                self.out.push(tag::NEW_FLOAT_EXT);
                self.out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            Kind::Atom(a) => self.atom(a),
            Kind::Nil => self.out.push(tag::NIL_EXT),
            Kind::Cons(_) => self.list(t)?,
            Kind::Tuple(tuple) => {
                let arity = tuple.len();
                if let Ok(small) = u8::try_from(arity) {
                    self.out.extend_from_slice(&[tag::SMALL_TUPLE_EXT, small]);
                } else {
                    self.out.push(tag::LARGE_TUPLE_EXT);
                    self.u32(len32("tuple", arity as u64)?);
                }
                self.stack.extend(tuple.words().iter().rev().map(|&w| Task::Term(w)));
            }
            Kind::Map(map) => self.map(map)?,
            Kind::Bits(bits) => {
                let len = len32("binary", bits.byte_len() as u64)?;
                let rest = (bits.bit_len() % 8) as u8;
                if rest == 0 {
                    self.out.push(tag::BINARY_EXT);
                    self.u32(len);
                } else {
                    self.out.push(tag::BIT_BINARY_EXT);
                    self.u32(len);
                    self.out.push(rest);
                }
                self.out.extend_from_slice(bits.bytes());
            }
            Kind::Pid(p) => {
                if is_local_node(p.node, p.creation) && p.id >> limit::LOCAL_PID_NUMBER_BITS != 0 {
                    let number = p.id.into();
                    return Err(EncodeError::BadLocalIdentifier { what: "pid", number });
                }
                self.out.push(tag::NEW_PID_EXT);
                self.atom(p.node);
                self.u32(p.id);
                self.u32(p.serial);
                self.u32(p.creation);
            }
            Kind::Port(p) => {
                if is_local_node(p.node, p.creation) && p.id > limit::LOCAL_PORT_NUMBER_MAX {
                    return Err(EncodeError::BadLocalIdentifier { what: "port", number: p.id });
                }
                // OTP 27 writes every port, even one with a 32-bit number, as V4.
                self.out.push(tag::V4_PORT_EXT);
                self.atom(p.node);
                self.out.extend_from_slice(&p.id.to_be_bytes());
                self.u32(p.creation);
            }
            Kind::Ref(r) => {
                let mut ids: Vec<u32> = r.ids().collect();
                if is_local_node(r.node, r.creation) && ids.len() < limit::LOCAL_REF_WORDS {
                    // ERTS holds this node's references with three words.
                    ids.resize(limit::LOCAL_REF_WORDS, 0);
                }
                if ids.is_empty() || ids.len() > limit::REF_WORDS {
                    return Err(EncodeError::BadReference(ids.len()));
                }
                if is_local_node(r.node, r.creation) && ids[0] >> limit::REF_WORD0_BITS != 0 {
                    let number = ids[0].into();
                    return Err(EncodeError::BadLocalIdentifier { what: "reference", number });
                }
                self.out.push(tag::NEWER_REFERENCE_EXT);
                self.out.extend_from_slice(&(ids.len() as u16).to_be_bytes());
                self.atom(r.node);
                self.u32(r.creation);
                for id in ids {
                    self.u32(id);
                }
            }
            Kind::Export(e) => {
                self.out.push(tag::EXPORT_EXT);
                self.atom(e.module);
                self.atom(e.function);
                self.integer(e.arity.into());
            }
            Kind::Closure(c) => {
                self.out.push(tag::NEW_FUN_EXT);
                let size_at = self.out.len();
                self.u32(0);
                self.out.push(c.arity());
                self.out.extend_from_slice(&c.uniq());
                self.u32(c.index());
                self.u32(len32("fun", c.free().len() as u64)?);
                self.atom(c.module());
                // ERTS keeps these as C ints and writes them as integers.
                self.integer(c.old_index() as i32 as i64);
                self.integer(c.old_uniq() as i32 as i64);
                self.stack.push(Task::FunSize(size_at));
                self.stack.extend(c.free().rev().map(|v| Task::Term(v.word())));
                self.stack.push(Task::Term(c.pid().word()));
            }
        }
        Ok(())
    }

    fn integer(&mut self, v: i64) {
        if let Ok(byte) = u8::try_from(v) {
            self.out.extend_from_slice(&[tag::SMALL_INTEGER_EXT, byte]);
        } else if let Ok(int) = i32::try_from(v) {
            self.out.push(tag::INTEGER_EXT);
            self.out.extend_from_slice(&int.to_be_bytes());
        } else {
            let magnitude = v.unsigned_abs().to_le_bytes();
            let len = 8 - magnitude.iter().rev().take_while(|&&b| b == 0).count();
            self.out.extend_from_slice(&[tag::SMALL_BIG_EXT, len as u8, u8::from(v < 0)]);
            self.out.extend_from_slice(&magnitude[..len]);
        }
    }

    /// A bignum: the magnitude's bytes least significant first, without
    /// trailing zeros, in `SMALL_BIG_EXT` up to 255 bytes.
    fn big(&mut self, negative: bool, limbs: &[u64]) -> Result<(), EncodeError> {
        let mut bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        let len = bytes.len() as u64;
        if len > limit::BIG_BYTES {
            return Err(EncodeError::BigTooLarge(len));
        }
        match u8::try_from(len) {
            Ok(small) => self.out.extend_from_slice(&[tag::SMALL_BIG_EXT, small]),
            Err(_) => {
                self.out.push(tag::LARGE_BIG_EXT);
                self.u32(len as u32);
            }
        }
        self.out.push(u8::from(negative));
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    fn atom(&mut self, atom: Atom) {
        let name = atom.name().as_bytes();
        // Names are at most 255 characters, so at most 1020 bytes.
        match u8::try_from(name.len()) {
            Ok(len) => self.out.extend_from_slice(&[tag::SMALL_ATOM_UTF8_EXT, len]),
            Err(_) => {
                self.out.push(tag::ATOM_UTF8_EXT);
                self.out.extend_from_slice(&(name.len() as u16).to_be_bytes());
            }
        }
        self.out.extend_from_slice(name);
    }

    /// A non-empty list: `STRING_EXT` if it is a proper list of fewer than
    /// 65536 bytes, else `LIST_EXT` with the cells up to the first non-cell
    /// tail.
    fn list(&mut self, list: TermRef<'a>) -> Result<(), EncodeError> {
        let mut bytes = Vec::new();
        let mut items = list.list_items();
        let is_string = loop {
            match items.next() {
                None => break items.tail().is_nil(),
                Some(item) => match item.word().as_small().and_then(|v| u8::try_from(v).ok()) {
                    Some(byte) if bytes.len() < limit::STRING_LEN => bytes.push(byte),
                    _ => break false,
                },
            }
        };
        if is_string {
            self.out.push(tag::STRING_EXT);
            self.out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
            self.out.extend_from_slice(&bytes);
            return Ok(());
        }
        let len = list.list_items().count();
        self.out.push(tag::LIST_EXT);
        self.u32(len32("list", len as u64)?);
        self.stack.push(Task::ListRest(list.word()));
        Ok(())
    }

    fn map(&mut self, map: Map<'a>) -> Result<(), EncodeError> {
        self.out.push(tag::MAP_EXT);
        self.u32(len32("map", map.len() as u64)?);
        let keys: Vec<Word> = map.keys().map(|k| k.word()).collect();
        let values: Vec<Word> = map.values().map(|v| v.word()).collect();
        // OTP writes a small map in its storage order and a large one in
        // hash order (the reverse of how it iterates it); a map that came
        // from the external term format remembers the order it was written in.
        let order: Option<Vec<usize>> = match self.order {
            MapOrder::Otp(release) if map.len() > limit::FLATMAP_KEYS => {
                crate::term::erts_hash::hamt_order(map, release)
                    .or_else(|| map.has_own_order().then(|| map.own_order_positions().collect()))
            }
            MapOrder::Otp(release) => Some(crate::term::erts_layout::erts_order(map, release)),
            MapOrder::Sorted => None,
        };
        // Pushed last entry first, so they come off the stack in order.
        let mut push = |i: usize| {
            self.stack.push(Task::Term(values[i]));
            self.stack.push(Task::Term(keys[i]));
        };
        match order {
            Some(order) => order.into_iter().rev().for_each(&mut push),
            None => (0..keys.len()).rev().for_each(&mut push),
        }
        Ok(())
    }

    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
}

/// `len` as a 32-bit length field, or the error that `what` is too large.
fn len32(what: &'static str, len: u64) -> Result<u32, EncodeError> {
    u32::try_from(len).map_err(|_| EncodeError::TooLarge { what, len })
}
