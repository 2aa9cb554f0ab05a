//! The external term format against golden encodings written by OTP 27
//! and OTP 29 (`testdata/etf/otp27.terms` and `otp29.terms`, made by
//! `testdata/etf/gen.escript`; its header explains each kind of line).
//! Each file is checked with the answers of its release: the two differ in
//! the order of maps of over 32 keys (`Change::Erts17MapHash`).
//!
//! The local funs of the `roundtrip` lines differ between the files (their
//! module's MD5 and `OldUniq` come from each release's compiler), which
//! these lines allow: a local fun has no text syntax, so a line holds only
//! bytes, and the check is that decoding them and encoding the result gives
//! the same bytes back.

use std::sync::LazyLock;

use matchspec::Release;
use matchspec::etf::{self, DecodeErrorKind};
use matchspec::syntax::parse_terms;
use matchspec::term::{Atom, Term, TermRef};

/// One line of the golden file.
#[derive(Debug)]
enum Golden {
    /// `{Term, Bytes}`: `term_to_binary(Term)`, both ways.
    Exact(Term, Vec<u8>),
    /// `{deterministic, Term, Bytes}`: `term_to_binary(Term, [deterministic])`.
    Deterministic(Term, Vec<u8>),
    /// `{compressed, Term, Bytes}`: decodes to Term.
    Compressed(Term, Vec<u8>),
    /// `{decode, Term, Bytes}`: decodes to Term.
    Decode(Term, Vec<u8>),
    /// `{roundtrip, Text, Bytes}`: decodes, and encodes back to Bytes.
    Roundtrip(String, Vec<u8>),
    /// `{error, Text, Bytes}`: does not decode.
    Error(String, Vec<u8>),
}

static GOLDEN27: LazyLock<Vec<Golden>> = LazyLock::new(|| read_golden(Release::Otp27));
static GOLDEN29: LazyLock<Vec<Golden>> = LazyLock::new(|| read_golden(Release::Otp29));

/// The golden lines OTP `release` wrote.
fn goldens(release: Release) -> &'static [Golden] {
    match release {
        Release::Otp27 => &GOLDEN27,
        Release::Otp29 => &GOLDEN29,
    }
}

