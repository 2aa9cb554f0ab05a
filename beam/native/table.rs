//! The NIFs of `msc_table`: a resident [`Table`] per resource.
//!
//! Each call that scans the table has a twin on a dirty CPU scheduler
//! (`_dirty`); `msc_table.erl` picks it for tables or lists large enough
//! that the call could hold a normal scheduler for about a millisecond.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};

use msc::table::{Budgeted, Cursor, Table, TableError, TableKind, TableOptions};
use msc::{Engine, Heap, Kind, Scratch, Spec, Word};
use parking_lot::Mutex;
use rustler::{Encoder, Env, Error, LocalPid, Monitor, NifResult, ResourceArc, Term};

use crate::atoms;
use crate::convert::{Exported, Exporter, import};
use crate::spec::{Compiled, caller_host, export_error, import_error};

/// Tables alive in this VM (for tests that show tables are freed).
static LIVE_TABLES: AtomicUsize = AtomicUsize::new(0);

/// A table held by the VM: freed when no process refers to it.
pub struct TableResource {
    table: Table,
    /// Who fixed the table (`safe_fixtable/2`).
    fixes: Mutex<Fixes>,
}

/// The processes that fixed a table, as ETS keeps them for
/// `safe_fixtable/2` and `info/2`. Every msc table traverses safely, fixed
/// or not: a fixation changes nothing but what `info/2` reports.
#[derive(Default)]
struct Fixes {
    /// When the first of the current fixations was made: the
    /// `erlang:monotonic_time()` and `erlang:timestamp()` the caller gave.
    since: Option<(i64, (i64, i64, i64))>,
    /// Each fixing process, its count and the monitor that drops it when
    /// it exits, in the order they first fixed the table.
    by: Vec<(LocalPid, u64, Monitor)>,
}

impl Fixes {
    fn forget(&mut self, pid: LocalPid) {
        self.by.retain(|(p, _, _)| *p != pid);
        if self.by.is_empty() {
            self.since = None;
        }
    }
}

#[rustler::resource_impl]
impl rustler::Resource for TableResource {
    const IMPLEMENTS_DOWN: bool = true;

    /// A process that fixed the table exited: its fixations go, as ETS's do.
    fn down<'a>(&'a self, _env: Env<'a>, pid: LocalPid, _monitor: Monitor) {
        self.fixes.lock().forget(pid);
    }
}

impl Drop for TableResource {
    fn drop(&mut self) {
        LIVE_TABLES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Every refusal of a table is `badarg`, as ets raises.
fn table_error(_: TableError) -> Error {
    Error::BadArg
}

#[rustler::nif(name = "nif_table_new")]
fn table_new<'a>(env: Env<'a>, kind: Term<'a>, keypos: usize) -> NifResult<Term<'a>> {
    let kind = match kind.atom_to_string().map_err(|_| Error::BadArg)?.as_str() {
        "set" => TableKind::Set,
        "bag" => TableKind::Bag,
        _ => return Err(Error::BadArg),
    };
    let table = Table::try_new(TableOptions { kind, keypos }).map_err(table_error)?;
    LIVE_TABLES.fetch_add(1, Ordering::Relaxed);
    let fixes = Mutex::new(Fixes::default());
    Ok(ResourceArc::new(TableResource { table, fixes }).encode(env))
}

#[rustler::nif(name = "nif_table_live_count")]
fn table_live_count() -> usize {
    LIVE_TABLES.load(Ordering::Relaxed)
}

/// A NIF on a normal scheduler and its twin on a dirty CPU one, both
/// running `work` on a table and some terms: `msc_table.erl` picks the twin
/// when the work could take about a millisecond.
macro_rules! normal_and_dirty {
    ($module:ident: $normal:literal, $dirty:literal => $work:ident(table $(, $arg:ident)*)) => {
        mod $module {
            use super::*;

            #[rustler::nif(name = $normal)]
            fn normal<'a>(
                env: Env<'a>,
                table: ResourceArc<TableResource>
                $(, $arg: Term<'a>)*
            ) -> NifResult<Term<'a>> {
                $work(env, &table $(, $arg)*)
            }

            #[rustler::nif(name = $dirty, schedule = "DirtyCpu")]
            fn dirty<'a>(
                env: Env<'a>,
                table: ResourceArc<TableResource>
                $(, $arg: Term<'a>)*
            ) -> NifResult<Term<'a>> {
                $work(env, &table $(, $arg)*)
            }
        }
    };
}

