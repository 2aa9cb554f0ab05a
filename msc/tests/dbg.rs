//! dbg trace files against what OTP 27 made of them (`testdata/dbg`,
//! written by its `gen.escript`): the messages `dbg:trace_client/3`
//! delivers, `ets:match_spec_run/2` of each spec on them, the order dbg
//! reads wrap sets in, and where damaged files stop.

use std::fs::File;

use msc::stream::{Entry, EtfReader, Filter, Framing, Sink, StreamErrorKind, wrap_order};
use msc::{EvalError, Heap, Kind, Outcome, Spec, Term, parse_term, parse_terms_into};

fn path(name: &str) -> String {
    format!("{}/../testdata/dbg/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The terms of a `.messages`, `.results` or `.cases` file.
fn terms(name: &str) -> Vec<Term> {
    let text = std::fs::read_to_string(path(name)).expect("readable");
    let mut heap = Heap::new();
    let words = parse_terms_into(&text, &mut heap).expect("terms");
    words.iter().map(|&w| heap.view(w).to_owned()).collect()
}

/// Every match's result, owned.
#[derive(Default)]
struct Results(Vec<Term>);

impl Sink for Results {
    fn decided(
        &mut self,
        _: Entry<'_>,
        outcome: Result<&Outcome<'_>, &EvalError>,
    ) -> std::io::Result<()> {
        if let Ok(Outcome::Match(m)) = outcome {
            self.0.push(m.result.to_owned());
        }
        Ok(())
    }
}

/// `spec` over the dbg trace files `names`, read one after another.
fn run(spec: &Spec, names: &[&str]) -> (Vec<Term>, Option<msc::stream::StreamError>) {
    let mut results = Results::default();
    for name in names {
        let file = File::open(path(name)).expect("exists");
        let mut reader = EtfReader::new(file).framing(Framing::DbgTrace);
        let summary = Filter::new(spec).run(&mut reader, &mut results).expect("no sink error");
        if summary.stopped.is_some() {
            return (results.0, summary.stopped);
        }
    }
    (results.0, None)
}

fn specs() -> Vec<Spec> {
    terms("specs.terms")
        .iter()
        .map(|spec| Spec::builder().build_from_term(spec.as_ref(), Kind::Table).expect("compiles"))
        .collect()
}

#[test]
fn every_spec_gives_ets_answers_on_a_trace_file() {
    for (n, spec) in specs().iter().enumerate() {
        let (got, stopped) = run(spec, &["single.trace"]);
        assert!(stopped.is_none(), "{stopped:?}");
        let expected = terms(&format!("single.{}.results", n + 1));
        assert!(!expected.is_empty() || n > 0);
        assert_eq!(got, expected, "spec {}", n + 1);
    }
}

#[test]
fn a_wrap_set_given_in_any_order_reads_as_dbg_reads_it() {
    let shuffled = ["wrap.1.trace", "wrap.4.trace", "wrap.0.trace", "wrap.3.trace"];
    let order: Vec<&str> =
        wrap_order(&shuffled).expect("a set").into_iter().map(|i| shuffled[i]).collect();
    let dbg: Vec<String> = std::fs::read_to_string(path("wrap.order"))
        .expect("readable")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(order, dbg);
    for (n, spec) in specs().iter().enumerate() {
        let (got, stopped) = run(spec, &order);
        assert!(stopped.is_none(), "{stopped:?}");
        assert_eq!(got, terms(&format!("wrap.{}.results", n + 1)), "spec {}", n + 1);
    }
}

#[test]
fn every_wrap_set_dbg_reads_is_ordered_as_dbg_orders_it() {
    let cases = terms("wrap_sort.cases");
    let mut accepted = Vec::new();
    for case in &cases {
        let text = case.to_string();
        let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
            continue;
        };
        if inner.starts_with("names") {
            continue;
        }
        // {Count, Present, {ok, Order}} or {Count, Present, {exit, Reason}}.
        let (_, rest) = inner.split_once(',').expect("count");
        let (present, outcome) = rest.split_once("],").expect("present");
        let present: Vec<u64> = present
            .trim_start_matches('[')
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("index"))
            .collect();
        let names: Vec<String> = present.iter().rev().map(|i| format!("wrap.{i}.trace")).collect();
        let ours = wrap_order(&names)
            .map(|order| order.into_iter().map(|i| names[i].clone()).collect::<Vec<_>>());
        if let Some(order) = outcome.strip_prefix("{ok,") {
            let dbg: Vec<String> = order
                .trim_end_matches('}')
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_matches('"').to_owned())
                .collect();
            assert_eq!(ours.as_ref().ok(), Some(&dbg), "{text}");
            accepted.push(present);
        } else if let Ok(order) = ours
            && present.len() > 1
        {
            // dbg refused it only for its Count: another Count reads it so,
            // one of the cases or (0..k, in order) any Count above k.
            let listed = format!(
                ",[{}],{{ok,",
                present.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
            );
            let unwrapped = present.iter().enumerate().all(|(i, &p)| p == i as u64);
            assert!(
                unwrapped || cases.iter().any(|c| c.to_string().contains(&listed)),
                "msc reads {text} as {order:?}"
            );
        }
    }
    assert!(accepted.len() > 10, "{accepted:?}");
}

#[test]
fn names_that_are_not_of_the_set_stay_out_of_it() {
    let names = [
        "wrap.0.trace",
        "wrap..trace",
        "wrap.x.trace",
        "wrap.1.trace.bak",
        "wrap.1.trace",
        "wrap.-2.trace",
        "other.2.trace",
    ];
    let order: Vec<&str> =
        wrap_order(&names).expect("sets").into_iter().map(|i| names[i]).collect();
    let expected = [
        "wrap.0.trace",
        "wrap.1.trace",
        "wrap..trace",
        "wrap.x.trace",
        "wrap.1.trace.bak",
        "wrap.-2.trace",
        "other.2.trace",
    ];
    assert_eq!(order, expected, "the set where its first file is; each other name in place");
    let leading_zero = ["wrap.2.trace", "wrap.01.trace", "wrap.0.trace"];
    let order: Vec<&str> =
        wrap_order(&leading_zero).expect("a set").into_iter().map(|i| leading_zero[i]).collect();
    assert_eq!(order, ["wrap.0.trace", "wrap.01.trace", "wrap.2.trace"]);
    let twice = ["wrap.0.trace", "wrap.1.trace", "wrap.01.trace"];
    let err = wrap_order(&twice).expect_err("index 1 twice");
    assert_eq!(err.indexes, [0, 1, 1]);
    assert!(err.to_string().contains("wrap.N.trace"), "{err}");
}

#[test]
fn a_truncated_file_stops_after_the_messages_dbg_delivers() {
    let spec = Spec::compile("[{'_', [], ['$_']}]", Kind::Table).expect("spec");
    let (got, stopped) = run(&spec, &["truncated.trace"]);
    assert_eq!(got, terms("truncated.messages"));
    let stopped = stopped.expect("an error");
    assert!(matches!(stopped.kind, StreamErrorKind::Truncated), "{stopped}");
    assert_eq!(stopped.entry, got.len() as u64 + 1);
}

#[test]
fn a_drop_entry_reads_as_dbg_delivers_it() {
    let spec = Spec::compile("[{'_', [], ['$_']}]", Kind::Table).expect("spec");
    let (got, stopped) = run(&spec, &["drop.trace"]);
    assert!(stopped.is_none(), "{stopped:?}");
    let expected = terms("drop.messages");
    assert!(expected.contains(&parse_term("{drop, 42}").expect("term")));
    assert_eq!(got, expected);
}