fn read_golden(release: Release) -> Vec<Golden> {
    let name = format!("otp{}.terms", release.major());
    let path = format!("{}/../testdata/etf/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let terms = parse_terms(&text).unwrap_or_else(|e| panic!("parse {name}:\n{e}"));
    terms.iter().map(|t| golden(t.as_ref())).collect()
}

fn golden(line: TermRef<'_>) -> Golden {
    let tuple = line.as_tuple().unwrap_or_else(|| panic!("not a tuple: {line}"));
    let field = |i: usize| tuple.get(i).unwrap_or_else(|| panic!("short line: {line}"));
    let bytes = |i: usize| {
        let bits = field(i).as_bits().unwrap_or_else(|| panic!("no bytes: {line}"));
        bits.bytes().to_vec()
    };
    let text = |i: usize| {
        let codes = field(i).proper_list().unwrap_or_else(|| panic!("no text: {line}"));
        codes.iter().filter_map(|c| c.as_i64().and_then(|c| char::from_u32(c as u32))).collect()
    };
    if tuple.len() == 2 {
        return Golden::Exact(field(0).to_owned(), bytes(1));
    }
    match field(0).as_atom().map(Atom::name) {
        Some("deterministic") => Golden::Deterministic(field(1).to_owned(), bytes(2)),
        Some("compressed") => Golden::Compressed(field(1).to_owned(), bytes(2)),
        Some("decode") => Golden::Decode(field(1).to_owned(), bytes(2)),
        Some("roundtrip") => Golden::Roundtrip(text(1), bytes(2)),
        Some("error") => Golden::Error(text(1), bytes(2)),
        _ => panic!("unknown line: {line}"),
    }
}

/// Checks one golden line of `release`; returns what is wrong.
fn check(line: &Golden, release: Release) -> Result<(), String> {
    match line {
        Golden::Exact(term, bytes) => {
            check_encode(term, bytes, etf::encode_for(term.as_ref(), release))?;
            check_decode(term, bytes)
        }
        Golden::Deterministic(term, bytes) => {
            check_encode(term, bytes, etf::encode_deterministic(term.as_ref()))?;
            check_decode(term, bytes)
        }
        Golden::Compressed(term, bytes) => {
            check_decode(term, bytes)?;
            let ours =
                etf::encode_compressed_for(term.as_ref(), 6, release).map_err(|e| e.to_string())?;
            check_decode(term, &ours)
        }
        Golden::Decode(term, bytes) => check_decode(term, bytes),
        Golden::Roundtrip(text, bytes) => {
            let term = etf::decode(bytes).map_err(|e| format!("{text}: {e}"))?;
            let again =
                etf::encode_for(term.as_ref(), release).map_err(|e| format!("{text}: {e}"))?;
            if &again != bytes {
                return Err(format!("{text}: encodes differently: {}", diff(&again, bytes)));
            }
            Ok(())
        }
        Golden::Error(text, bytes) => match etf::decode(bytes) {
            Ok(t) => Err(format!("{text}: {bytes:?} decodes as {t}")),
            Err(_) => Ok(()),
        },
    }
}

fn check_encode(
    term: &Term,
    bytes: &[u8],
    ours: Result<Vec<u8>, etf::EncodeError>,
) -> Result<(), String> {
    match ours {
        Ok(ours) if ours == bytes => Ok(()),
        Ok(ours) => Err(format!("{}: encodes differently: {}", short(term), diff(&ours, bytes))),
        Err(e) => Err(format!("{}: {e}", short(term))),
    }
}

fn check_decode(term: &Term, bytes: &[u8]) -> Result<(), String> {
    match etf::decode(bytes) {
        Ok(t) if &t == term => Ok(()),
        Ok(t) => Err(format!("{bytes:?} decodes as {}, not {}", short(&t), short(term))),
        Err(e) => Err(format!("{}: {e}", short(term))),
    }
}

/// Where `ours` first differs from `otp`, with some bytes of context.
fn diff(ours: &[u8], otp: &[u8]) -> String {
    let at = ours.iter().zip(otp).position(|(a, b)| a != b).unwrap_or(ours.len().min(otp.len()));
    let window = |b: &[u8]| b[at.saturating_sub(8)..b.len().min(at + 24)].to_vec();
    format!(
        "{} bytes, OTP {} bytes, first difference at byte {at}:\n  ours {:?}\n  OTP  {:?}",
        ours.len(),
        otp.len(),
        window(ours),
        window(otp)
    )
}

/// The term's text, cut short for messages.
fn short(term: &Term) -> String {
    let text = term.to_string();
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}

/// Runs the golden lines `select` picks, of every release, with that
/// release's answers; fails with every line that is wrong.
#[track_caller]
fn check_all(select: fn(&Golden) -> bool) {
    for release in Release::ALL {
        let lines: Vec<&Golden> = goldens(release).iter().filter(|l| select(l)).collect();
        assert!(!lines.is_empty(), "no such golden lines for {release}");
        let failures: Vec<String> = lines.iter().filter_map(|l| check(l, release).err()).collect();
        assert!(
            failures.is_empty(),
            "{} of {} golden lines of {release} fail:\n{}",
            failures.len(),
            lines.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn encodes_and_decodes_as_otp() {
    check_all(|l| matches!(l, Golden::Exact(..)));
}

#[test]
fn encodes_deterministically_as_otp() {
    check_all(|l| matches!(l, Golden::Deterministic(..)));
}

#[test]
fn decodes_compressed_terms() {
    check_all(|l| matches!(l, Golden::Compressed(..)));
}

#[test]
fn decodes_older_formats_and_any_map_order() {
    check_all(|l| matches!(l, Golden::Decode(..)));
}

#[test]
fn funs_round_trip() {
    check_all(|l| matches!(l, Golden::Roundtrip(..)));
}

#[test]
fn rejects_what_otp_rejects() {
    check_all(|l| matches!(l, Golden::Error(..)));
}

/// Every golden encoding cut short at every byte is an error, not a panic
/// (the long ones are left out to keep this linear-ish; OTP 27's lines
/// only, as decoding is the same for every release and OTP 29's lines hold
/// the same encodings up to the order of map entries).
#[test]
fn truncated_encodings_are_errors() {
    let mut cuts = 0;
    for line in goldens(Release::Otp27) {
        let (Golden::Exact(_, bytes)
        | Golden::Compressed(_, bytes)
        | Golden::Decode(_, bytes)
        | Golden::Roundtrip(_, bytes)) = line
        else {
            continue;
        };
        if bytes.len() > 4096 {
            continue;
        }
        for cut in 0..bytes.len() {
            cuts += 1;
            if let Ok(t) = etf::decode(&bytes[..cut]) {
                panic!("{:?} cut to {cut} bytes decodes as {t}", bytes);
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let err = etf::decode(&longer).expect_err("a trailing byte is an error");
        assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(1), "{bytes:?} and a 0");
    }
    assert!(cuts > 10_000, "only {cuts} cuts");
}

/// Flipping any single byte of a golden encoding gives an error or some
/// term, never a panic (OTP 27's lines, as above).
#[test]
fn corrupted_encodings_do_not_panic() {
    for line in goldens(Release::Otp27) {
        let (Golden::Exact(_, bytes) | Golden::Decode(_, bytes) | Golden::Roundtrip(_, bytes)) =
            line
        else {
            continue;
        };
        if bytes.len() > 512 {
            continue;
        }
        for i in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut corrupt = bytes.clone();
                corrupt[i] ^= flip;
                let _ = etf::decode(&corrupt);
            }
        }
    }
}

/// [`etf::term_extent`] (the structure-only walk a stream splitter uses)
/// finds the end [`etf::term_len`] finds for every golden encoding that
/// decodes (and walks every plain one), whole or with another term after
/// it, and never one that runs
/// past the bytes: cut short, it is `None` (then `term_len` says why);
/// with any byte flipped it ends within the bytes or is `None`.
#[test]
fn term_extent_finds_the_ends_term_len_finds() {
    let mut walked = 0;
    for line in goldens(Release::Otp27).iter().chain(goldens(Release::Otp29)) {
        let (Golden::Exact(_, bytes)
        | Golden::Decode(_, bytes)
        | Golden::Roundtrip(_, bytes)
        | Golden::Error(_, bytes)) = line
        else {
            continue;
        };
        let len = etf::term_len(bytes);
        // Every plain term that decodes is walked.
        if let Some(plain) = etf::PlainIndex::new().measure(bytes) {
            assert_eq!(etf::term_extent(bytes), Some(plain), "{bytes:?}");
        }
        if let Some(extent) = etf::term_extent(bytes) {
            walked += 1;
            if let Ok(len) = len {
                assert_eq!(extent, len, "{bytes:?}");
            }
            let mut two = bytes.clone();
            two.extend([131, 106]);
            assert_eq!(etf::term_extent(&two), Some(extent), "{bytes:?} and []");
        }
        if bytes.len() > 512 {
            continue;
        }
        for cut in 1..bytes.len() {
            if let Some(extent) = etf::term_extent(&bytes[..cut]) {
                assert!(extent <= cut, "{bytes:?} cut to {cut}: {extent}");
                assert!(len.is_err() || extent < bytes.len(), "{bytes:?} cut to {cut}");
            }
        }
        for i in 0..bytes.len() {
            let mut corrupt = bytes.clone();
            corrupt[i] ^= 0x80;
            if let Some(extent) = etf::term_extent(&corrupt) {
                assert!(extent <= corrupt.len(), "{corrupt:?}");
            }
        }
    }
    assert!(walked > 300, "only {walked} encodings walked");
}
