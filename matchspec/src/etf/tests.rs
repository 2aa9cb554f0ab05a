//! Unit tests of the external term format: malformed input, limits, depth.
//! The golden encodings from OTP are checked in `tests/etf.rs`.

use super::*;
use crate::term::{Atom, ClosureParts, Heap, Term, Word};

/// Decoding `bytes` fails with `kind` at `offset`.
#[track_caller]
fn check_error(bytes: &[u8], kind: DecodeErrorKind, offset: usize) {
    match decode(bytes) {
        Ok(t) => panic!("{bytes:?} decodes as {t}"),
        Err(e) => {
            assert_eq!((e.kind(), e.offset()), (&kind, offset), "{bytes:?}: {e}");
        }
    }
}

/// `text` encodes as `bytes` and decodes back.
#[track_caller]
fn check(text: &str, bytes: &[u8]) {
    let term = Term::parse(text).unwrap();
    assert_eq!(encode(term.as_ref()).unwrap(), bytes, "{text}");
    assert_eq!(decode(bytes).unwrap(), term, "{text}");
}

const NONODE: &[u8] =
    &[119, 13, b'n', b'o', b'n', b'o', b'd', b'e', b'@', b'n', b'o', b'h', b'o', b's', b't'];

fn with(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn malformed_input() {
    use DecodeErrorKind as E;
    let cases: &[(&[u8], DecodeErrorKind, usize)] = &[
        (&[], E::UnexpectedEnd, 0),
        (&[131], E::UnexpectedEnd, 1),
        (&[130, 97, 1], E::BadVersion(130), 0),
        (&[131, 200], E::UnknownTag(200), 1),
        (&[131, 97, 1, 2, 3], E::TrailingBytes(2), 3),
        (&[131, 98, 0, 0], E::UnexpectedEnd, 4),
        (&[131, 104, 2, 97, 1], E::UnexpectedEnd, 5),
        (&[131, 104, 3, 97, 1], E::LengthExceedsInput { len: 3, left: 2 }, 3),
        (&[131, 108, 255, 255, 255, 255, 106], E::LengthExceedsInput { len: 1 << 32, left: 1 }, 6),
        (
            &[131, 105, 255, 255, 255, 255],
            E::LengthExceedsInput { len: u32::MAX as u64, left: 0 },
            6,
        ),
        (&[131, 116, 0, 0, 0, 2, 97, 1], E::LengthExceedsInput { len: 4, left: 2 }, 6),
        (&[131, 116, 128, 0, 0, 0, 97, 1], E::LengthExceedsInput { len: 1 << 32, left: 2 }, 6),
        (
            &[131, 109, 255, 255, 255, 255, 0],
            E::LengthExceedsInput { len: u32::MAX as u64, left: 1 },
            6,
        ),
        (&[131, 107, 255, 255, 1], E::UnexpectedEnd, 5),
        (&[131, 111, 255, 255, 255, 255, 0], E::BigTooLarge(u32::MAX as u64), 2),
        (&[131, 110, 5, 0, 1], E::UnexpectedEnd, 5),
        (&[131, 70, 127, 248, 0, 0, 0, 0, 0, 0], E::NonFiniteFloat, 1),
        (&[131, 70, 255, 240, 0, 0, 0, 0, 0, 0], E::NonFiniteFloat, 1),
        (&[131, 119, 1, 255], E::InvalidUtf8, 3),
        (&[131, 119, 3, 0xed, 0xa0, 0x80], E::InvalidUtf8, 3),
        (&[131, 118, 3, 253], E::AtomTooLong, 2),
        (&[131, 100, 1, 0], E::AtomTooLong, 2),
        (&[131, 82, 0], E::AtomCacheRef, 1),
        (&[131, 68, 0], E::DistributionHeader, 1),
        (&[131, 117, 0, 0, 0, 0], E::FunExt, 1),
        (&[131, 121, 0, 0, 0, 0, 106], E::LocalExt, 1),
        (&[131, 77, 0, 0, 0, 1, 0, 0], E::BadBitCount(0), 6),
        (&[131, 77, 0, 0, 0, 1, 9, 0], E::BadBitCount(9), 6),
        (&[131, 77, 0, 0, 0, 0, 3], E::EmptyBitBinary, 1),
        (&[131, 116, 0, 0, 0, 2, 97, 1, 97, 1, 97, 1, 97, 2], E::DuplicateMapKey, 1),
        (&[131, 116, 0, 0, 0, 2, 97, 1, 97, 1, 98, 0, 0, 0, 1, 97, 2], E::DuplicateMapKey, 1),
        (
            &[131, 113, 97, 1],
            E::UnexpectedTag { expected: "an atom (the module of an export)", found: 97 },
            2,
        ),
        (&[131, 113, 119, 1, b'm', 119, 1, b'f', 98, 0, 0, 1, 0], E::BadArity(256), 8),
        (&[131, 113, 119, 1, b'm', 119, 1, b'f', 98, 255, 255, 255, 255], E::BadArity(-1), 8),
        (
            &[131, 113, 119, 1, b'm', 119, 1, b'f', 104, 0],
            E::UnexpectedTag { expected: "an integer (the arity of an export)", found: 104 },
            8,
        ),
        (
            &[131, 113, 119, 1, b'm', 119, 1, b'f', 110, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            E::NotSmall,
            8,
        ),
        (
            &[131, 88, 97, 1],
            E::UnexpectedTag { expected: "an atom (the node of a pid)", found: 97 },
            2,
        ),
        (&[131, 90, 0, 0, 106], E::BadReference("no id words"), 2),
        (&[131, 90, 0, 6, 106], E::BadReference("more than 5 id words"), 2),
        (&[131, 80, 0, 0], E::UnexpectedEnd, 4),
        (
            &[131, 80, 255, 255, 255, 255, 0],
            E::BadUncompressedSize { declared: u32::MAX, compressed: 1 },
            2,
        ),
        (
            &[131, 80, 0, 1, 0, 0, 120, 156],
            E::BadUncompressedSize { declared: 65536, compressed: 2 },
            2,
        ),
    ];
    for (bytes, kind, offset) in cases {
        check_error(bytes, kind.clone(), *offset);
    }
}

#[test]
fn malformed_identifiers() {
    use DecodeErrorKind as E;
    let ab: &[u8] = &[119, 3, b'a', b'@', b'b'];
    // A pid of this node keeps 28 bits of number.
    check_error(&with(&[&[131, 88], NONODE, &[16, 0, 0, 0], &[0; 8]]), E::BadLocalPid(1 << 28), 17);
    // Another node's pid may have any number.
    assert!(decode(&with(&[&[131, 88], ab, &[16, 0, 0, 0], &[0; 8]])).is_ok());
    check_error(&with(&[&[131, 103], ab, &[0, 0, 0, 1, 0, 0, 0, 0, 4]]), E::BadCreation(4), 15);
    check_error(&with(&[&[131, 102], ab, &[0, 0, 0, 1, 4]]), E::BadCreation(4), 11);
    check_error(
        &with(&[&[131, 120], NONODE, &[16, 0, 0, 0, 0, 0, 0, 0], &[0; 4]]),
        E::BadLocalPort(1 << 60),
        17,
    );
    check_error(
        &with(&[&[131, 90, 0, 3], NONODE, &[0, 0, 0, 0], &[0, 4, 0, 0], &[0; 8]]),
        E::BadReference("first id word above 18 bits"),
        23,
    );
    check_error(
        &with(&[&[131, 101], ab, &[0, 4, 0, 0, 1]]),
        E::BadReference("first id word above 18 bits"),
        7,
    );
    // Another node's reference in the newest format may use all 32 bits.
    assert!(decode(&with(&[&[131, 90, 0, 1], ab, &[0, 0, 0, 1], &[255; 4]])).is_ok());
}

#[test]
fn malformed_funs() {
    use DecodeErrorKind as E;
    let fun = |size: u32, free: u32, tail: &[u8]| {
        with(&[
            &[131, 112],
            &size.to_be_bytes(),
            &[1],
            &[7; 16],
            &[0, 0, 0, 0],
            &free.to_be_bytes(),
            &[119, 1, b'm', 97, 0, 97, 0],
            &[88],
            NONODE,
            &[0; 12],
            tail,
        ])
    };
    let good = fun(65, 1, &[106]);
    let t = decode(&good).unwrap();
    assert_eq!(encode(t.as_ref()).unwrap(), good);
    check_error(&fun(66, 1, &[106]), E::FunSizeMismatch { declared: 66, actual: 65 }, 2);
    check_error(&fun(65, 256, &[106]), E::TooManyFreeVariables(256), 27);
    check_error(&fun(65, 2, &[106]), E::LengthExceedsInput { len: 2, left: 1 }, 66);
}

#[test]
fn error_messages() {
    for (bytes, expect) in [
        (&[][..], "unexpected end of input at byte 0"),
        (&[131, 200], "unknown tag 200 at byte 1"),
        (&[131, 97, 1, 2], "1 trailing bytes after the term at byte 3"),
        (&[131, 119, 1, 255], "atom text is not valid UTF-8 at byte 3"),
        (&[131, 82, 0], "ATOM_CACHE_REF needs a distribution header at byte 1"),
        (
            &[131, 108, 255, 255, 255, 255, 106],
            "length 4294967296 is more than the 1 bytes left can hold at byte 6",
        ),
    ] {
        assert_eq!(decode(bytes).unwrap_err().to_string(), expect);
    }
}

#[test]
fn encodings() {
    for (text, bytes) in [
        ("0", &[131, 97, 0][..]),
        ("-1", &[131, 98, 255, 255, 255, 255]),
        ("4294967296", &[131, 110, 5, 0, 0, 0, 0, 0, 1]),
        ("-1152921504606846976", &[131, 110, 8, 1, 0, 0, 0, 0, 0, 0, 0, 16]),
        ("[]", &[131, 106]),
        ("\"\"", &[131, 106]),
        ("[1 | 2]", &[131, 108, 0, 0, 0, 1, 97, 1, 97, 2]),
        ("{}", &[131, 104, 0]),
        ("<<>>", &[131, 109, 0, 0, 0, 0]),
        ("<<1:3>>", &[131, 77, 0, 0, 0, 1, 3, 32]),
        ("#{}", &[131, 116, 0, 0, 0, 0]),
        ("fun m:f/1", &[131, 113, 119, 1, b'm', 119, 1, b'f', 97, 1]),
    ] {
        check(text, bytes);
    }
}

#[test]
fn local_references_have_three_words() {
    let short = Term::parse("#Ref<0.5>").unwrap();
    let bytes = encode(short.as_ref()).unwrap();
    assert_eq!(bytes, with(&[&[131, 90, 0, 3], NONODE, &[0, 0, 0, 0], &[0, 0, 0, 5], &[0; 8]]));
    let one_word = with(&[&[131, 90, 0, 1], NONODE, &[0, 0, 0, 0], &[0, 0, 0, 5]]);
    assert_eq!(encode(decode(&one_word).unwrap().as_ref()).unwrap(), bytes);
    // Another node's references keep their words.
    let remote = Term::parse("#Ref<'a@b'.1.5>").unwrap();
    assert_eq!(encode(remote.as_ref()).unwrap()[1..4], [90, 0, 1]);
}

#[test]
fn unencodable_terms() {
    let mut heap = Heap::new();
    let none = heap.reference(Atom::new("a@b"), 1, &[]);
    assert_eq!(encode(heap.view(none)), Err(EncodeError::BadReference(0)));
    let six = heap.reference(Atom::new("a@b"), 1, &[1; 6]);
    assert_eq!(encode(heap.view(six)), Err(EncodeError::BadReference(6)));
    let t = Term::from(1);
    assert_eq!(encode_compressed(t.as_ref(), 10), Err(EncodeError::BadCompressionLevel(10)));
}

#[test]
fn closures_round_trip() {
    let mut heap = Heap::new();
    let pid = heap.pid(Atom::NONODE, 0, 0, 0);
    let free = [heap.int(1), heap.string("two"), Word::atom(Atom::OK)];
    let fun = heap.closure(&ClosureParts {
        arity: 2,
        uniq: [9; 16],
        index: 3,
        module: Atom::new("mod"),
        old_index: 3,
        old_uniq: u32::MAX - 4,
        pid,
        free: &free,
    });
    let bytes = encode(heap.view(fun)).unwrap();
    let back = decode(&bytes).unwrap();
    assert_eq!(back.as_ref(), heap.view(fun));
    assert_eq!(encode(back.as_ref()).unwrap(), bytes);
    // The old uniq is a C int in ERTS, so it is written as the integer -5.
    assert!(bytes.windows(5).any(|w| w == [98, 255, 255, 255, 251]));
}

#[test]
fn compressed() {
    let t = Term::parse("[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", {x, x, x, x, x, x, x, x}]")
        .unwrap();
    let plain = encode(t.as_ref()).unwrap();
    for level in 1..=9 {
        let bytes = encode_compressed(t.as_ref(), level).unwrap();
        assert_eq!(bytes[1], tag::COMPRESSED);
        assert!(bytes.len() < plain.len());
        assert_eq!(decode(&bytes).unwrap(), t);
    }
    assert_eq!(encode_compressed(t.as_ref(), 0).unwrap(), plain);
    // Compression that does not pay gives the plain encoding, as in OTP.
    let small = Term::from(1);
    assert_eq!(encode_compressed(small.as_ref(), 6).unwrap(), [131, 97, 1]);

    let bytes = encode_compressed(t.as_ref(), 6).unwrap();
    let mut trailing = bytes.clone();
    trailing.push(0);
    check_error(&trailing, DecodeErrorKind::TrailingBytes(1), bytes.len());
    let mut wrong_size = bytes.clone();
    let size = u32::from_be_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]);
    let declared = size - 1;
    wrong_size[2..6].copy_from_slice(&declared.to_be_bytes());
    let actual = u64::from(size);
    check_error(&wrong_size, DecodeErrorKind::UncompressedSizeMismatch { declared, actual }, 2);
    let cut = &bytes[..bytes.len() - 3];
    assert!(decode(cut).is_err());
    let mut corrupt = bytes.clone();
    corrupt[6] ^= 0xff;
    assert!(matches!(decode(&corrupt).unwrap_err().kind(), DecodeErrorKind::Zlib(_)));
}

