//! Engine speed and compile time on the shared workloads.
//!
//! Each workload (see [`msc_benches::workloads`]) is a spec and a stream of
//! inputs, loaded as `msc bench` loads them.
//!
//! * `run/WORKLOAD/ENGINE`: one pass over every input with the filter API
//!   ([`Spec::run_matching`], which hands over each match), with one
//!   reused [`Scratch`] and
//!   [`TestHost`]; throughput is in events (inputs), so criterion's time per
//!   element is the time per event. ENGINE is one of [`ENGINES`] (the
//!   [`Spec`] is made before timing, so `jit` has compiled already and
//!   `auto` compiles during warm-up, once it crosses its threshold), or
//!   `native`: the workload's hand-written Rust filter
//!   ([`msc_benches::native`]) over the same inputs, the practical limit.
//! * `compile/WORKLOAD/spec`: [`CompiledSpec::compile`] of the spec's text
//!   (parse, check, lower to the IR).
//! * `compile/WORKLOAD/jit`: [`JitProgram::compile`] of the compiled spec
//!   (translation to Cranelift IR and code generation; freeing the code is
//!   not timed).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use matchspec::run::Batch;
use matchspec::term::Heap;
use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost};
use matchspec_jit::JitProgram;
use msc::{Engine, Spec};
use msc_benches::native::{Native, NativeVisitor, with_native};
use msc_benches::{WORKLOADS_ENV, Workload, workload_dir, workloads};

/// Every engine the `run` groups time through [`Spec`].
const ENGINES: [Engine; 3] = [Engine::Interp, Engine::Jit, Engine::Auto];

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

/// Times a workload's native filter in its `run` group.
struct BenchNative<'a, 'g> {
    group: &'a mut BenchmarkGroup<'g, WallTime>,
    workload: &'a Workload,
}

impl NativeVisitor for BenchNative<'_, '_> {
    type Output = ();

    fn visit<N: Native>(self, native: N) {
        let Workload { heap, inputs, .. } = self.workload;
        let mut out = Heap::new();
        self.group.bench_function(BenchmarkId::from_parameter("native"), |b| {
            b.iter(|| {
                for &input in inputs {
                    let result = native.run(heap, input, &mut out);
                    black_box(&result);
                }
            });
        });
    }
}

/// The `run/WORKLOAD` groups and the `compile/WORKLOAD` groups.
fn engines(c: &mut Criterion) {
    let Some(workloads) = load() else { return };

    for workload in &workloads {
        let spec = compile(workload);
        let mut group = c.benchmark_group(format!("run/{}", workload.name));
        // A pass takes milliseconds: flat sampling keeps the time bounded.
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(workload.events()));
        for engine in ENGINES {
            let engine_spec = Spec::new(spec.clone(), engine);
            if let Some(err) = engine_spec.jit_error() {
                eprintln!(
                    "{}: the JIT failed ({err}); {} interprets",
                    workload.name,
                    engine.name()
                );
            }
            let mut scratch = Scratch::new();
            let mut host = TestHost::default();
            group.bench_function(BenchmarkId::from_parameter(engine.name()), |b| {
                b.iter(|| {
                    engine_spec.run_matching(
                        Batch::new(&workload.heap, &workload.inputs),
                        &mut scratch,
                        &mut host,
                        |_, outcome| {
                            black_box(&outcome);
                        },
                    );
                });
            });
        }
        with_native(&workload.name, BenchNative { group: &mut group, workload });
        group.finish();
    }

    for workload in &workloads {
        let mut group = c.benchmark_group(format!("compile/{}", workload.name));
        group.bench_function(BenchmarkId::from_parameter("spec"), |b| {
            b.iter(|| compile(black_box(workload)));
        });
        let spec = compile(workload);
        if JitProgram::compile(&spec).is_ok() {
            // Dropping the program (unmapping its code) is outside the timing.
            group.bench_function(BenchmarkId::from_parameter("jit"), |b| {
                b.iter_with_large_drop(|| JitProgram::compile(black_box(&spec)));
            });
        }
        group.finish();
    }
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
