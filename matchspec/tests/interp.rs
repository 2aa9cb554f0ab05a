//! The interpreter as an embedder uses it: one compiled spec shared by
//! threads, a scratch per thread, no allocation per event once warm.

use matchspec::spec::Kind;
use matchspec::term::{Heap, Word};
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};

/// Allocations made while `f` runs, on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

const SPEC: &str = "[{{'$1', '$2', ok}, [{'>', '$2', 100}, {is_atom, '$1'}], ['$1']},
                     {{'$1', '_', error}, [], [{{failed, '$1'}}]}]";

fn rows(heap: &mut Heap) -> Vec<Word> {
    let text = "{a, 150, ok}. {b, 50, ok}. {c, 1, error}. {\"d\", 500, ok}. x.";
    matchspec::syntax::parse_terms_into(text, heap).expect("parses")
}

#[test]
fn compiled_specs_are_send_and_sync() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<CompiledSpec>();
    fn sendable<T: Send>() {}
    sendable::<Scratch>();
}

#[test]
fn threads_share_one_compiled_spec() {
    let spec = CompiledSpec::compile(SPEC, Kind::Table, &Config::default()).expect("compiles");
    let mut heap = Heap::new();
    let rows = rows(&mut heap);
    let answers = |heap: &Heap| -> Vec<String> {
        let mut scratch = Scratch::new();
        rows.iter()
            .map(|&row| {
                match spec
                    .run(heap.view(row), &mut scratch, &mut TestHost::default())
                    .expect("runs")
                {
                    Outcome::Match(m) => m.result.to_string(),
                    Outcome::NoMatch => "nomatch".to_owned(),
                }
            })
            .collect()
    };
    let expected = answers(&heap);
    assert_eq!(expected, ["a", "nomatch", "{failed,c}", "nomatch", "nomatch"]);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| answers(&heap))).collect();
        for handle in handles {
            assert_eq!(handle.join().expect("no panic"), expected);
        }
    });
}

#[test]
fn runs_that_build_nothing_allocate_nothing() {
    let spec = CompiledSpec::compile(SPEC, Kind::Table, &Config::default()).expect("compiles");
    let mut heap = Heap::new();
    let rows = rows(&mut heap);
    let mut scratch = Scratch::new();
    let mut run_all = |rows: &[Word]| {
        for &row in rows {
            std::hint::black_box(
                spec.run(heap.view(row), &mut scratch, &mut TestHost::default()).expect("runs"),
            );
        }
    };
    // Warm up: the scratch sizes its registers and heap once (which the
    // counter sees, so it does count).
    assert!(allocations(|| run_all(&rows)) > 0);
    let not_building: Vec<Word> =
        rows.iter().copied().filter(|&w| heap.view(w).to_string() != "{c,1,error}").collect();
    let count = allocations(|| {
        for _ in 0..1000 {
            run_all(&not_building);
        }
    });
    assert_eq!(count, 0);
    // A clause that builds a tuple reuses the warmed-up scratch heap too.
    let building: Vec<Word> =
        rows.iter().copied().filter(|&w| heap.view(w).to_string() == "{c,1,error}").collect();
    let count = allocations(|| {
        for _ in 0..1000 {
            run_all(&building);
        }
    });
    assert_eq!(count, 0);
}
