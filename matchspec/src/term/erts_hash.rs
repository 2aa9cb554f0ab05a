//! The order in which ERTS writes the entries of a large map.
//!
//! A map of more than 32 keys is a hash array mapped trie in ERTS. Each key
//! has a 64-bit hash; the root node indexes its children by the lowest four
//! bits of the hash, the next level by the next four, and so on, and every
//! node keeps its children in ascending index order. `term_to_binary` pushes
//! the children of a node on a stack and pops them, so it writes them in
//! *descending* index order, depth first. The whole map therefore comes out
//! sorted by hash, comparing hashes nibble by nibble from the lowest nibble
//! up, in descending order.
//!
//! The hash is `erts_map_hash` of erts 15 (OTP 27) or erts 17 (OTP 29):
//! for an immediate term, a 64-bit finaliser of the tagged word; for
//! anything else, `make_internal_hash`, which walks the term and mixes type
//! tags, sizes and contents into two 64-bit accumulators. This module
//! reimplements both from their description in `erl_term_hashing.c` of
//! erts 15, on ERTS's own representation of each term (its tagged words,
//! 60-bit small integers, 64-bit bignum digits). Erts 17 mixes the same
//! things with one more type tag, numbered right after tuples' (so every
//! later tag is one higher: see [`Types`]), and boots with a larger atom
//! table ([`Change::Erts17MapHash`]). Golden tests check the result against
//! `erts_debug:get_internal_state({internal_hash, T})` of both releases
//! (`testdata/erts_hash/`) and against maps they wrote.
//!
//! Some terms hash through something private to the node that holds them:
//! an atom by its index in the atom table (known for the atoms ERTS creates
//! at boot, see [`atom_index`]), an export fun and another node's pid, port
//! or reference by a pointer, and this node's pids and ports by a word that
//! folds in the layout of the node's process or port table. A key
//! containing any of the unknown ones has no hash this module can know, and
//! [`hamt_order`] gives up on that map.

use super::erts_layout::{atom_index, flatmap_cmp};
use super::{Atom, Kind, Map, TermRef};
use crate::{Change, Release};

/// ERTS's limits that decide how a term hashes.
mod limit {
    /// Most id words of a reference that hashes as this node's (ERTS's
    /// `ERTS_REF_NUMBERS`).
    pub(super) const LOCAL_REF_WORDS: usize = 3;
    /// Most keys of a map ERTS stores flat (`MAP_SMALL_MAP_LIMIT`).
    pub(super) const FLATMAP_KEYS: usize = 32;
    /// ERTS's smallest small integer on 64-bit machines (60 bits).
    pub(super) const OTP_MIN_SMALL: i64 = -(1 << 59);
    /// ERTS's largest small integer.
    pub(super) const OTP_MAX_SMALL: i64 = (1 << 59) - 1;
}

fn is_local_node(node: Atom, creation: u32) -> bool {
    node == Atom::NONODE && creation == 0
}

/// The indexes (into the map's keys in exact order) of a large map's entries
/// in the order ERTS of `release` writes them, or `None` if a key hashes
/// through something private to a node (or, with odds of 2^-64, two keys
/// collide).
pub(crate) fn hamt_order(map: Map<'_>, release: Release) -> Option<Vec<usize>> {
    let mut keyed: Vec<(u64, usize)> = Vec::with_capacity(map.len());
    for (i, key) in map.keys().enumerate() {
        keyed.push((nibbles_reversed(map_hash(key, release)?), i));
    }
    keyed.sort_unstable_by_key(|&(hash, _)| std::cmp::Reverse(hash));
    // Keys with equal hashes share a collision node, whose order this
    // module does not model.
    if keyed.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(keyed.into_iter().map(|(_, i)| i).collect())
}

/// `erts_map_hash` of `release`: the hash ERTS files a map key under (also
/// what `erts_debug:get_internal_state({internal_hash, Key})` answers).
pub(crate) fn map_hash(key: TermRef<'_>, release: Release) -> Option<u64> {
    match classify(key, release) {
        Shape::Immediate(word) => Some(mix64(word)),
        Shape::Boxed => internal_hash(key, release),
        Shape::Private => None,
    }
}