normal_and_dirty!(insert_nifs: "nif_table_insert", "nif_table_insert_dirty" => insert(table, objects));
normal_and_dirty!(insert_new_nifs: "nif_table_insert_new", "nif_table_insert_new_dirty" => insert_new(table, objects));
normal_and_dirty!(lookup_nifs: "nif_table_lookup", "nif_table_lookup_dirty" => lookup(table, key));
normal_and_dirty!(delete_nifs: "nif_table_delete", "nif_table_delete_dirty" => delete(table, key));
normal_and_dirty!(delete_object_nifs: "nif_table_delete_object", "nif_table_delete_object_dirty" => delete_object(table, object));
normal_and_dirty!(count_nifs: "nif_table_count", "nif_table_count_dirty" => count(table, spec, op));

/// The objects of `objects`: one object, or a proper list of them.
fn import_objects(objects: Term<'_>, heap: &mut Heap) -> NifResult<Vec<Word>> {
    if objects.is_list() || objects.is_empty_list() {
        let mut words = Vec::new();
        let mut rest = objects;
        while let Ok((head, tail)) = rest.list_get_cell() {
            words.push(import(head, heap).map_err(import_error)?);
            rest = tail;
        }
        if !rest.is_empty_list() {
            return Err(Error::BadArg);
        }
        Ok(words)
    } else {
        Ok(vec![import(objects, heap).map_err(import_error)?])
    }
}

fn insert<'a>(env: Env<'a>, table: &TableResource, objects: Term<'a>) -> NifResult<Term<'a>> {
    let mut heap = Heap::new();
    let words = import_objects(objects, &mut heap)?;
    let terms: Vec<_> = words.iter().map(|&w| heap.view(w)).collect();
    table.table.insert_all(&terms).map_err(table_error)?;
    Ok(true.encode(env))
}

fn insert_new<'a>(env: Env<'a>, table: &TableResource, objects: Term<'a>) -> NifResult<Term<'a>> {
    let mut heap = Heap::new();
    let words = import_objects(objects, &mut heap)?;
    let terms: Vec<_> = words.iter().map(|&w| heap.view(w)).collect();
    Ok(table.table.insert_new(&terms).map_err(table_error)?.encode(env))
}

fn lookup<'a>(env: Env<'a>, table: &TableResource, key: Term<'a>) -> NifResult<Term<'a>> {
    let mut heap = Heap::new();
    let key = import(key, &mut heap).map_err(import_error)?;
    // As ets:lookup/2, whole however large the objects: a lookup is one step.
    let mut answer = Answer::new(env, Budget::DIRTY);
    table.table.lookup(heap.view(key), |object| {
        let _ = answer.push(object);
    });
    answer.list()
}

fn delete<'a>(env: Env<'a>, table: &TableResource, key: Term<'a>) -> NifResult<Term<'a>> {
    let mut heap = Heap::new();
    let key = import(key, &mut heap).map_err(import_error)?;
    table.table.delete(heap.view(key));
    Ok(true.encode(env))
}

fn delete_object<'a>(env: Env<'a>, table: &TableResource, object: Term<'a>) -> NifResult<Term<'a>> {
    let mut heap = Heap::new();
    let object = import(object, &mut heap).map_err(import_error)?;
    table.table.delete_object(heap.view(object)).map_err(table_error)?;
    Ok(true.encode(env))
}

/// A table spec: a compiled one, or a term compiled now (`badarg` if it
/// does not compile, as ETS raises).
fn spec_of(spec: Term<'_>) -> NifResult<SpecRef> {
    if let Ok(compiled) = spec.decode::<ResourceArc<Compiled>>() {
        return Ok(SpecRef::Compiled(compiled));
    }
    let mut heap = Heap::new();
    let term = import(spec, &mut heap).map_err(import_error)?;
    let spec = Spec::builder()
        .engine(Engine::Auto)
        .config(crate::release::config())
        .build_from_term(heap.view(term), Kind::Table)
        .map_err(|_| Error::BadArg)?;
    Ok(SpecRef::Fresh(Box::new(spec)))
}

enum SpecRef {
    Compiled(ResourceArc<Compiled>),
    Fresh(Box<Spec>),
}

impl SpecRef {
    fn spec(&self) -> &Spec {
        match self {
            SpecRef::Compiled(c) => c.spec(),
            SpecRef::Fresh(s) => s,
        }
    }
}

/// How much a call may do on a normal scheduler before it leaves the work
/// to its dirty twin: rows looked at, and terms built for the answer.
#[derive(Clone, Copy)]
struct Budget {
    rows: usize,
    terms: usize,
}

impl Budget {
    /// Some 100 microseconds of rows (a row is looked at in a few
    /// nanoseconds), and well under a millisecond of terms built (a term
    /// is built in 20 to 250 nanoseconds, the most for large answers).
    const NORMAL: Budget = Budget { rows: 16_384, terms: 4_096 };
    /// A dirty scheduler may take as long as the work takes.
    const DIRTY: Budget = Budget { rows: usize::MAX, terms: usize::MAX };
}

