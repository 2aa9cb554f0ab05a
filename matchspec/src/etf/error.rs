//! The errors of decoding and encoding.

use std::fmt;

/// Why bytes are not a term in the external term format, and where.
///
/// The offset is the byte of the input where decoding went wrong: the first
/// byte of the field or tag that is bad, or the end of the input when it is
/// cut short. For a compressed term, an error in the term it holds is at an
/// offset into the *uncompressed* bytes, counted as if they followed the
/// version byte (so 1 is the first tag), and [`DecodeError::in_compressed`]
/// says so.
///
/// ```
/// use matchspec::etf::{self, DecodeErrorKind};
/// let err = etf::decode(&[131, 104, 2, 97, 1]).unwrap_err();
/// assert_eq!(err.kind(), &DecodeErrorKind::UnexpectedEnd);
/// assert_eq!(err.offset(), 5);
/// assert_eq!(err.to_string(), "unexpected end of input at byte 5");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    offset: usize,
    in_compressed: bool,
}

/// What is wrong with the bytes given to [`decode`](super::decode).
///
/// Every input `binary_to_term/1` rejects is one of these; so are a few
/// inputs it lets through (trailing bytes, a wrong size field in a fun, a
/// zlib stream followed by garbage) or crashes on (an export arity above
/// 255, a reference without id words).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ends in the middle of a term, e.g. `<<131, 98, 0, 0>>`.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A length field asks for more elements than the bytes left could hold,
    /// e.g. a `LIST_EXT` of 4 billion elements in a 10-byte input. Every
    /// element takes at least one byte, so this is caught before anything is
    /// allocated.
    #[error("length {len} is more than the {left} bytes left can hold")]
    LengthExceedsInput {
        /// The length the field claims (elements, or bytes).
        len: u64,
        /// Bytes left after the length field.
        left: usize,
    },
    /// The first byte is not the format version 131.
    #[error("expected version byte 131, found {0}")]
    BadVersion(u8),
    /// A byte where a term starts is not a tag of the format.
    #[error("unknown tag {0}")]
    UnknownTag(u8),
    /// A field that must be of one kind of term holds a tag of another, e.g.
    /// the node of a pid is not an atom, or the arity of an export is not an
    /// integer.
    #[error("expected {expected}, found tag {found}")]
    UnexpectedTag {
        /// What the field must hold.
        expected: &'static str,
        /// The tag found.
        found: u8,
    },
    /// Bytes follow a complete term (`binary_to_term/1` ignores them; this
    /// crate does not).
    #[error("{0} trailing bytes after the term")]
    TrailingBytes(usize),
    /// `ATOM_CACHE_REF` refers to the atom cache of a distribution
    /// connection, which only exists with a distribution header.
    #[error("ATOM_CACHE_REF needs a distribution header")]
    AtomCacheRef,
    /// The input starts with a distribution header (tag 68 or 69), which only
    /// the distribution protocol uses.
    #[error("distribution headers are not supported")]
    DistributionHeader,
    /// The old `FUN_EXT` (tag 117), which OTP 23 stopped reading.
    #[error("FUN_EXT is not supported (OTP 23 and later reject it too)")]
    FunExt,
    /// `LOCAL_EXT` (tag 121) can only be decoded by the node that encoded it.
    #[error("LOCAL_EXT can only be decoded by the node that wrote it")]
    LocalExt,
    /// An atom's bytes are not UTF-8 (in the UTF-8 atom tags).
    #[error("atom text is not valid UTF-8")]
    InvalidUtf8,
    /// An atom has more than 255 characters (or its length field allows more
    /// bytes than 255 characters can take).
    #[error("atom longer than 255 characters")]
    AtomTooLong,
    /// The process-wide atom table is full.
    #[error("system_limit: the atom table is full")]
    AtomTableFull,
    /// A `NEW_FLOAT_EXT` holds NaN or an infinity, which Erlang floats
    /// cannot be.
    #[error("float is not finite")]
    NonFiniteFloat,
    /// A `FLOAT_EXT` string is not a float as ERTS writes them
    /// (`[+-]digits.digits[e[+-]digits]`), or overflows.
    #[error("FLOAT_EXT text is not a finite float")]
    BadFloatText,
    /// A bignum with more bytes than ERTS allows (524280).
    #[error("bignum of {0} bytes is larger than the limit")]
    BigTooLarge(u64),
    /// A `BIT_BINARY_EXT` whose count of bits in the last byte is not 1 to 8.
    #[error("bit count {0} of BIT_BINARY_EXT is not between 1 and 8")]
    BadBitCount(u8),
    /// A `BIT_BINARY_EXT` of no bytes (OTP 27 rejects it; an empty
    /// bitstring is an empty `BINARY_EXT`).
    #[error("BIT_BINARY_EXT without bytes")]
    EmptyBitBinary,
    /// Two keys of a `MAP_EXT` are exactly equal.
    #[error("duplicate map key")]
    DuplicateMapKey,
    /// A creation in an old pid, port or reference format above 3.
    #[error("creation {0} does not fit the old format (at most 3)")]
    BadCreation(u32),
    /// A pid of this node (`nonode@nohost`, creation 0) whose number does
    /// not fit the 28 bits a local pid has.
    #[error("pid number {0} is too large for a local pid")]
    BadLocalPid(u32),
    /// A port of this node whose number does not fit the 60 bits a local
    /// port has.
    #[error("port number {0} is too large for a local port")]
    BadLocalPort(u64),
    /// A reference with no id words or more than 5, or whose first id word
    /// is too large for the format or for a local reference (18 bits).
    #[error("malformed reference: {0}")]
    BadReference(&'static str),
    /// An export's arity is negative or above 255.
    #[error("export arity {0} is not between 0 and 255")]
    BadArity(i64),
    /// An integer field of a fun or an export does not fit a small integer.
    #[error("integer field does not fit a small integer")]
    NotSmall,
    /// A `NEW_FUN_EXT` with more than 255 free variables.
    #[error("fun with {0} free variables (at most 255)")]
    TooManyFreeVariables(u32),
    /// The size field of a `NEW_FUN_EXT` disagrees with its contents.
    #[error("NEW_FUN_EXT size field says {declared} bytes, the fun has {actual}")]
    FunSizeMismatch {
        /// The size the field declares.
        declared: u32,
        /// The size of the fun as read.
        actual: u64,
    },
    /// The uncompressed size of a compressed term is larger than
    /// [`MAX_UNCOMPRESSED_SIZE`](super::MAX_UNCOMPRESSED_SIZE) or than the
    /// compressed bytes could possibly expand to.
    #[error("uncompressed size {declared} is out of reach of the {compressed} compressed bytes")]
    BadUncompressedSize {
        /// The size the header declares.
        declared: u32,
        /// Bytes of compressed data.
        compressed: usize,
    },
    /// The compressed data is not a valid zlib stream.
    #[error("corrupt zlib data: {0}")]
    Zlib(String),
    /// The compressed data expands to another size than the header says.
    #[error("compressed term expands to {actual} bytes, the header says {declared}")]
    UncompressedSizeMismatch {
        /// The size the header declares.
        declared: u32,
        /// The size the data expands to (or more than declared, if bigger).
        actual: u64,
    },
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, offset: usize) -> DecodeError {
        DecodeError { kind, offset, in_compressed: false }
    }

    pub(crate) fn inside_compressed(mut self) -> DecodeError {
        self.in_compressed = true;
        self
    }

    /// What is wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.kind
    }

    /// The byte offset where it went wrong (see the type's documentation).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Is the offset one into the uncompressed bytes of a compressed term?
    pub fn in_compressed(&self) -> bool {
        self.in_compressed
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.in_compressed {
            write!(f, "{} at byte {} of the uncompressed term", self.kind, self.offset)
        } else {
            write!(f, "{} at byte {}", self.kind, self.offset)
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}

/// Why a term cannot be encoded.
///
/// Terms built with this crate's API can always be encoded unless they are
/// larger than the format's 32-bit length fields allow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A length does not fit the 32-bit field the format has for it: a tuple,
    /// list, map or binary of more than 4294967295 elements or bytes, a fun
    /// with more than that many free variables.
    #[error("{what} of length {len} does not fit the format's 32-bit length field")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its length.
        len: u64,
    },
    /// A bignum with more bytes than ERTS allows (524280), which no node
    /// could decode.
    #[error("bignum of {0} bytes is larger than the limit")]
    BigTooLarge(u64),
    /// A reference without id words or with more than 5, which no node can
    /// decode.
    #[error("reference with {0} id words (the format allows 1 to 5)")]
    BadReference(usize),
    /// A pid, port or reference of this node with a number ERTS never gives
    /// one (a pid number above 28 bits, a port number above 60 bits, a first
    /// reference id word above 18 bits), which no node can decode. The text
    /// syntax can write them, e.g. `<0.4294967295.0>`.
    #[error("{what} of this node with number {number}, beyond what ERTS allows")]
    BadLocalIdentifier {
        /// `pid`, `port` or `reference`.
        what: &'static str,
        /// The number out of range.
        number: u64,
    },
    /// A compression level outside `0..=9`.
    #[error("compression level {0} is not between 0 and 9")]
    BadCompressionLevel(u32),
    /// A result to be copied from encoded bytes (`encoded::built`) that
    /// are not a plain term there.
    #[error("the bytes of a result's part at byte {at} are not a term")]
    PartNotATerm {
        /// Where the part was to start.
        at: u32,
    },
}