/// The hash with its 16 nibbles in reverse order, so that comparing two of
/// these compares the hashes nibble by nibble from the lowest up.
pub(crate) fn nibbles_reversed(hash: u64) -> u64 {
    let bytes = hash.swap_bytes();
    ((bytes & 0x0f0f_0f0f_0f0f_0f0f) << 4) | ((bytes >> 4) & 0x0f0f_0f0f_0f0f_0f0f)
}

/// How ERTS represents a term, as far as hashing goes.
enum Shape {
    /// An immediate: the tagged word ERTS would hold.
    Immediate(u64),
    /// A list cell or a boxed object, hashed by its contents.
    Boxed,
    /// Hashed through an atom index or a pointer of the node.
    Private,
}

/// ERTS's primary and immediate tags on 64-bit machines (`erl_term.h`).
mod erts {
    pub const SMALL_TAG: u64 = 0xf;
    pub const NIL: u64 = 0x3b;
    pub const ATOM_TAG: u64 = 0xb;
    pub const IMMED1_BITS: u32 = 4;
    pub const IMMED2_BITS: u32 = 6;
    /// In the second id word of a reference of this node, marks a reference
    /// bound to a process or to a magic binary, hashed differently.
    pub const REF1_MARKERS: u32 = 0b11 << 16;
}

fn classify(t: TermRef<'_>, release: Release) -> Shape {
    use erts::*;
    match t.kind() {
        // An atom is its index in the node's atom table.
        Kind::Atom(a) => match atom_index(a, release) {
            Some(index) => Shape::Immediate((u64::from(index) << IMMED2_BITS) | ATOM_TAG),
            None => Shape::Private,
        },
        Kind::Small(v) if (limit::OTP_MIN_SMALL..=limit::OTP_MAX_SMALL).contains(&v) => {
            Shape::Immediate(((v as u64) << IMMED1_BITS) | SMALL_TAG)
        }
        // Our small integers are a bit wider; ERTS boxes these as bignums.
        Kind::Small(_) => Shape::Boxed,
        Kind::Nil => Shape::Immediate(NIL),
        Kind::Ref(r) if is_local_node(r.node, r.creation) => {
            let ids: Vec<u32> = r.ids().collect();
            if ids.len() > limit::LOCAL_REF_WORDS
                || ids.get(1).is_some_and(|w| w & REF1_MARKERS != 0)
            {
                return Shape::Private;
            }
            Shape::Boxed
        }
        // This node's pids and ports are immediates whose bits mix the
        // process or port number with the layout of the node's table,
        // which depends on its configuration (`+P`, `+Q`).
        Kind::Pid(_) | Kind::Port(_) | Kind::Ref(_) => Shape::Private,
        Kind::Export(_) | Kind::Closure(_) => Shape::Private,
        // A large map inside a key hashes through its trie nodes.
        Kind::Map(m) if m.len() > limit::FLATMAP_KEYS => Shape::Private,
        Kind::Big(_)
        | Kind::Float(_)
        | Kind::Cons(_)
        | Kind::Tuple(_)
        | Kind::Map(_)
        | Kind::Bits(_) => Shape::Boxed,
    }
}

/// The type tags `make_internal_hash` mixes in (the `IHASH_TYPE_*` enum of
/// erts 15; erts 17 numbers them as [`Types`] says).
mod ty {
    pub const IMMEDIATE: u64 = 1;
    pub const ARRAY_ELEMENT: u64 = 2;
    pub const CAR: u64 = 3;
    pub const CDR: u64 = 4;
    pub const STRING: u64 = 5;
    pub const TUPLE: u64 = 6;
    pub const FLATMAP: u64 = 7;
    pub const BINARY: u64 = 11;
    pub const NEG_BIGNUM: u64 = 14;
    pub const POS_BIGNUM: u64 = 15;
    pub const LOCAL_REF: u64 = 16;
    pub const FLOAT: u64 = 20;
}

/// The type tags of one release's `make_internal_hash`.
#[derive(Clone, Copy)]
struct Types {
    /// Erts 17 has one more type, numbered right after [`ty::TUPLE`]: the
    /// tags of every type after it are one higher than erts 15's. (The
    /// golden hashes of both releases agree on every type before it and on
    /// every type after it, shifted by one; the type itself, probably the
    /// native records of OTP 29, is never met here.)
    after_tuple: u64,
}

