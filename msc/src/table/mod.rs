//! [`Table`]: objects kept in Rust, selected by match specs on any engine:
//! what ETS's `set` and `bag` tables do, with the filter compiled.
//!
//! A table is split into shards by key hash, each behind its own
//! readers-writer lock: any number of threads read at once, a writer locks
//! one shard for one object, and a scan holds each shard only while it
//! runs over that shard's rows. A shard keeps its rows in one [`Heap`](matchspec::term::Heap), so
//! a select is one batch per shard straight through the engine.
//!
//! What ETS promises under concurrency holds: an insert of several objects
//! ([`insert_all`](Table::insert_all), [`insert_new`](Table::insert_new)) is
//! atomic and isolated, a reader (a select, a chunk of
//! [`select_limit`](Table::select_limit), [`for_each`](Table::for_each), a
//! lookup) sees all of it or none. Such writers take a table-wide lock
//! exclusively, readers of more than one shard share it; a write of one
//! object needs only its shard's. A scan with a limit goes on from a
//! cursor through shards and slots, so objects that stay in the table are
//! returned exactly once however others insert and delete meanwhile.
//!
//! ```
//! use msc::table::{Table, TableOptions};
//! use msc::{Kind, Scratch, Spec, Term, TestHost};
//!
//! let table = Table::new(TableOptions::default());
//! for row in ["{ann, 150}", "{bob, 20}", "{cy, 300}"] {
//!     table.insert(Term::parse(row)?.as_ref())?;
//! }
//! let spec = Spec::compile("[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]", Kind::Table)?;
//! let mut names = Vec::new();
//! table.select(&spec, &mut Scratch::new(), &mut TestHost::default(), |name| names.push(name.to_string()))?;
//! names.sort();
//! assert_eq!(names, ["ann", "cy"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod keeps_key;
mod shard;

use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::{Atom, TermRef};
use matchspec::{Host, Run, Scratch};
use parking_lot::RwLock;

use crate::Spec;
pub use keeps_key::keeps_key;
use shard::{Shard, hash_key, key_of};

/// The shards of a table: enough that a writer rarely waits and that a
/// shard of a ten-million-row table compacts in well under a millisecond.
const SHARDS: usize = 256;

/// Rows a scan with a limit runs at a time.
const CHUNK: usize = 512;

/// How a table treats objects with equal keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// One object per key: inserting replaces (ETS `set`).
    #[default]
    Set,
    /// Any number of different objects per key, in insertion order; an
    /// object equal to one already there is not added (ETS `bag`).
    Bag,
}

/// How a table is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableOptions {
    /// Set or bag.
    pub kind: TableKind,
    /// The element of each object (a tuple) that is its key, from 1.
    pub keypos: usize,
}

impl Default for TableOptions {
    fn default() -> TableOptions {
        TableOptions { kind: TableKind::Set, keypos: 1 }
    }
}

/// Why a table refused a call (ETS raises `badarg` for each).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableError {
    /// The object is not a tuple with at least `keypos` elements.
    NotAnObject {
        /// The table's key position.
        keypos: usize,
    },
    /// The spec was compiled for a trace event, not for tables.
    NotATableSpec(Kind),
    /// `select_replace` on a bag, or with a spec that may change a key.
    CannotReplace(&'static str),
    /// A key position of 0.
    BadKeypos,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::NotAnObject { keypos } => {
                write!(f, "an object must be a tuple of at least {keypos} elements")
            }
            TableError::NotATableSpec(kind) => {
                write!(f, "a {} spec cannot select from a table", kind.name())
            }
            TableError::CannotReplace(why) => write!(f, "cannot replace: {why}"),
            TableError::BadKeypos => f.write_str("the key position counts from 1"),
        }
    }
}

impl std::error::Error for TableError {}

/// How far [`Table::select_limit_within`] got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budgeted {
    /// The chunk is complete: the cursor to go on from, or `None` at the
    /// end of the table.
    Done(Option<Cursor>),
    /// It would have looked at more rows than the budget allows, or the
    /// caller gave up.
    OverBudget,
}

