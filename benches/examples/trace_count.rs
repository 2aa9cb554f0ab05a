//! A fixed number of traced calls through the trace core, for instruction
//! counts under callgrind (`valgrind --tool=callgrind`).
//!
//! ```text
//! trace_count CASE ENGINE CALLS         # CASE [host_]untraced|rejected|emitted, ENGINE interp|jit
//! trace_count CASE ENGINE CALLS time    # the best of 20 timed runs, in ns per call
//! ```
//!
//! Instructions per call: the difference between two counts with
//! different CALLS, divided by the extra calls; the setup cancels out.

use std::hint::black_box;

use matchspec_runtime::StackKeeper;
use msc::Engine;
use msc_world::workload::{TraceCase, TraceWorkload};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (case, engine, calls, timed) = match &args[..] {
        [case, engine, calls] => (case, engine, calls, false),
        [case, engine, calls, time] if time == "time" => (case, engine, calls, true),
        _ => panic!("usage: trace_count [host_]untraced|rejected|emitted interp|jit CALLS [time]"),
    };
    // `host_`: the host keeps the stack.
    let (keeper, case) = match case.strip_prefix("host_") {
        Some(case) => (StackKeeper::Host, case),
        None => (StackKeeper::Core, case.as_str()),
    };
    let case = match case {
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
    let mut workload = TraceWorkload::with_stack(case, engine, keeper);
    let calls: u64 = calls.parse().expect("a number of calls");
    if timed {
        let best = (0..20)
            .map(|_| {
                let start = std::time::Instant::now();
                black_box(workload.run(black_box(calls)));
                start.elapsed().as_nanos() as f64 / calls as f64
            })
            .fold(f64::INFINITY, f64::min);
        println!("{best:.1} ns per call");
        return;
    }
    let delivered = workload.run(black_box(calls));
    println!("{delivered} delivered");
}
