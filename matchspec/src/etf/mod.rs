//! The external term format: Erlang's `term_to_binary/1` and
//! `binary_to_term/1`, byte for byte as OTP 27 does them.
//!
//! # Decoding
//!
//! [`decode`] reads every tag OTP 27 reads: all integer, float, atom, tuple,
//! list, binary and map tags, the pid, port and reference tags old and new,
//! `EXPORT_EXT`, `NEW_FUN_EXT`, and the compressed wrapper (tag 80, zlib).
//! `ATOM_CACHE_REF`, distribution headers, the old `FUN_EXT` and `LOCAL_EXT`
//! are rejected with their own [`DecodeErrorKind`].
//!
//! Bytes come from outside, so decoding is defensive: it never panics, never
//! recurses (a list nested a million levels deep decodes with an explicit
//! stack), and never allocates more than the input can justify. Every
//! element of a tuple, list or map takes at least one byte, so a length field
//! larger than the bytes left is an error before anything is reserved; a
//! compressed term's declared size is checked against
//! [`MAX_UNCOMPRESSED_SIZE`] and against what zlib can expand the data to,
//! and the output only grows as data actually comes out. Whatever OTP 27's
//! `binary_to_term/1` rejects is an error here too, with the byte offset
//! where it went wrong; a few things it lets through are errors as well
//! (see [`DecodeErrorKind`]), chief among them bytes after the term.
//!
//! Terms OTP normalises are normalised the same way: a reference of this
//! node with fewer than three id words gets zero words added, a bignum that
//! fits in a small integer becomes one. Map keys may come in any order;
//! duplicate keys are an error, as in OTP.
//!
//! # Encoding
//!
//! [`encode`] writes what `term_to_binary/1` writes with default options
//! (minor version 2): UTF-8 atom tags, `NEW_FLOAT_EXT`, the smallest integer
//! tag, `STRING_EXT` for lists of bytes shorter than 65536, `NEW_PID_EXT`,
//! `V4_PORT_EXT`, `NEWER_REFERENCE_EXT`, `EXPORT_EXT`, `NEW_FUN_EXT`,
//! `MAP_EXT`. The output is identical to OTP 27's for every term (and
//! [`encode_for`]'s to the given release's), with one exception that no
//! encoder outside the writing node can avoid: the order of map entries.
//!
//! OTP writes a map in the order it stores it:
//!
//! * A map of at most 32 keys is a sorted array, in the exact term order
//!   ([`TermRef::cmp_exact`]) except that two *atom* keys compare by their
//!   index in the node's atom table. The atoms ERTS creates at boot have
//!   the same index on every node of a release, and this crate knows it;
//!   the index of any other atom depends on which atoms the node happened
//!   to create first, and this crate puts those after the boot atoms in
//!   the order it met them. A map decoded from the external term format
//!   keeps the order it was written in.
//! * A larger map is a hash trie, written in the order of OTP's internal
//!   hash of the keys. This crate computes that hash (a port of
//!   `make_internal_hash` of erts 15 and erts 17, checked against OTP 27.3
//!   and OTP 29.1), so maps whose keys are made of numbers, binaries,
//!   bitstrings, lists, tuples, small maps, boot atoms and this node's
//!   references come out identical. The hash of any other atom mixes in its
//!   atom-table index, that of an export fun or another node's identifier a
//!   pointer, and that of this node's pids and ports the layout of the
//!   node's process and port tables; a large map with any of these anywhere
//!   in its keys is written in the order it was decoded in, else in sorted
//!   order.
//!
//! [`encode_deterministic`] writes every map in sorted order, as
//! `term_to_binary(Term, [deterministic])` does; its output is identical to
//! OTP's for every term. Either way, [`decode`] and `binary_to_term/1`
//! read back the same term.
//!
//! [`encode_compressed`] wraps the encoding in zlib like the `compressed`
//! option. The zlib stream is valid and OTP decodes it, but it is not
//! byte-identical to the one OTP's bundled zlib writes.
//!
//! ```
//! use matchspec::etf;
//! use matchspec::term::Term;
//!
//! let t = Term::parse("{ok, [1, 2.5, <<\"bin\">>], #{key => \"v\"}}").unwrap();
//! let bytes = etf::encode(t.as_ref()).unwrap();
//! assert_eq!(&bytes[..4], &[131, 104, 3, 119]); // version, SMALL_TUPLE_EXT of 3, an atom
//! assert_eq!(etf::decode(&bytes).unwrap(), t);
//!
//! let err = etf::decode(&bytes[..bytes.len() - 1]).unwrap_err();
//! assert_eq!(err.to_string(), "unexpected end of input at byte 45");
//! ```
//!
//! [`TermRef::cmp_exact`]: crate::term::TermRef::cmp_exact

mod decode;
mod encode;
mod error;
pub(crate) mod scan;

#[cfg(test)]
mod tests;

pub use decode::{
    decode, decode_into, decode_prefix, decode_subterm, term_extent, term_len, term_len_indexed,
};
pub(crate) use encode::encode_inside;
pub use encode::{
    encode, encode_compressed, encode_compressed_for, encode_deterministic, encode_for,
};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use scan::PlainIndex;