/// The results of a scan built as BEAM terms while the budget lasts.
struct Answer<'a> {
    env: Env<'a>,
    exporter: Exporter<'a>,
    terms_left: usize,
    built: Vec<Term<'a>>,
    failed: Option<Error>,
}

impl<'a> Answer<'a> {
    fn new(env: Env<'a>, budget: Budget) -> Answer<'a> {
        let exporter = Exporter::new(env);
        Answer { env, exporter, terms_left: budget.terms, built: Vec::new(), failed: None }
    }

    /// Builds `result`; breaks when the budget ran out or building failed.
    fn push(&mut self, result: msc::TermRef<'_>) -> ControlFlow<()> {
        if self.failed.is_some() {
            return ControlFlow::Break(());
        }
        match self.exporter.export_within(result, &mut self.terms_left) {
            Ok(Exported::Built(term)) => {
                self.built.push(term);
                ControlFlow::Continue(())
            }
            Ok(Exported::OverBudget) => ControlFlow::Break(()),
            Err(e) => {
                self.failed = Some(export_error(e));
                ControlFlow::Break(())
            }
        }
    }

    /// The results as a list (for a scan whose `each` cannot give up).
    fn list(self) -> NifResult<Term<'a>> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.built.encode(self.env)),
        }
    }

    /// The results as a list and where the scan stopped, or `None` when the
    /// budget ran out. A failure to build a result is the answer even then:
    /// it gave up the scan too.
    fn finish(self, scanned: Budgeted) -> NifResult<Option<(Term<'a>, Option<Cursor>)>> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        Ok(match scanned {
            Budgeted::OverBudget => None,
            Budgeted::Done(next) => Some((self.built.encode(self.env), next)),
        })
    }
}

/// At most `limit` results of `spec` from `from`, within `budget`.
fn scan<'a>(
    env: Env<'a>,
    table: &TableResource,
    spec: Term<'a>,
    (from, limit): (Cursor, usize),
    budget: Budget,
) -> NifResult<Option<(Term<'a>, Option<Cursor>)>> {
    let spec = spec_of(spec)?;
    let mut host = caller_host(env)?;
    let mut answer = Answer::new(env, budget);
    let scanned = table
        .table
        .select_limit_within(
            spec.spec(),
            from,
            limit,
            budget.rows,
            &mut Scratch::new(),
            &mut host,
            |r| answer.push(r),
        )
        .map_err(table_error)?;
    answer.finish(scanned)
}

/// `select/2`'s matches, or `dirty` if they take more than the budget.
fn select<'a>(
    env: Env<'a>,
    table: &TableResource,
    spec: Term<'a>,
    budget: Budget,
) -> NifResult<Term<'a>> {
    Ok(match scan(env, table, spec, (Cursor::START, usize::MAX), budget)? {
        Some((matches, _)) => matches,
        None => atoms::dirty().encode(env),
    })
}

#[rustler::nif(name = "nif_table_select")]
fn table_select<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    spec: Term<'a>,
) -> NifResult<Term<'a>> {
    select(env, &table, spec, Budget::NORMAL)
}

#[rustler::nif(name = "nif_table_select_dirty", schedule = "DirtyCpu")]
fn table_select_dirty<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    spec: Term<'a>,
) -> NifResult<Term<'a>> {
    select(env, &table, spec, Budget::DIRTY)
}

/// `{Matches, Shard, Slot}` to go on from, or `{Matches, done}`; `dirty`
/// if the chunk would take more than the budget.
fn select_limit<'a>(
    env: Env<'a>,
    table: &TableResource,
    spec: Term<'a>,
    (shard, slot, limit): (u64, u64, usize),
    budget: Budget,
) -> NifResult<Term<'a>> {
    if limit == 0 {
        return Err(Error::BadArg);
    }
    let from = Cursor::from_parts(shard, slot).ok_or(Error::BadArg)?;
    Ok(match scan(env, table, spec, (from, limit), budget)? {
        Some((matches, Some(next))) => {
            let (shard, slot) = next.to_parts();
            (matches, shard, slot).encode(env)
        }
        Some((matches, None)) => (matches, atoms::done()).encode(env),
        None => atoms::dirty().encode(env),
    })
}

#[rustler::nif(name = "nif_table_select_limit")]
fn table_select_limit<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    spec: Term<'a>,
    shard: u64,
    slot: u64,
    limit: usize,
) -> NifResult<Term<'a>> {
    select_limit(env, &table, spec, (shard, slot, limit), Budget::NORMAL)
}