/// Where a scan stopped: pass it back to go on from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cursor {
    shard: usize,
    slot: usize,
}

impl Cursor {
    /// The start of the table.
    pub const START: Cursor = Cursor { shard: 0, slot: 0 };

    /// The cursor as two numbers, to keep outside Rust.
    pub fn to_parts(self) -> (u64, u64) {
        (self.shard as u64, self.slot as u64)
    }

    /// A cursor from [`to_parts`](Cursor::to_parts); `None` if it cannot be one.
    pub fn from_parts(shard: u64, slot: u64) -> Option<Cursor> {
        let shard = usize::try_from(shard).ok().filter(|&s| s < SHARDS)?;
        Some(Cursor { shard, slot: usize::try_from(slot).ok()? })
    }
}

/// A resident table of objects (tuples), `Send + Sync`.
pub struct Table {
    options: TableOptions,
    shards: Box<[RwLock<Shard>]>,
    /// Held shared by readers of more than one shard and exclusively by
    /// writers of more than one object (taken before any shard's lock):
    /// what keeps an insert of a list isolated.
    whole: RwLock<()>,
    /// Insertion counter: orders a bag's objects under one key.
    next_seq: AtomicU64,
    /// Objects in all shards (kept under each shard's lock).
    len: AtomicUsize,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table").field("options", &self.options).field("len", &self.len()).finish()
    }
}