/// The version byte every encoding starts with.
pub const VERSION: u8 = 131;

/// The largest uncompressed size a compressed term may declare (1 GiB).
///
/// OTP accepts up to 4 GiB if the data really expands that far; a limit
/// keeps a few bytes of input from claiming gigabytes. A declared size is
/// also rejected if it is larger than zlib could expand the data to (1032
/// times its length), and the output buffer only grows as data comes out.
pub const MAX_UNCOMPRESSED_SIZE: u32 = 1 << 30;

/// The tag bytes of the format (`erts/emulator/beam/external.h`).
pub(crate) mod tag {
    pub const NEW_FLOAT_EXT: u8 = 70;
    pub const BIT_BINARY_EXT: u8 = 77;
    pub const COMPRESSED: u8 = 80;
    pub const ATOM_CACHE_REF: u8 = 82;
    pub const NEW_PID_EXT: u8 = 88;
    pub const NEW_PORT_EXT: u8 = 89;
    pub const NEWER_REFERENCE_EXT: u8 = 90;
    /// An integer of 0 to 255, in one byte.
    pub const SMALL_INTEGER_EXT: u8 = 97;
    /// A signed integer in 4 bytes, big-endian.
    pub const INTEGER_EXT: u8 = 98;
    pub const FLOAT_EXT: u8 = 99;
    pub const ATOM_EXT: u8 = 100;
    pub const REFERENCE_EXT: u8 = 101;
    pub const PORT_EXT: u8 = 102;
    pub const PID_EXT: u8 = 103;
    /// A tuple of at most 255 elements, its arity in one byte.
    pub const SMALL_TUPLE_EXT: u8 = 104;
    pub const LARGE_TUPLE_EXT: u8 = 105;
    pub const NIL_EXT: u8 = 106;
    pub const STRING_EXT: u8 = 107;
    pub const LIST_EXT: u8 = 108;
    pub const BINARY_EXT: u8 = 109;
    pub const SMALL_BIG_EXT: u8 = 110;
    pub const LARGE_BIG_EXT: u8 = 111;
    pub const NEW_FUN_EXT: u8 = 112;
    pub const EXPORT_EXT: u8 = 113;
    pub const NEW_REFERENCE_EXT: u8 = 114;
    pub const SMALL_ATOM_EXT: u8 = 115;
    pub const MAP_EXT: u8 = 116;
    pub const FUN_EXT: u8 = 117;
    pub const ATOM_UTF8_EXT: u8 = 118;
    /// An atom of at most 255 UTF-8 bytes, its length in one byte.
    pub const SMALL_ATOM_UTF8_EXT: u8 = 119;
    pub const V4_PORT_EXT: u8 = 120;
    pub const LOCAL_EXT: u8 = 121;
    pub const DIST_HEADER: u8 = 68;
    pub const DIST_FRAG_HEADER: u8 = 69;
}

/// Limits ERTS puts on what it decodes and encodes.
pub(crate) mod limit {
    /// Most bytes of a bignum (`BIG_ARITY_MAX` 64-bit digits).
    pub const BIG_BYTES: u64 = ((1 << 16) - 1) * 8;
    /// Most bytes a UTF-8 atom may take (255 characters of up to 4 bytes).
    pub const ATOM_UTF8_BYTES: usize = 4 * 255;
    /// Most characters of a Latin-1 atom.
    pub const ATOM_LATIN1_BYTES: usize = 255;
    /// Bits of the number of a pid of this node.
    pub const LOCAL_PID_NUMBER_BITS: u32 = 28;
    /// Largest number of a port of this node.
    pub const LOCAL_PORT_NUMBER_MAX: u64 = (1 << 60) - 1;
    /// Bits of the first id word of a reference of this node, and of any
    /// reference in the old formats.
    pub const REF_WORD0_BITS: u32 = 18;
    /// Most id words of a reference.
    pub const REF_WORDS: usize = 5;
    /// Id words of a reference of this node.
    pub const LOCAL_REF_WORDS: usize = 3;
    /// Largest creation of the old formats (`PID_EXT`, `PORT_EXT`, ...).
    pub const TINY_CREATION: u32 = 3;
    /// Longest list `STRING_EXT` can hold.
    pub const STRING_LEN: usize = 0xffff;
    /// Most keys of a map stored as a sorted array; larger maps are hash tries.
    pub const FLATMAP_KEYS: usize = 32;
    /// Most free variables of a fun (`MAX_ARG`).
    pub const FREE_VARS: u32 = 255;
    /// How many times longer than its input zlib output can be.
    pub const ZLIB_RATIO: u64 = 1032;
    /// Smallest and largest small integer of a 64-bit node: integers outside
    /// are bignums there (they are 60-bit, ours are 61-bit).
    pub const OTP_MIN_SMALL: i64 = -(1 << 59);
    /// See [`OTP_MIN_SMALL`].
    pub const OTP_MAX_SMALL: i64 = (1 << 59) - 1;
}

/// Is this the identity of this node, whose pids, ports and references
/// Erlang prints as `<0.N.S>`?
pub(crate) fn is_local_node(node: crate::term::Atom, creation: u32) -> bool {
    node == crate::term::Atom::NONODE && creation == 0
}