#[rustler::nif(name = "nif_table_select_limit_dirty", schedule = "DirtyCpu")]
fn table_select_limit_dirty<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    spec: Term<'a>,
    shard: u64,
    slot: u64,
    limit: usize,
) -> NifResult<Term<'a>> {
    select_limit(env, &table, spec, (shard, slot, limit), Budget::DIRTY)
}

/// `select_count`, `select_delete` or `select_replace` (by `op`).
fn count<'a>(
    env: Env<'a>,
    table: &TableResource,
    spec_term: Term<'a>,
    op: Term<'a>,
) -> NifResult<Term<'a>> {
    let spec = spec_of(spec_term)?;
    let mut host = caller_host(env)?;
    let mut scratch = Scratch::new();
    let t = &table.table;
    let n = match op.atom_to_string().map_err(|_| Error::BadArg)?.as_str() {
        "select_count" => t.select_count(spec.spec(), &mut scratch, &mut host),
        "select_delete" => t.select_delete(spec.spec(), &mut scratch, &mut host),
        "select_replace" => {
            let mut heap = Heap::new();
            let term = import(spec_term, &mut heap).map_err(import_error)?;
            t.select_replace(spec.spec(), heap.view(term), &mut scratch, &mut host)
        }
        _ => return Err(Error::BadArg),
    }
    .map_err(table_error)?;
    Ok(n.encode(env))
}

#[rustler::nif(name = "nif_table_to_list", schedule = "DirtyCpu")]
fn table_to_list<'a>(env: Env<'a>, table: ResourceArc<TableResource>) -> NifResult<Term<'a>> {
    let mut answer = Answer::new(env, Budget::DIRTY);
    table.table.for_each(|object| {
        let _ = answer.push(object);
    });
    answer.list()
}

/// `safe_fixtable(T, Fix)` for the calling process, at the time given
/// (monotonic, and as `erlang:timestamp()`), which counts if it is the
/// table's first fixation now.
#[rustler::nif(name = "nif_table_fix")]
fn table_fix<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    fix: bool,
    monotonic: i64,
    timestamp: (i64, i64, i64),
) -> NifResult<Term<'a>> {
    let pid = env.pid();
    let mut fixes = table.fixes.lock();
    let at = fixes.by.iter().position(|(p, _, _)| *p == pid);
    match (fix, at) {
        (true, Some(i)) => fixes.by[i].1 += 1,
        (true, None) => {
            let monitor = env.monitor(&table, &pid).ok_or(Error::BadArg)?;
            fixes.by.push((pid, 1, monitor));
            fixes.since.get_or_insert((monotonic, timestamp));
        }
        (false, Some(i)) if fixes.by[i].1 > 1 => fixes.by[i].1 -= 1,
        (false, Some(i)) => {
            let (_, _, monitor) = fixes.by.remove(i);
            env.demonitor(&table, &monitor);
            if fixes.by.is_empty() {
                fixes.since = None;
            }
        }
        (false, None) => {}
    }
    Ok(true.encode(env))
}

/// `info(T, safe_fixed | safe_fixed_monotonic_time | fixed)`: `false`, or
/// `{Since, [{Pid, Count}]}` (`fixed`: whether any process fixed it).
#[rustler::nif(name = "nif_table_fixed")]
fn table_fixed<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    item: Term<'a>,
) -> NifResult<Term<'a>> {
    let fixes = table.fixes.lock();
    let Some((monotonic, timestamp)) = fixes.since else {
        return Ok(false.encode(env));
    };
    let who: Vec<(LocalPid, u64)> = fixes.by.iter().map(|(p, n, _)| (*p, *n)).collect();
    Ok(match item.atom_to_string().map_err(|_| Error::BadArg)?.as_str() {
        "fixed" => true.encode(env),
        "safe_fixed" => (timestamp, who).encode(env),
        "safe_fixed_monotonic_time" => (monotonic, who).encode(env),
        _ => return Err(Error::BadArg),
    })
}

/// `size` (objects), `memory` (words, as ETS counts), `type`, `keypos`.
#[rustler::nif(name = "nif_table_info")]
fn table_info<'a>(
    env: Env<'a>,
    table: ResourceArc<TableResource>,
    item: Term<'a>,
) -> NifResult<Term<'a>> {
    let t = &table.table;
    Ok(match item.atom_to_string().map_err(|_| Error::BadArg)?.as_str() {
        "size" => t.len().encode(env),
        "memory" => (t.memory() / size_of::<usize>()).encode(env),
        "type" => match t.options().kind {
            TableKind::Set => atoms::set().encode(env),
            TableKind::Bag => atoms::bag().encode(env),
        },
        "keypos" => t.options().keypos.encode(env),
        _ => return Err(Error::BadArg),
    })
}
