//! `msc::table`: set and bag semantics, scans with cursors, deletes that
//! compact, and readers beside a writer. (Agreement with ETS itself is
//! tested in a real BEAM: beam/msc/test/msc_table_tests.erl.)

use std::collections::BTreeSet;

use msc::table::{Cursor, Table, TableError, TableKind, TableOptions};
use msc::{Engine, Kind, Scratch, Spec, Term, TestHost};

fn t(text: &str) -> Term {
    Term::parse(text).unwrap()
}

fn spec(text: &str) -> Spec {
    Spec::builder().engine(Engine::Interp).build(text, Kind::Table).unwrap()
}

fn select(table: &Table, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    table
        .select(&spec(text), &mut Scratch::new(), &mut TestHost::default(), |r| {
            out.insert(r.to_string());
        })
        .unwrap();
    out
}

fn lookup(table: &Table, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    table.lookup(t(key).as_ref(), |r| out.push(r.to_string()));
    out
}

#[test]
fn a_set_replaces_and_keys_compare_exactly() {
    let table = Table::new(TableOptions::default());
    table.insert(t("{1, a}").as_ref()).unwrap();
    table.insert(t("{1, b}").as_ref()).unwrap();
    table.insert(t("{1.0, c}").as_ref()).unwrap();
    assert_eq!(lookup(&table, "1"), ["{1,b}"]);
    assert_eq!(lookup(&table, "1.0"), ["{1.0,c}"]);
    assert_eq!(table.len(), 2);
}

#[test]
fn a_bag_keeps_insertion_order_without_duplicates() {
    let table = Table::new(TableOptions { kind: TableKind::Bag, keypos: 2 });
    for row in ["{z, k}", "{a, k}", "{z, k}", "{m, k}", "{q, other}"] {
        table.insert(t(row).as_ref()).unwrap();
    }
    assert_eq!(lookup(&table, "k"), ["{z,k}", "{a,k}", "{m,k}"]);
    table.delete_object(t("{a, k}").as_ref()).unwrap();
    assert_eq!(lookup(&table, "k"), ["{z,k}", "{m,k}"]);
    table.delete(t("k").as_ref());
    assert_eq!(lookup(&table, "k"), Vec::<String>::new());
    assert_eq!(table.len(), 1);
}

#[test]
fn objects_must_be_tuples_long_enough() {
    let table = Table::new(TableOptions { kind: TableKind::Set, keypos: 3 });
    assert_eq!(table.insert(t("{a, b}").as_ref()), Err(TableError::NotAnObject { keypos: 3 }));
    assert!(table.insert_all(&[t("{a, b, c}").as_ref(), t("x").as_ref()]).is_err());
    assert!(table.is_empty(), "a bad object in a list inserts none");
    assert_eq!(
        Table::try_new(TableOptions { kind: TableKind::Set, keypos: 0 }).unwrap_err(),
        TableError::BadKeypos
    );
}

#[test]
fn insert_new_is_all_or_nothing() {
    let table = Table::new(TableOptions::default());
    assert!(table.insert_new(&[t("{1, a}").as_ref(), t("{2, b}").as_ref()]).unwrap());
    assert!(!table.insert_new(&[t("{3, c}").as_ref(), t("{2, z}").as_ref()]).unwrap());
    assert_eq!(lookup(&table, "3"), Vec::<String>::new());
    assert_eq!(lookup(&table, "2"), ["{2,b}"]);
}

#[test]
fn selects_count_delete_and_replace() {
    let table = Table::new(TableOptions::default());
    for n in 0..5000 {
        table.insert(t(&format!("{{{n}, {}}}", n % 10)).as_ref()).unwrap();
    }
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    let sevens = spec("[{{'_', 7}, [], [true]}]");
    assert_eq!(table.select_count(&sevens, &mut scratch, &mut host).unwrap(), 500);
    assert_eq!(
        select(&table, "[{{'$1', 7}, [{'<', '$1', 30}], ['$1']}]"),
        ["17", "27", "7"].map(String::from).into()
    );

    let bump = "[{{'$1', 7}, [], [{{'$1', seventy}}]}]";
    let replaced =
        table.select_replace(&spec(bump), t(bump).as_ref(), &mut scratch, &mut host).unwrap();
    assert_eq!(replaced, 500);
    assert_eq!(lookup(&table, "17"), ["{17,seventy}"]);

    let rekey = "[{{'$1', 7}, [], [{{x, '$1'}}]}]";
    assert!(matches!(
        table.select_replace(&spec(rekey), t(rekey).as_ref(), &mut scratch, &mut host),
        Err(TableError::CannotReplace(_))
    ));

    let deleted = table
        .select_delete(&spec("[{{'_', seventy}, [], [true]}]"), &mut scratch, &mut host)
        .unwrap();
    assert_eq!(deleted, 500);
    assert_eq!(table.len(), 4500);
    assert_eq!(table.select_count(&sevens, &mut scratch, &mut host).unwrap(), 0);
}

#[test]
fn trace_specs_are_refused() {
    let table = Table::new(TableOptions::default());
    let trace = Spec::compile("[{'_', [], [true]}]", Kind::Call).unwrap();
    let err =
        table.select(&trace, &mut Scratch::new(), &mut TestHost::default(), |_| {}).unwrap_err();
    assert_eq!(err, TableError::NotATableSpec(Kind::Call));
}