#[test]
fn errors_inside_compressed_terms_count_uncompressed_bytes() {
    let inner: &[u8] = &[104, 2, 97, 1, 200];
    let mut z = flate2::Compress::new(flate2::Compression::default(), true);
    let mut data = Vec::with_capacity(64);
    z.compress_vec(inner, &mut data, flate2::FlushCompress::Finish).unwrap();
    let bytes = with(&[&[131, 80, 0, 0, 0, 5], &data]);
    let err = decode(&bytes).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.in_compressed()),
        (&DecodeErrorKind::UnknownTag(200), 5, true)
    );
    assert_eq!(err.to_string(), "unknown tag 200 at byte 5 of the uncompressed term");
}

#[test]
fn failed_decode_leaves_the_heap_alone() {
    let mut heap = Heap::new();
    let one = heap.int(1 << 62);
    let len = heap.len();
    assert!(decode_into(&[131, 104, 2, 109, 0, 0, 0, 1, 1, 200], &mut heap).is_err());
    assert_eq!(heap.len(), len);
    assert_eq!(heap.view(one).to_string(), "4611686018427387904");
}

const DEPTH: usize = 1_000_000;

#[test]
fn deep_lists_decode_and_encode() {
    // [[[...[]...]]]: each level is a one-element LIST_EXT ending in NIL_EXT.
    let mut bytes = vec![131];
    for _ in 0..DEPTH {
        bytes.extend_from_slice(&[108, 0, 0, 0, 1]);
    }
    bytes.push(106);
    bytes.extend(std::iter::repeat_n(106, DEPTH));
    let t = decode(&bytes).unwrap();
    let mut depth = 0;
    let mut cur = t.as_ref();
    while let Some(cons) = cur.as_cons() {
        assert!(cons.tail().is_nil());
        cur = cons.head();
        depth += 1;
    }
    assert_eq!(depth, DEPTH);
    assert_eq!(encode(t.as_ref()).unwrap(), bytes);
}