impl Table {
    /// An empty table.
    pub fn new(options: TableOptions) -> Table {
        let options = TableOptions { keypos: options.keypos.max(1), ..options };
        Table {
            options,
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::default())).collect(),
            whole: RwLock::new(()),
            next_seq: AtomicU64::new(0),
            len: AtomicUsize::new(0),
        }
    }

    /// An empty table, refusing a key position of 0.
    pub fn try_new(options: TableOptions) -> Result<Table, TableError> {
        if options.keypos == 0 {
            return Err(TableError::BadKeypos);
        }
        Ok(Table::new(options))
    }

    /// How the table was made.
    pub fn options(&self) -> TableOptions {
        self.options
    }

    fn keypos(&self) -> usize {
        self.options.keypos
    }

    fn check(&self, object: TermRef<'_>) -> Result<u64, TableError> {
        match object.as_tuple().and_then(|t| t.get(self.keypos() - 1)) {
            Some(key) => Ok(hash_key(key)),
            None => Err(TableError::NotAnObject { keypos: self.keypos() }),
        }
    }

    fn shard_of(&self, hash: u64) -> &RwLock<Shard> {
        &self.shards[shard_index(hash)]
    }

    /// Inserts `object`: a set replaces the object with its key, a bag adds
    /// it unless an equal object is there.
    pub fn insert(&self, object: TermRef<'_>) -> Result<(), TableError> {
        let hash = self.check(object)?;
        let mut shard = self.shard_of(hash).write();
        self.insert_locked(&mut shard, object, hash);
        Ok(())
    }

    /// Inserts every object, after checking them all (so a bad one inserts
    /// none), in order, as one step: a reader sees all of them or none.
    ///
    /// Objects with equal keys in one list leave a set the last of them.
    /// (ETS may keep the first: ERTS picks its insert path by the caller's
    /// reductions.)
    pub fn insert_all(&self, objects: &[TermRef<'_>]) -> Result<(), TableError> {
        let hashes = objects.iter().map(|&o| self.check(o)).collect::<Result<Vec<u64>, _>>()?;
        if let ([object], [hash]) = (objects, hashes.as_slice()) {
            let mut shard = self.shard_of(*hash).write();
            self.insert_locked(&mut shard, *object, *hash);
            return Ok(());
        }
        let _whole = self.whole.write();
        let mut guards = self.lock_shards(&hashes);
        for (&object, &hash) in objects.iter().zip(&hashes) {
            self.insert_locked(guards.of(hash), object, hash);
        }
        Ok(())
    }

    /// The write locks of the shards of `hashes`, taken in shard order.
    fn lock_shards(&self, hashes: &[u64]) -> ShardGuards<'_> {
        let mut wanted: Vec<usize> = hashes.iter().map(|&h| shard_index(h)).collect();
        wanted.sort_unstable();
        wanted.dedup();
        ShardGuards(wanted.iter().map(|&i| (i, self.shards[i].write())).collect())
    }

    fn insert_locked(&self, shard: &mut Shard, object: TermRef<'_>, hash: u64) {
        let keypos = self.keypos();
        let key = key_of(object, keypos);
        match self.options.kind {
            TableKind::Set => {
                let existing = shard.slots_of(key, hash, keypos).next();
                match existing {
                    Some(slot) => shard.replace(slot, object),
                    None => {
                        shard.push(object, hash, None, keypos);
                        self.len.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            TableKind::Bag => {
                let known =
                    shard.slots_of(key, hash, keypos).any(|s| shard.row(s).eq_exact(&object));
                if !known {
                    let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
                    shard.push(object, hash, Some(seq), keypos);
                    self.len.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Inserts the objects only if none of their keys is in the table;
    /// `Ok(false)` if one is, and nothing was inserted. The check and the
    /// inserts are one step, isolated as [`insert_all`](Table::insert_all)'s;
    /// keys repeated among the objects are inserted as it inserts them.
    pub fn insert_new(&self, objects: &[TermRef<'_>]) -> Result<bool, TableError> {
        let hashes = objects.iter().map(|&o| self.check(o)).collect::<Result<Vec<u64>, _>>()?;
        let _whole = (objects.len() > 1).then(|| self.whole.write());
        let mut guards = self.lock_shards(&hashes);
        let keypos = self.keypos();
        for (&object, &hash) in objects.iter().zip(&hashes) {
            if guards.of(hash).slots_of(key_of(object, keypos), hash, keypos).next().is_some() {
                return Ok(false);
            }
        }
        for (&object, &hash) in objects.iter().zip(&hashes) {
            self.insert_locked(guards.of(hash), object, hash);
        }
        Ok(true)
    }

    /// Hands `each` the objects with key `key`, in insertion order for a bag.
    pub fn lookup(&self, key: TermRef<'_>, mut each: impl FnMut(TermRef<'_>)) {
        let hash = hash_key(key);
        let shard = self.shard_of(hash).read();
        for slot in shard.slots_in_order(key, hash, self.keypos()) {
            each(shard.row(slot));
        }
    }

    /// Deletes the objects with key `key`.
    pub fn delete(&self, key: TermRef<'_>) {
        let hash = hash_key(key);
        let mut shard = self.shard_of(hash).write();
        let mut slots: Vec<usize> = shard.slots_of(key, hash, self.keypos()).collect();
        slots.sort_unstable_by(|a, b| b.cmp(a));
        for slot in slots {
            self.remove(&mut shard, slot, hash);
        }
    }

    /// Deletes the objects exactly equal (`=:=`) to `object`.
    pub fn delete_object(&self, object: TermRef<'_>) -> Result<(), TableError> {
        let hash = self.check(object)?;
        let mut shard = self.shard_of(hash).write();
        let keypos = self.keypos();
        let mut slots: Vec<usize> = shard
            .slots_of(key_of(object, keypos), hash, keypos)
            .filter(|&s| shard.row(s).eq_exact(&object))
            .collect();
        slots.sort_unstable_by(|a, b| b.cmp(a));
        for slot in slots {
            self.remove(&mut shard, slot, hash);
        }
        Ok(())
    }

    /// How many objects the table holds.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    fn remove(&self, shard: &mut Shard, slot: usize, hash: u64) {
        shard.remove(slot, hash, self.keypos());
        self.len.fetch_sub(1, Ordering::Relaxed);
    }

    /// Is the table empty?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the table holds (rows, index and slack).
    pub fn memory(&self) -> usize {
        size_of::<Table>()
            + self
                .shards
                .iter()
                .map(|s| size_of::<RwLock<Shard>>() + s.read().memory())
                .sum::<usize>()
    }

    /// Hands `each` every object, shard by shard.
    pub fn for_each(&self, mut each: impl FnMut(TermRef<'_>)) {
        let _whole = self.whole.read();
        for shard in self.shards.iter() {
            let shard = shard.read();
            for slot in 0..shard.rows.len() {
                each(shard.row(slot));
            }
        }
    }

    fn table_spec(spec: &Spec) -> Result<(), TableError> {
        match spec.kind() {
            Kind::Table => Ok(()),
            other => Err(TableError::NotATableSpec(other)),
        }
    }

    /// Hands `each` the result of every object a clause of `spec` matches
    /// (`ets:select/2`).
    pub fn select(
        &self,
        spec: &Spec,
        scratch: &mut Scratch,
        host: &mut dyn Host,
        mut each: impl FnMut(TermRef<'_>),
    ) -> Result<(), TableError> {
        Table::table_spec(spec)?;
        let _whole = self.whole.read();
        for shard in self.shards.iter() {
            let shard = shard.read();
            spec.run_matching(Batch::new(&shard.heap, &shard.rows), scratch, host, |_, outcome| {
                if let Ok(outcome) = outcome
                    && let Some(result) = outcome.result()
                {
                    each(result);
                }
            });
        }
        Ok(())
    }

    /// [`select`](Table::select) from `from`, stopping after `limit`
    /// results: the cursor to go on from, or `None` at the end of the
    /// table (`ets:select/3`). The chunk is one step: a list insert is in
    /// it whole or not at all.
    pub fn select_limit(
        &self,
        spec: &Spec,
        from: Cursor,
        limit: usize,
        scratch: &mut Scratch,
        host: &mut dyn Host,
        each: impl FnMut(TermRef<'_>),
    ) -> Result<Option<Cursor>, TableError> {
        let mut each = each;
        let each = |result: TermRef<'_>| {
            each(result);
            ControlFlow::Continue(())
        };
        match self.select_limit_within(spec, from, limit, usize::MAX, scratch, host, each)? {
            Budgeted::Done(next) => Ok(next),
            Budgeted::OverBudget => unreachable!("no table has usize::MAX rows, nor gave up"),
        }
    }

    /// [`select_limit`](Table::select_limit) that gives up, with
    /// [`Budgeted::OverBudget`], before it would look at more than `budget`
    /// rows, or once `each` breaks (its own budget, for the work it does
    /// with the results, ran out): what a caller on a thread that must not
    /// be held long runs first, to run the whole chunk elsewhere only when
    /// it is long. `each` may have been called before it gives up.
    #[expect(clippy::too_many_arguments, reason = "select_limit's, and the budget")]
    pub fn select_limit_within(
        &self,
        spec: &Spec,
        from: Cursor,
        limit: usize,
        budget: usize,
        scratch: &mut Scratch,
        host: &mut dyn Host,
        mut each: impl FnMut(TermRef<'_>) -> ControlFlow<()>,
    ) -> Result<Budgeted, TableError> {
        Table::table_spec(spec)?;
        let _whole = self.whole.read();
        let mut left = limit;
        let mut looked = 0usize;
        let mut cursor = from;
        while cursor.shard < SHARDS {
            let shard = self.shards[cursor.shard].read();
            while cursor.slot < shard.rows.len() {
                if left == 0 {
                    return Ok(Budgeted::Done(Some(cursor)));
                }
                let end = cursor.slot.saturating_add(CHUNK.max(left)).min(shard.rows.len());
                let rows = &shard.rows[cursor.slot..end];
                looked = looked.saturating_add(rows.len());
                if looked > budget {
                    return Ok(Budgeted::OverBudget);
                }
                let mut stop = None;
                let mut gave_up = false;
                spec.run_matching(Batch::new(&shard.heap, rows), scratch, host, |i, outcome| {
                    if stop.is_some() || gave_up {
                        return;
                    }
                    if let Ok(outcome) = outcome
                        && let Some(result) = outcome.result()
                    {
                        gave_up = each(result).is_break();
                        left -= 1;
                        if left == 0 {
                            stop = Some(i + 1);
                        }
                    }
                });
                if gave_up {
                    return Ok(Budgeted::OverBudget);
                }
                cursor.slot += stop.unwrap_or(rows.len());
            }
            cursor = Cursor { shard: cursor.shard + 1, slot: 0 };
        }
        Ok(Budgeted::Done(None))
    }

    /// How many objects `spec` returns `true` for (`ets:select_count/2`).
    pub fn select_count(
        &self,
        spec: &Spec,
        scratch: &mut Scratch,
        host: &mut dyn Host,
    ) -> Result<usize, TableError> {
        let mut count = 0;
        self.select(spec, scratch, host, |result| count += usize::from(is_true(result)))?;
        Ok(count)
    }

    /// Deletes the objects `spec` returns `true` for; how many
    /// (`ets:select_delete/2`).
    pub fn select_delete(
        &self,
        spec: &Spec,
        scratch: &mut Scratch,
        host: &mut dyn Host,
    ) -> Result<usize, TableError> {
        Table::table_spec(spec)?;
        let keypos = self.keypos();
        let mut deleted = 0;
        for shard in self.shards.iter() {
            let mut shard = shard.write();
            let mut doomed = Vec::new();
            spec.run_matching(Batch::new(&shard.heap, &shard.rows), scratch, host, |i, outcome| {
                if let Ok(outcome) = outcome
                    && outcome.result().is_some_and(is_true)
                {
                    doomed.push(i);
                }
            });
            deleted += doomed.len();
            for &slot in doomed.iter().rev() {
                let hash = hash_key(key_of(shard.row(slot), keypos));
                self.remove(&mut shard, slot, hash);
            }
        }
        Ok(deleted)
    }

    /// Replaces each object `spec` matches with its result, which keeps the
    /// key; how many (`ets:select_replace/2`). `spec_term` is the spec as a
    /// term: as ETS does, a spec whose clauses may change a key, or a bag,
    /// is refused before anything runs.
    pub fn select_replace(
        &self,
        spec: &Spec,
        spec_term: TermRef<'_>,
        scratch: &mut Scratch,
        host: &mut dyn Host,
    ) -> Result<usize, TableError> {
        Table::table_spec(spec)?;
        if self.options.kind == TableKind::Bag {
            return Err(TableError::CannotReplace("a bag cannot replace objects"));
        }
        if !keeps_key(spec_term, self.keypos()) {
            return Err(TableError::CannotReplace("the spec may change an object's key"));
        }
        let mut replaced = 0;
        let mut new = matchspec::term::Heap::new();
        for shard in self.shards.iter() {
            let mut shard = shard.write();
            let mut replacements = Vec::new();
            new.clear();
            spec.run_matching(Batch::new(&shard.heap, &shard.rows), scratch, host, |i, outcome| {
                if let Ok(outcome) = outcome
                    && let Some(result) = outcome.result()
                {
                    replacements.push((i, result.copy_to(&mut new)));
                }
            });
            // The check above guarantees the key; a result that is not an
            // object with the same key (which it rules out) is left alone.
            let keypos = self.keypos();
            replacements.retain(|&(slot, word)| {
                let result = new.view(word);
                result
                    .as_tuple()
                    .and_then(|t| t.get(keypos - 1))
                    .is_some_and(|key| key.eq_exact(&key_of(shard.row(slot), keypos)))
            });
            replaced += replacements.len();
            for (slot, word) in replacements {
                shard.replace(slot, new.view(word));
            }
        }
        Ok(replaced)
    }
}

/// Write locks on some shards, sorted by shard.
struct ShardGuards<'t>(Vec<(usize, parking_lot::RwLockWriteGuard<'t, Shard>)>);

impl ShardGuards<'_> {
    /// The locked shard of `hash`.
    fn of(&mut self, hash: u64) -> &mut Shard {
        let i = shard_index(hash);
        let at = self.0.binary_search_by_key(&i, |g| g.0).expect("the shard was locked");
        &mut self.0[at].1
    }
}

/// The shard of a key hash: the index inside a shard uses the low bits, so
/// the shard is chosen by the high ones.
fn shard_index(hash: u64) -> usize {
    (hash >> 56) as usize % SHARDS
}

fn is_true(result: TermRef<'_>) -> bool {
    result.as_atom() == Some(Atom::TRUE)
}
