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
//! can be, and the remembered order is the fallback. Our atom table starts
//! with ERTS's boot atoms at ERTS's indices, so for those atoms the computed
//! small-map order is ERTS's too.

use std::cmp::Ordering;

use super::{Map, TermRef};

/// Most keys of a map ERTS stores flat (`MAP_SMALL_MAP_LIMIT`).
pub(crate) const FLATMAP_KEYS: usize = 32;

/// The positions (into the map's keys in exact order) of its entries in
/// ERTS's order.
pub(crate) fn erts_order(map: Map<'_>) -> Vec<usize> {
    let own = || map.has_own_order().then(|| map.own_order_positions().collect::<Vec<usize>>());
    if map.len() > FLATMAP_KEYS {
        if let Some(written) = super::erts_hash::hamt_order(map) {
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
    order.sort_by(|&a, &b| flatmap_cmp(keys[a], keys[b]));
    order
}

/// ERTS's `erts_cmp_flatmap_keys`: atoms by atom-table index, anything else
/// in exact order.
pub(crate) fn flatmap_cmp(a: TermRef<'_>, b: TermRef<'_>) -> Ordering {
    match (a.as_atom(), b.as_atom()) {
        (Some(x), Some(y)) => x.index().cmp(&y.index()),
        _ => a.cmp_exact(&b),
    }
}
