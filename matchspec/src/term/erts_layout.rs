//! The order ERTS keeps a map's entries in.
//!
//! ERTS stores a map of up to 32 keys flat, sorted by its flatmap key order:
//! the exact term order, except that two atom keys compare by their index
//! in the atom table. A larger map is a hash trie, iterated in ascending
//! order of its keys' hashes read nibble by nibble from the lowest (see
//! [`erts_hash`](super::erts_hash)). This is the order ERTS's term printer
//! shows, and the order its match-spec compiler walks a map in, so it
//! decides which error comes first and in what order a map's expressions
//! run.
//!
//! msc cannot always know it: atom indices differ between nodes and runs,
//! and some keys hash through data private to a node. A map read from text
//! or from the external term format remembers the order it came in, ERTS's
//! own order when ERTS wrote it: for a small map that witness is better than
//! any guess, so it wins; for a large map the hash order is computed when it
//! can be, and the remembered order is the fallback. ERTS's boot atoms have
//! the same index on every node of a release: our atom table starts with
//! OTP 27's at their indices, and [`atom_index`] knows OTP 29's, so for
//! those atoms the computed small-map order is ERTS's too.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::LazyLock;

use super::erts_atoms::ERTS_ATOMS;
use super::erts_atoms29::ERTS29_ATOMS;
use super::{Atom, Map, TermRef};
use crate::{Change, Release};

/// Most keys of a map ERTS stores flat (`MAP_SMALL_MAP_LIMIT`).
pub(crate) const FLATMAP_KEYS: usize = 32;

/// The positions (into the map's keys in exact order) of its entries in
/// the order ERTS of `release` keeps them.
pub(crate) fn erts_order(map: Map<'_>, release: Release) -> Vec<usize> {
    let own = || map.has_own_order().then(|| map.own_order_positions().collect::<Vec<usize>>());
    if map.len() > FLATMAP_KEYS {
        if let Some(written) = super::erts_hash::hamt_order(map, release) {
            // ERTS writes a large map (term_to_binary) in the reverse of the
            // order it iterates it in.
            return written.into_iter().rev().collect();
        }
        if let Some(order) = own() {
            return order;
        }
        return (0..map.len()).collect();
    }
    if let Some(order) = own() {
        return order;
    }
    let keys: Vec<TermRef<'_>> = map.keys().collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| flatmap_cmp(keys[a], keys[b], release));
    order
}

/// ERTS's `erts_cmp_flatmap_keys`: atoms by atom-table index, anything else
/// in exact order.
///
/// An atom that is not one of `release`'s boot atoms has an index that
/// depends on the node; it comes after every boot atom (as on any node),
/// and two such atoms compare by our own table's index, a guess.
pub(crate) fn flatmap_cmp(a: TermRef<'_>, b: TermRef<'_>, release: Release) -> Ordering {
    match (a.as_atom(), b.as_atom()) {
        (Some(x), Some(y)) => atom_order(x, release).cmp(&atom_order(y, release)),
        _ => a.cmp_exact(&b),
    }
}

/// Where `atom` comes in the atom table of a node of `release`: its index
/// if ERTS creates it at boot, else after every boot atom, in our table's
/// order.
fn atom_order(atom: Atom, release: Release) -> u64 {
    match atom_index(atom, release) {
        Some(index) => u64::from(index),
        None => (1 << 32) + u64::from(atom.index()),
    }
}

/// The index of `atom` in the atom table of every node of `release`: known
/// for the atoms ERTS creates at boot, `None` for the rest (whose index
/// depends on what the node did before it met them).
pub(crate) fn atom_index(atom: Atom, release: Release) -> Option<u32> {
    let index = atom.index();
    if !release.has(Change::Erts17MapHash) {
        // Our table starts with OTP 27's boot atoms, at their indices.
        return ((index as usize) < ERTS_ATOMS.len()).then_some(index);
    }
    let erts17 = &*ERTS17_INDEX;
    match erts17.of_erts15.get(index as usize) {
        Some(&index) => Some(index),
        None => erts17.added.get(atom.name()).copied(),
    }
}

/// Where OTP 29's boot atoms are in its atom table.
struct Erts17Index {
    /// By OTP 27's index (ours): OTP 29's index of the same atom (every one
    /// of OTP 27's boot atoms is one of OTP 29's).
    of_erts15: Vec<u32>,
    /// OTP 29's boot atoms that OTP 27 did not have, by name.
    added: HashMap<&'static str, u32>,
}

static ERTS17_INDEX: LazyLock<Erts17Index> = LazyLock::new(|| {
    let mut by_name: HashMap<&'static str, u32> =
        ERTS29_ATOMS.iter().enumerate().map(|(i, &name)| (name, i as u32)).collect();
    let of_erts15 = ERTS_ATOMS
        .iter()
        .map(|name| by_name.remove(name).expect("OTP 29 boots with every atom OTP 27 did"))
        .collect();
    Erts17Index { of_erts15, added: by_name }
});
