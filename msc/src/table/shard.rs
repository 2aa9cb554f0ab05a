//! One shard of a [`Table`](super::Table): rows in a heap of their own,
//! indexed by key.

use std::hash::{BuildHasher, BuildHasherDefault};

use hashbrown::HashTable;
use matchspec::term::{Heap, TermRef, Word};
use rustc_hash::FxHasher;

/// The hasher of keys (consistent with `=:=`, as ETS compares keys).
pub(super) type KeyHasher = BuildHasherDefault<FxHasher>;

/// Rows whose keys hash to one shard.
///
/// `rows` is dense (a batch the engines run over directly): removing a row
/// moves the last one into its place. The words of removed rows stay in
/// `heap` until [`compact`](Shard::compact) copies the live rows into a
/// new heap, once the dead outnumber the live.
#[derive(Debug, Default)]
pub(super) struct Shard {
    pub(super) heap: Heap,
    pub(super) rows: Vec<Word>,
    /// Per row, the order it was inserted in (bags only: a bag returns a
    /// key's objects in insertion order).
    seqs: Vec<u64>,
    /// Row positions, by key hash.
    index: HashTable<u32>,
    /// Rows removed or replaced whose words are still in `heap`.
    dead: usize,
}

impl Shard {
    /// The row at `slot`.
    pub(super) fn row(&self, slot: usize) -> TermRef<'_> {
        self.heap.view(self.rows[slot])
    }

    fn key_at(&self, slot: usize, keypos: usize) -> TermRef<'_> {
        key_of(self.row(slot), keypos)
    }

    /// The slots of the rows whose key is `key` (=:=), in no order.
    pub(super) fn slots_of<'s>(
        &'s self,
        key: TermRef<'s>,
        hash: u64,
        keypos: usize,
    ) -> impl Iterator<Item = usize> + 's {
        self.index
            .iter_hash(hash)
            .map(|&s| s as usize)
            .filter(move |&s| self.key_at(s, keypos).eq_exact(&key))
    }

    /// The slots of the rows with key `key`, in insertion order.
    pub(super) fn slots_in_order(&self, key: TermRef<'_>, hash: u64, keypos: usize) -> Vec<usize> {
        let mut slots: Vec<usize> = self.slots_of(key, hash, keypos).collect();
        if !self.seqs.is_empty() {
            slots.sort_by_key(|&s| self.seqs[s]);
        }
        slots
    }

    /// Appends `object` (keyed `hash`) as a new row; `seq` orders a bag's rows.
    pub(super) fn push(&mut self, object: TermRef<'_>, hash: u64, seq: Option<u64>, keypos: usize) {
        let word = object.copy_to(&mut self.heap);
        let slot = self.rows.len();
        self.rows.push(word);
        if let Some(seq) = seq {
            self.seqs.push(seq);
        }
        let Shard { heap, rows, index, .. } = self;
        index.insert_unique(hash, slot as u32, |&s| {
            hash_key(key_of(heap.view(rows[s as usize]), keypos))
        });
    }

    /// Replaces the row at `slot` with `object` (same key).
    pub(super) fn replace(&mut self, slot: usize, object: TermRef<'_>) {
        self.rows[slot] = object.copy_to(&mut self.heap);
        self.dead += 1;
    }

    /// Removes the row at `slot`, keyed `hash`.
    pub(super) fn remove(&mut self, slot: usize, hash: u64, keypos: usize) {
        let last = self.rows.len() - 1;
        let removed = self.index.find_entry(hash, |&s| s as usize == slot);
        if let Ok(entry) = removed {
            entry.remove();
        }
        if slot != last {
            // The last row moves into the hole: point its index entry there.
            let moved_hash = hash_key(self.key_at(last, keypos));
            if let Some(entry) = self.index.find_mut(moved_hash, |&s| s as usize == last) {
                *entry = slot as u32;
            }
        }
        self.rows.swap_remove(slot);
        if !self.seqs.is_empty() {
            self.seqs.swap_remove(slot);
        }
        self.dead += 1;
        if self.dead > self.rows.len().max(16) {
            self.compact(keypos);
        }
    }

    /// Copies the live rows into a new heap, leaving the dead behind, and
    /// gives back the room the row list and index no longer need.
    pub(super) fn compact(&mut self, keypos: usize) {
        let mut heap = Heap::with_capacity(self.heap.len() / 2);
        for row in &mut self.rows {
            *row = self.heap.view(*row).copy_to(&mut heap);
        }
        self.heap = heap;
        self.dead = 0;
        if self.rows.len() < self.rows.capacity() / 4 {
            self.rows.shrink_to_fit();
            self.seqs.shrink_to_fit();
            let Shard { heap, rows, index, .. } = self;
            index.shrink_to_fit(|&s| hash_key(key_of(heap.view(rows[s as usize]), keypos)));
        }
    }

    /// Bytes this shard holds.
    pub(super) fn memory(&self) -> usize {
        let words = self.heap.capacity() + self.rows.capacity();
        words * size_of::<Word>()
            + self.seqs.capacity() * size_of::<u64>()
            + self.index.allocation_size()
    }
}

/// The key of `object`, a tuple at least `keypos` long (checked on insert).
pub(super) fn key_of(object: TermRef<'_>, keypos: usize) -> TermRef<'_> {
    object.as_tuple().and_then(|t| t.get(keypos - 1)).expect("a row is a tuple with a key")
}

/// The hash a key is filed under.
pub(super) fn hash_key(key: TermRef<'_>) -> u64 {
    KeyHasher::default().hash_one(key)
}