#[test]
fn deep_tuples_decode_and_encode() {
    let mut heap = Heap::new();
    let mut w = Word::NIL;
    for _ in 0..DEPTH {
        w = heap.tuple(&[w]);
    }
    let bytes = encode(heap.view(w)).unwrap();
    assert_eq!(bytes.len(), 1 + 2 * DEPTH + 1);
    assert_eq!(&bytes[..5], &[131, 104, 1, 104, 1]);
    let t = decode(&bytes).unwrap();
    assert!(t.as_ref() == heap.view(w));
}

#[test]
fn deep_maps_decode_and_encode() {
    let mut bytes = vec![131];
    for _ in 0..DEPTH / 10 {
        bytes.extend_from_slice(&[116, 0, 0, 0, 1, 97, 0]);
    }
    bytes.push(106);
    let t = decode(&bytes).unwrap();
    assert_eq!(encode(t.as_ref()).unwrap(), bytes);
}

/// Random bytes after a version byte never panic, whatever they decode to.
#[test]
fn random_input_does_not_panic() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let tags = [
        70, 77, 80, 88, 89, 90, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110,
        111, 112, 113, 114, 115, 116, 118, 119, 120,
    ];
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let mut bytes = vec![131, tags[(next() % tags.len() as u64) as usize]];
        for _ in 0..len {
            let r = next();
            // Small numbers and tags are likelier than arbitrary bytes.
            bytes.push(match r % 4 {
                0 => tags[(r >> 8) as usize % tags.len()],
                1 => (r >> 8) as u8 % 4,
                _ => (r >> 8) as u8,
            });
        }
        if let Ok(t) = decode(&bytes) {
            let again = encode(t.as_ref()).unwrap();
            assert_eq!(decode(&again).unwrap(), t, "{bytes:?}");
        }
    }
}

#[test]
fn hash_nibble_order() {
    assert_eq!(
        crate::term::erts_hash::nibbles_reversed(0x0123_4567_89ab_cdef),
        0xfedc_ba98_7654_3210
    );
    assert_eq!(crate::term::erts_hash::nibbles_reversed(1), 1 << 60);
}