#[test]
fn cursors_visit_every_match_once() {
    let table = Table::new(TableOptions::default());
    for n in 0..20_000 {
        table.insert(t(&format!("{{{n}, {}}}", n % 3)).as_ref()).unwrap();
    }
    let every_third = spec("[{{'$1', 0}, [], ['$1']}]");
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    for limit in [1, 7, 1000, 100_000] {
        let mut seen = Vec::new();
        let mut cursor = Some(Cursor::START);
        while let Some(from) = cursor {
            let before = seen.len();
            cursor = table
                .select_limit(&every_third, from, limit, &mut scratch, &mut host, |r| {
                    seen.push(r.as_i64().unwrap())
                })
                .unwrap();
            assert!(seen.len() - before <= limit);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..20_000).step_by(3).collect::<Vec<i64>>(), "limit {limit}");
    }
    let (shard, slot) = Cursor::START.to_parts();
    assert_eq!(Cursor::from_parts(shard, slot), Some(Cursor::START));
    assert_eq!(Cursor::from_parts(10_000, 0), None);
}

#[test]
fn deleting_most_rows_compacts_and_keeps_the_rest() {
    let table = Table::new(TableOptions::default());
    for n in 0..50_000 {
        table.insert(t(&format!("{{{n}, <<\"some bytes to keep\">>}}")).as_ref()).unwrap();
    }
    let full = table.memory();
    for n in 0..49_000 {
        table.delete(t(&n.to_string()).as_ref());
    }
    assert_eq!(table.len(), 1000);
    assert!(table.memory() < full / 4, "{} of {full} bytes left", table.memory());
    for n in 49_000..50_000 {
        assert_eq!(lookup(&table, &n.to_string()), [format!("{{{n},<<\"some bytes to keep\">>}}")]);
    }
}

#[test]
fn readers_run_beside_a_writer() {
    let table = Table::new(TableOptions::default());
    let count = spec("[{{'_', '_'}, [], [true]}]");
    std::thread::scope(|s| {
        s.spawn(|| {
            for n in 0..20_000 {
                table.insert(t(&format!("{{{n}, x}}")).as_ref()).unwrap();
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
                let mut last = 0;
                while last < 20_000 {
                    let now = table.select_count(&count, &mut scratch, &mut host).unwrap();
                    assert!(now >= last, "rows never disappear here");
                    last = now;
                }
            });
        }
    });
}

/// Objects `{Key, Generation}` for keys `0..n`.
fn generation(n: usize, g: usize) -> Vec<Term> {
    (0..n).map(|k| t(&format!("{{{k}, {g}}}"))).collect()
}

/// The generations a list of `{Key, Generation}` results shows.
fn generations(results: &[String]) -> BTreeSet<String> {
    results
        .iter()
        .map(|r| r.trim_matches(|c| c == '{' || c == '}').split(',').nth(1).unwrap().to_owned())
        .collect()
}

#[test]
fn an_inserted_list_is_seen_whole_or_not_at_all() {
    // One writer inserts the same 200 keys again and again, each list a new
    // generation; readers must never see two generations at once, through
    // a select, a chunk of select_limit, or for_each.
    let table = Table::new(TableOptions::default());
    let first = generation(200, 0);
    table.insert_all(&first.iter().map(Term::as_ref).collect::<Vec<_>>()).unwrap();
    let all = spec("[{'_', [], ['$_']}]");
    let done = std::sync::atomic::AtomicBool::new(false);
    let torn = std::sync::atomic::AtomicUsize::new(0);
    let reads = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for g in 1..=300 {
                let objects = generation(200, g);
                table.insert_all(&objects.iter().map(Term::as_ref).collect::<Vec<_>>()).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        for reader in 0..3 {
            let (all, done, torn, reads, table) = (&all, &done, &torn, &reads, &table);
            s.spawn(move || {
                let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut seen = Vec::new();
                    match reader {
                        0 => {
                            table.select(all, &mut scratch, &mut host, |r| seen.push(r.to_string()))
                        }
                        1 => table
                            .select_limit(all, Cursor::START, 1000, &mut scratch, &mut host, |r| {
                                seen.push(r.to_string())
                            })
                            .map(|_| ()),
                        _ => {
                            table.for_each(|r| seen.push(r.to_string()));
                            Ok(())
                        }
                    }
                    .unwrap();
                    assert_eq!(seen.len(), 200);
                    if generations(&seen).len() != 1 {
                        torn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    assert!(reads.into_inner() > 0);
    assert_eq!(torn.into_inner(), 0, "reads that saw two generations");
}

#[test]
fn a_scan_with_a_limit_returns_stable_objects_once_under_churn() {
    // 5,000 stable keys walked 50 at a time while other threads insert and
    // delete other keys: each stable object comes exactly once.
    let table = Table::new(TableOptions::default());
    for k in 0..5000 {
        table.insert(t(&format!("{{{k}, stable}}")).as_ref()).unwrap();
    }
    let stable = spec("[{{'$1', stable}, [], ['$1']}]");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (table, done) = (&table, &done);
            s.spawn(move || {
                let mut n = 0u64;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let key = format!("{{churn, {w}, {}}}", n % 3000);
                    if n.is_multiple_of(2) {
                        table.insert(t(&format!("{{{key}, churn}}")).as_ref()).unwrap();
                    } else {
                        table.delete(t(&key).as_ref());
                    }
                    n += 1;
                }
            });
        }
        for _ in 0..20 {
            let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
            let mut seen = Vec::new();
            let mut cursor = Some(Cursor::START);
            while let Some(from) = cursor {
                cursor = table
                    .select_limit(&stable, from, 50, &mut scratch, &mut host, |k| {
                        seen.push(k.as_i64().unwrap())
                    })
                    .unwrap();
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..5000).collect::<Vec<i64>>(), "missed or repeated objects");
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
