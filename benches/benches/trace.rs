//! The trace core's cost per call, with the engine as a parameter.
//!
//! `trace/CASE/ENGINE` times one call and its return, as the host reports
//! them to the core ([`TraceWorkload`]): CASE is `untraced` (no
//! breakpoint), `traced_rejected` (a breakpoint whose match spec rejects
//! the call) or `traced_emitted` (the call message is built and delivered
//! to a tracer process's channel, which is drained as it goes). The core
//! keeps a copy of the process's stack there; in `trace/host_stack/CASE/ENGINE`
//! the host keeps it (a [`HostStack`](matchspec_runtime::HostStack)) and
//! the core hears of traced calls only.
//! `trace/is_traced` times the check alone that a host makes before
//! calling into the core: one atomic load and a branch.
//! `trace/host_stack/frames_alone` times what a host that keeps its stack
//! does on a call and return without any tracing: pushing and popping a
//! frame like [`HostStack`](matchspec_runtime::HostStack)'s. What
//! `trace/host_stack/untraced` costs on top of it is the core's share.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use matchspec::term::Atom;
use matchspec_runtime::{CoreConfig, Function, Mfa, StackKeeper, TraceCore};
use msc::Engine;
use msc_world::workload::{TraceCase, TraceWorkload};

/// Calls per timed batch.
const CALLS: u64 = 1_000;

fn trace(c: &mut Criterion) {
    let mut group = c.benchmark_group("trace");
    group.throughput(Throughput::Elements(CALLS));
    for keeper in [StackKeeper::Core, StackKeeper::Host] {
        for case in TraceCase::ALL {
            for engine in [Engine::Interp, Engine::Jit] {
                let mut workload = TraceWorkload::with_stack(case, engine, keeper);
                let name = match keeper {
                    StackKeeper::Core => case.name().to_owned(),
                    StackKeeper::Host => format!("host_stack/{}", case.name()),
                };
                group.bench_function(BenchmarkId::new(name, engine.name()), |b| {
                    b.iter(|| black_box(workload.run(CALLS)));
                });
            }
        }
    }
    let core = TraceCore::new(CoreConfig::default());
    let entry = core
        .declare_module(Atom::new("m"), &[Function::exported("f", 0)])
        .expect("a fresh core accepts a module")
        .remove(0);
    group.bench_function("is_traced", |b| {
        b.iter(|| {
            let mut traced = 0u32;
            for _ in 0..CALLS {
                traced += u32::from(black_box(&entry).is_traced());
            }
            traced
        });
    });
    group.bench_function("host_stack/frames_alone", |b| {
        // A `HostStack` frame: the function, `catches`, the watch.
        let mfa = black_box(entry.mfa());
        let mut frames: Vec<(Mfa, bool, bool)> = vec![(mfa, false, false)];
        b.iter(|| {
            for _ in 0..CALLS {
                frames.push((black_box(mfa), false, false));
                let top = frames.pop().expect("pushed");
                if let Some(caller) = frames.last_mut() {
                    caller.1 = false;
                }
                black_box(top.2);
            }
            frames.len()
        });
    });
    group.finish();
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    trace(&mut c);
    c.final_summary();
}
