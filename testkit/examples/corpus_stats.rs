//! What a fuzz corpus reaches: input lengths, and for `differential` the
//! sizes of the specs and input lists its inputs make.
//!
//! `cargo run -p msc-testkit --example corpus_stats -- TARGET DIR`

use std::process::ExitCode;

use arbitrary::Unstructured;
use matchspec::term::{Kind, TermRef};
use msc_testkit::oracles::differential_case;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, dir] = args.as_slice() else {
        eprintln!("usage: corpus_stats TARGET DIR");
        return ExitCode::FAILURE;
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            eprintln!("read {dir}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut lengths = Vec::new();
    let mut clauses = Vec::new();
    let mut nodes = Vec::new();
    let mut inputs = Vec::new();
    for entry in entries.flatten() {
        let Ok(data) = std::fs::read(entry.path()) else { continue };
        lengths.push(data.len());
        if target == "differential"
            && let Ok(case) = differential_case(&mut Unstructured::new(&data))
        {
            clauses.push(case.spec.as_ref().list_len().unwrap_or(0));
            nodes.push(node_count(case.spec.as_ref()));
            inputs.push(case.inputs.len());
        }
    }
    println!("{target}: {} inputs; length {}", lengths.len(), summary(&mut lengths));
    if !nodes.is_empty() {
        println!("  spec clauses {}", summary(&mut clauses));
        println!("  spec terms {}", summary(&mut nodes));
        println!("  inputs per spec {}", summary(&mut inputs));
    }
    ExitCode::SUCCESS
}

/// Median, 90th percentile and largest.
fn summary(values: &mut [usize]) -> String {
    if values.is_empty() {
        return "-".into();
    }
    values.sort_unstable();
    let at = |q: usize| values[(values.len() - 1) * q / 100];
    format!("median {}, p90 {}, max {}", at(50), at(90), at(100))
}

/// The terms in `t`, each element, cons cell, key and value counted.
fn node_count(t: TermRef<'_>) -> usize {
    let mut stack = vec![t];
    let mut count = 0;
    while let Some(t) = stack.pop() {
        count += 1;
        match t.kind() {
            Kind::Tuple(tuple) => stack.extend(tuple.iter()),
            Kind::Cons(cell) => {
                stack.push(cell.head());
                stack.push(cell.tail());
            }
            Kind::Map(map) => {
                for (k, v) in map.in_order() {
                    stack.push(k);
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    count
}
