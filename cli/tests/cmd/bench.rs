//! `msc bench`: one JSON line, keys in a fixed order.

use crate::{msc, testdata};

#[test]
fn prints_one_json_line_with_keys_in_order() {
    let run = msc(&[
        "bench",
        "--spec",
        &testdata("cli/orders.ms"),
        "--input",
        &testdata("cli/orders.terms"),
        "--rounds",
        "2",
    ])
    .ok();
    let out = run.out();
    assert_eq!(out.lines().count(), 1, "{out}");
    let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let object = value.as_object().expect("an object");
    let keys = [
        "workload",
        "engine",
        "events",
        "matched",
        "ns_per_event",
        "ns_per_event_min",
        "rounds",
        "compile_us",
    ];
    assert_eq!(object.len(), keys.len(), "{out}");
    // The parsed map sorts its keys; the order is the text's.
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| out.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("no {k} in {out}")))
        .collect();
    assert!(positions.is_sorted(), "keys out of order: {out}");
    assert!(out.starts_with("{\"workload\":\"orders\",\"engine\":\"interp\",\"events\":4,\"matched\":3,\"ns_per_event\":"), "{out}");
    assert_eq!(object["workload"], "orders");
    assert_eq!(object["engine"], "interp");
    assert_eq!(object["events"], 4);
    assert_eq!(object["matched"], 3);
    let median = object["ns_per_event"].as_f64().expect("a number");
    let fastest = object["ns_per_event_min"].as_f64().expect("a number");
    assert!(0.0 < fastest && fastest <= median, "{out}");
    assert_eq!(object["rounds"], 2);
    assert!(object["compile_us"].is_u64(), "{out}");
}

#[test]
fn trace_prints_each_case_for_both_stack_keepers() {
    let run = msc(&["bench", "--trace", "--rounds", "1"]).ok();
    let out = run.out();
    let lines: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let cases: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["trace_case"].as_str().expect("case"), l["stack"].as_str().expect("stack")))
        .collect();
    let mut want = Vec::new();
    for stack in ["core", "host"] {
        for case in ["untraced", "traced_rejected", "traced_emitted"] {
            want.push((case, stack));
        }
    }
    assert_eq!(cases, want, "{out}");
    for line in &lines {
        let emitted = line["trace_case"] == "traced_emitted";
        let messages = if emitted { line["calls"].clone() } else { 0.into() };
        assert_eq!(line["messages"], messages, "{line}");
        let (median, fastest) = (&line["ns_per_call"], &line["ns_per_call_min"]);
        assert!(fastest.as_f64() <= median.as_f64() && fastest.as_f64() > Some(0.0), "{line}");
    }
}

#[test]
fn stream_prints_msc_and_its_limits() {
    let (spec, input) = (testdata("cli/orders.ms"), testdata("cli/orders.terms"));
    let args = ["bench", "--stream", "--spec", &spec, "--input", &input, "--rounds", "1"];
    let run = msc(&[&args[..], &["--output", "etf"]].concat()).ok();
    let out = run.out();
    let lines: Vec<serde_json::Value> =
        out.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let streams: Vec<&str> = lines.iter().map(|l| l["stream"].as_str().unwrap_or("")).collect();
    assert_eq!(streams, ["msc", "read", "scan"], "{out}");
    assert_eq!(lines[0]["output"], "etf", "{out}");
    assert_eq!((lines[0]["events"].as_u64(), lines[0]["matched"].as_u64()), (Some(4), Some(3)));
    let run = msc(&args).ok();
    assert!(run.out().starts_with("{\"stream\":\"msc\",\"input\":\"orders.terms\",\"spec\":\"orders.ms\",\"engine\":\"interp\",\"output\":\"text\","), "{}", run.out());
}