impl Types {
    fn of(release: Release) -> Types {
        Types { after_tuple: u64::from(release.has(Change::Erts17MapHash)) }
    }

    /// The tag of `ty` (one of [`ty`]'s, as erts 15 numbers them).
    fn tag(self, ty: u64) -> u64 {
        if ty > ty::TUPLE { ty + self.after_tuple } else { ty }
    }
}

const C1: u64 = 0x87C3_7B91_1142_53D5;
const C2: u64 = 0x4CF5_AD43_2745_937F;

/// The two accumulators of `make_internal_hash` and its count of mixes,
/// for one release.
struct Mixer {
    alpha: u64,
    beta: u64,
    ticks: u64,
    release: Release,
    types: Types,
}

impl Mixer {
    fn new(release: Release) -> Mixer {
        Mixer { alpha: 0, beta: 0, ticks: 0, release, types: Types::of(release) }
    }

    /// The release's tag of `ty` (one of [`ty`]'s).
    fn tag(&self, ty: u64) -> u64 {
        self.types.tag(ty)
    }

    fn alpha(&mut self, x: u64) {
        self.alpha ^= x.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        self.alpha = self.alpha.rotate_left(27).wrapping_add(self.beta);
        self.alpha = self.alpha.wrapping_mul(5).wrapping_add(0x52DC_E729);
        self.ticks += 1;
    }

    fn beta(&mut self, x: u64) {
        self.beta ^= x.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        self.beta = self.beta.rotate_left(31).wrapping_add(self.alpha);
        self.beta = self.beta.wrapping_mul(5).wrapping_add(0x3849_5AB5);
        self.ticks += 1;
    }

    /// Two 32-bit values as one 64-bit input, the first in the low half.
    fn alpha2(&mut self, low: u64, high: u64) {
        self.alpha(low | (high << 32));
    }

    fn immediate(&mut self, word: u64) {
        self.alpha(ty::IMMEDIATE);
        self.beta(word);
    }

    fn finish(mut self) -> u64 {
        self.alpha ^= self.ticks;
        self.beta ^= self.ticks;
        self.alpha = self.alpha.wrapping_add(self.beta);
        self.beta = self.beta.wrapping_add(self.alpha);
        self.alpha = mix64(self.alpha);
        self.beta = mix64(self.beta);
        self.alpha = self.alpha.wrapping_add(self.beta);
        self.beta = self.beta.wrapping_add(self.alpha);
        self.alpha ^ self.beta
    }
}

/// The 64-bit finaliser of MurmurHash3, which ERTS applies to immediates.
fn mix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Work left for [`internal_hash`], innermost last.
enum Item<'a> {
    Term(TermRef<'a>),
    /// The tail of an improper list follows: mark it as a tail.
    Cdr,
}

