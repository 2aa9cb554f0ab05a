//! Engine speed and compile time on the shared workloads.
//!
//! Each workload (see [`msc_benches::workloads`]) is a spec and a stream of
//! inputs, loaded as `msc bench` loads them.
//!
//! * `run/WORKLOAD/ENGINE`: one pass of the compiled spec over every input,
//!   with one reused [`Scratch`] and [`TestHost`]; throughput is in events
//!   (inputs), so criterion's time per element is the time per event. Every
//!   engine in [`ENGINES`] runs every workload.
//! * `compile/WORKLOAD`: [`CompiledSpec::compile`] of the spec's text
//!   (parse, check, lower to the IR).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use matchspec::conformance::{Interpreter, Runner};
use matchspec::{CompiledSpec, Config, Scratch, TestHost};
use msc_benches::{WORKLOADS_ENV, Workload, workload_dir, workloads};

/// An engine to time: its name (the benchmark parameter) and how to make a
/// runner for it.
struct Engine {
    name: &'static str,
    runner: fn() -> Box<dyn Runner>,
}

/// Every engine the `run` groups time. A new engine is one more entry.
const ENGINES: &[Engine] = &[Engine { name: "interp", runner: || Box::new(Interpreter) }];

/// The workloads, or `None` (after saying why) if they are not there.
fn load() -> Option<Vec<Workload>> {
    match workloads(&workload_dir()) {
        Ok(all) if !all.is_empty() => Some(all),
        Ok(_) => {
            eprintln!(
                "skipping the engine benchmarks: no workloads in {} (set {WORKLOADS_ENV})",
                workload_dir().display()
            );
            None
        }
        Err(err) => {
            eprintln!("skipping the engine benchmarks: {err} (set {WORKLOADS_ENV})");
            None
        }
    }
}

/// Compiles the workload's spec; a spec that does not compile is a broken
/// workload, so this panics naming it.
fn compile(workload: &Workload) -> CompiledSpec {
    CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
        .unwrap_or_else(|err| panic!("{}: {err}", workload.name))
}

/// The `run/WORKLOAD` groups and the `compile` group.
fn engines(c: &mut Criterion) {
    let Some(workloads) = load() else { return };

    for workload in &workloads {
        let spec = compile(workload);
        let mut group = c.benchmark_group(format!("run/{}", workload.name));
        // A pass takes milliseconds: flat sampling keeps the time bounded.
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(workload.events()));
        for engine in ENGINES {
            let mut runner = (engine.runner)();
            let mut scratch = Scratch::new();
            let mut host = TestHost::default();
            group.bench_function(BenchmarkId::from_parameter(engine.name), |b| {
                b.iter(|| {
                    for &input in &workload.inputs {
                        let outcome =
                            runner.run(&spec, workload.heap.view(input), &mut scratch, &mut host);
                        black_box(&outcome);
                    }
                });
            });
        }
        group.finish();
    }

    let mut group = c.benchmark_group("compile");
    for workload in &workloads {
        group.bench_function(BenchmarkId::from_parameter(&workload.name), |b| {
            b.iter(|| compile(black_box(workload)));
        });
    }
    group.finish();
}

// `criterion_group!` would make an undocumented `pub fn`; this is what it
// and `criterion_main!` expand to. Command-line options override the
// defaults here.
fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    engines(&mut c);
    c.final_summary();
}
