//! A fixed number of traced calls through the trace core, for instruction
//! counts under callgrind (`valgrind --tool=callgrind`).
//!
//! ```text
//! trace_count CASE ENGINE CALLS   # CASE untraced|rejected|emitted, ENGINE interp|jit
//! ```
//!
//! Instructions per call: the difference between two counts with
//! different CALLS, divided by the extra calls; the setup cancels out.

use std::hint::black_box;

use matchspec_jit::Engine;
use matchspec_runtime::workload::{TraceCase, TraceWorkload};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, engine, calls] = &args[..] else {
        panic!("usage: trace_count untraced|rejected|emitted interp|jit CALLS");
    };
    let case = match case.as_str() {
        "untraced" => TraceCase::Untraced,
        "rejected" => TraceCase::Rejected,
        "emitted" => TraceCase::Emitted,
        _ => panic!("unknown case {case}"),
    };
    let engine = match engine.as_str() {
        "interp" => Engine::Interp,
        "jit" => Engine::Jit,
        _ => panic!("unknown engine {engine}"),
    };
    let mut workload = TraceWorkload::new(case, engine);
    let delivered = workload.run(black_box(calls.parse().expect("a number of calls")));
    println!("{delivered} delivered");
}