/// `make_internal_hash(term, 0)` for a term that is not an immediate.
///
/// The order of mixing matters, so this follows ERTS step by step: elements
/// that are immediates are mixed in where they are met, the others are
/// pushed on a stack (the last element of a tuple is processed at once),
/// and a list is walked cell by cell, bytes four at a time.
fn internal_hash(term: TermRef<'_>, release: Release) -> Option<u64> {
    let mut h = Mixer::new(release);
    let mut stack: Vec<Item<'_>> = Vec::new();
    let mut term = term;
    'terms: loop {
        match classify(term, release) {
            Shape::Private => return None,
            Shape::Immediate(word) => h.immediate(word),
            Shape::Boxed => match term.kind() {
                Kind::Cons(_) => {
                    term = hash_list(&mut h, &mut stack, term)?;
                    continue 'terms;
                }
                Kind::Tuple(tuple) => {
                    h.alpha(ty::TUPLE);
                    h.beta(tuple.len() as u64);
                    if let Some((last, rest)) = tuple.words().split_last() {
                        for &e in rest {
                            push_element(&mut h, &mut stack, term.with_word(e))?;
                        }
                        term = term.with_word(*last);
                        continue 'terms;
                    }
                }
                Kind::Map(map) => {
                    h.alpha(h.tag(ty::FLATMAP));
                    h.beta(map.len() as u64);
                    // In the order of the flatmap's keys.
                    let mut pairs: Vec<_> = map.iter().collect();
                    pairs.sort_by(|a, b| flatmap_cmp(a.0, b.0, release));
                    if let Some(((last_key, last_value), rest)) = pairs.split_last() {
                        for &(k, v) in rest {
                            push_element(&mut h, &mut stack, v)?;
                            push_element(&mut h, &mut stack, k)?;
                        }
                        push_element(&mut h, &mut stack, *last_value)?;
                        term = *last_key;
                        continue 'terms;
                    }
                }
                Kind::Bits(bits) => hash_bits(&mut h, bits.bytes(), bits.bit_len()),
                Kind::Big(big) => {
                    let limbs: Vec<u64> = big.limbs().collect();
                    hash_big(&mut h, big.is_negative(), &limbs);
                }
                Kind::Small(v) => hash_big(&mut h, v < 0, &[v.unsigned_abs()]),
                Kind::Float(f) => {
                    h.alpha(h.tag(ty::FLOAT));
                    h.beta(f.to_bits());
                }
                Kind::Ref(r) => {
                    let mut ids = [0u64; 3];
                    for (slot, id) in ids.iter_mut().zip(r.ids()) {
                        *slot = id.into();
                    }
                    h.alpha2(h.tag(ty::LOCAL_REF), ids[0]);
                    h.beta(ids[1] | (ids[2] << 32));
                }
                // `classify` sends every other kind elsewhere.
                _ => return None,
            },
        }
        // The term is done: take the next one from the stack.
        loop {
            match stack.pop() {
                None => return Some(h.finish()),
                Some(Item::Cdr) => h.beta(ty::CDR),
                Some(Item::Term(next)) => {
                    term = next;
                    continue 'terms;
                }
            }
        }
    }
}

/// Mixes in an element met inside a compound term: an immediate at once,
/// anything else later from the stack.
fn push_element<'a>(h: &mut Mixer, stack: &mut Vec<Item<'a>>, t: TermRef<'a>) -> Option<()> {
    match classify(t, h.release) {
        Shape::Immediate(word) => h.immediate(word),
        Shape::Boxed => {
            h.alpha(ty::ARRAY_ELEMENT);
            stack.push(Item::Term(t));
        }
        Shape::Private => return None,
    }
    Some(())
}

/// Hashes list cells from `list` on: a run of bytes four at a time, then
/// one cell whose head is not a byte. Returns the term to go on with.
fn hash_list<'a>(
    h: &mut Mixer,
    stack: &mut Vec<Item<'a>>,
    list: TermRef<'a>,
) -> Option<TermRef<'a>> {
    let (mut value, mut count) = (0u64, 0u64);
    let mut rest = list;
    while let Some(cons) = rest.as_cons() {
        let Some(byte) = cons.head().word().as_small().filter(|b| (0..=255).contains(b)) else {
            break;
        };
        value = (value << 8) | byte as u64;
        count += 1;
        if count == 4 {
            h.alpha2(ty::STRING | (count << 8), value);
            (value, count) = (0, 0);
        }
        rest = cons.tail();
    }
    if count > 0 {
        h.alpha2(ty::STRING | (count << 8), value);
    }
    let Some(cons) = rest.as_cons() else {
        // The list ended (in `[]` or an improper tail): hash that next.
        return Some(rest);
    };
    let (head, tail) = (cons.head(), cons.tail());
    match classify(head, h.release) {
        Shape::Private => None,
        Shape::Immediate(word) => {
            h.alpha2(ty::IMMEDIATE, ty::CAR);
            h.beta(word);
            if !tail.word().is_cons() {
                h.alpha(ty::CDR);
            }
            Some(tail)
        }
        Shape::Boxed => {
            stack.push(Item::Term(tail));
            if !tail.word().is_cons() {
                stack.push(Item::Cdr);
            }
            h.alpha(ty::CAR);
            Some(head)
        }
    }
}

fn hash_big(h: &mut Mixer, negative: bool, limbs: &[u64]) {
    let ty = h.tag(if negative { ty::NEG_BIGNUM } else { ty::POS_BIGNUM });
    h.alpha2(ty, limbs.len() as u64);
    let mut pairs = limbs.chunks_exact(2);
    for pair in pairs.by_ref() {
        h.alpha(pair[0]);
        h.beta(pair[1]);
    }
    if let [last] = pairs.remainder() {
        h.beta(*last);
    }
}

fn hash_bits(h: &mut Mixer, bytes: &[u8], bit_len: u64) {
    h.alpha(h.tag(ty::BINARY));
    h.beta(bit_len);
    if bit_len == 0 {
        return;
    }
    let whole = (bit_len / 8) as usize;
    let mut chunks = bytes[..whole].chunks_exact(16);
    for chunk in chunks.by_ref() {
        h.alpha(le_u64(&chunk[..8]));
        h.beta(le_u64(&chunk[8..]));
    }
    // The last 1 to 15 bytes are folded in without the rotations of a full
    // mix and without counting a tick, as in ERTS.
    let tail = chunks.remainder();
    if tail.len() > 8 {
        let value = le_u64(&tail[8..]);
        h.beta ^= value.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        let value = le_u64(&tail[..tail.len().min(8)]);
        h.alpha ^= value.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let rest = (bit_len % 8) as u32;
    if rest != 0 {
        h.alpha(u64::from(bytes[whole] >> (8 - rest)));
    }
}

/// Up to 8 bytes as a little-endian number.
fn le_u64(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_terms;

    /// The hash a golden line holds: a non-negative integer below 2^64.
    fn golden_hash(t: TermRef<'_>) -> u64 {
        match t.kind() {
            Kind::Small(v) => u64::try_from(v).expect("a hash is not negative"),
            Kind::Big(big) => {
                let limbs: Vec<u64> = big.limbs().collect();
                assert!(!big.is_negative() && limbs.len() == 1, "not a 64-bit hash: {t}");
                limbs[0]
            }
            _ => panic!("not a hash: {t}"),
        }
    }

    /// Every `{Term, Hash}` of `testdata/erts_hash/<file>` (written by its
    /// `gen.escript` from `erts_debug:get_internal_state({internal_hash,
    /// Term})` of a node of `release`) hashes to Hash here.
    #[track_caller]
    fn check_golden(file: &str, release: Release, at_least: usize) {
        let path = format!("{}/../testdata/erts_hash/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let lines = parse_terms(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut failures = Vec::new();
        let mut atoms = 0;
        for line in &lines {
            let line = line.as_ref();
            let pair = line.as_tuple().filter(|t| t.len() == 2).expect("a {Term, Hash} line");
            let (term, hash) =
                (pair.get(0).expect("term"), golden_hash(pair.get(1).expect("hash")));
            atoms += usize::from(term.as_atom().is_some());
            let ours = map_hash(term, release);
            if ours != Some(hash) {
                failures.push(format!("{term}: OTP {hash}, ours {ours:?}"));
            }
        }
        assert!(lines.len() >= at_least, "{path}: only {} lines", lines.len());
        assert!(atoms > 700, "{path}: only {atoms} atoms");
        assert!(
            failures.is_empty(),
            "{} of {} hashes differ from {path}:\n{}",
            failures.len(),
            lines.len(),
            failures.iter().take(30).cloned().collect::<Vec<_>>().join("\n")
        );
    }

    #[test]
    fn hashes_as_otp27() {
        check_golden("otp27.terms", Release::Otp27, 1150);
    }

    #[test]
    fn hashes_as_otp29() {
        check_golden("otp29.terms", Release::Otp29, 1172);
    }

    /// Atoms that are not boot atoms of the release have no known hash.
    #[test]
    fn atoms_outside_the_boot_table_have_no_hash() {
        let x = crate::term::Term::atom(Atom::new("x"));
        assert_eq!(map_hash(x.as_ref(), Release::Otp27), None);
        assert!(map_hash(x.as_ref(), Release::Otp29).is_some());
        let mine = crate::term::Term::atom(Atom::new("not_a_boot_atom_of_any_release"));
        assert_eq!(map_hash(mine.as_ref(), Release::Otp29), None);
    }
}
