//! A fixed amount of engine work, for instruction counts under callgrind
//! (`valgrind --tool=callgrind`), where timings are too noisy.
//!
//! ```text
//! count batch WORKLOAD ENGINE ROUNDS   # ROUNDS passes of run_matching over the workload
//!                                      # (ENGINE native: the workload's native filter)
//! count time WORKLOAD ENGINE PASSES    # PASSES timed passes of run_matching: the best and
//!                                      # the median, in ns per event
//! count single WORKLOAD ENGINE ROUNDS  # ROUNDS passes of Spec::run, one input at a time
//! count trace ENGINE RUNS [ARGS]       # RUNS single runs of a call-trace spec, `[{['$1'],
//!                                      # [{'>','$1',10}],[true]}]`, on ARGS (default `[5]`)
//! count compile WORKLOAD TIMES         # TIMES JIT compiles of the workload's spec
//! ```
//!
//! Instructions per event: the difference between two counts with
//! different ROUNDS (or RUNS), divided by the extra events; the setup
//! (loading, compiling) cancels out.

use std::hint::black_box;

use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::Term;
use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost};
use msc::{Engine, Spec};
use msc_benches::native::{Native, NativeVisitor, with_native};
use msc_benches::{Workload, workload_dir};

/// Runs a workload's native filter `rounds` times over its inputs.
struct RunNative<'w> {
    workload: &'w Workload,
    rounds: usize,
}

impl NativeVisitor for RunNative<'_> {
    type Output = usize;

    fn visit<N: Native>(self, native: N) -> usize {
        let mut out = matchspec::term::Heap::new();
        let mut matched = 0;
        for _ in 0..self.rounds {
            for &input in &self.workload.inputs {
                let result = native.run(&self.workload.heap, input, &mut out);
                matched += usize::from(result.is_some());
                black_box(&result);
            }
        }
        matched
    }
}

fn engine(name: &str) -> Engine {
    match name {
        "interp" => Engine::Interp,
        "jit" => Engine::Jit,
        "auto" => Engine::Auto,
        _ => panic!("unknown engine {name}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["batch", name, "native", rounds] => {
            let workload = Workload::load(&workload_dir(), name).expect("the workload loads");
            let rounds = rounds.parse().expect("a number of rounds");
            let matched = with_native(name, RunNative { workload: &workload, rounds });
            println!("{matched:?} matched");
        }
        [mode @ ("batch" | "single"), name, e, rounds] => {
            let workload = Workload::load(&workload_dir(), name).expect("the workload loads");
            let spec = CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
                .expect("the spec compiles");
            let spec = Spec::new(spec, engine(e));
            let rounds: usize = rounds.parse().expect("a number of rounds");
            let mut matched = 0usize;
            for _ in 0..rounds {
                if mode == "batch" {
                    matched += pass(&spec, &workload, &mut scratch, &mut host);
                } else {
                    for &input in &workload.inputs {
                        let outcome = spec.run(workload.heap.view(input), &mut scratch, &mut host);
                        matched += usize::from(matches!(outcome, Ok(o) if o.result().is_some()));
                    }
                }
            }
            println!("{matched} matched");
        }
        ["time", name, e, passes] => {
            let workload = Workload::load(&workload_dir(), name).expect("the workload loads");
            let spec = CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
                .expect("the spec compiles");
            let spec = Spec::new(spec, engine(e));
            let passes: usize = passes.parse().expect("a number of passes");
            // The best pass is the one least disturbed by anything else
            // running; the median says how much that was.
            let mut times: Vec<f64> = (0..passes.max(1))
                .map(|_| {
                    let start = std::time::Instant::now();
                    black_box(pass(&spec, &workload, &mut scratch, &mut host));
                    start.elapsed().as_nanos() as f64 / workload.inputs.len() as f64
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "{name} {e}: best {:.3} ns, median {:.3} ns",
                times[0],
                times[times.len() / 2]
            );
        }
        ["compile", name, times] => {
            let workload = Workload::load(&workload_dir(), name).expect("the workload loads");
            let spec = CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
                .expect("the spec compiles");
            for _ in 0..times.parse().expect("a number of compiles") {
                black_box(matchspec_jit::JitProgram::compile(&spec).expect("the JIT compiles"));
            }
        }
        ["trace", e, runs, ref input @ ..] => {
            let spec = CompiledSpec::compile(
                "[{['$1'],[{'>','$1',10}],[true]}]",
                Kind::Call,
                &Config::default(),
            )
            .expect("the spec compiles");
            let spec = Spec::new(spec, engine(e));
            let input = Term::parse(input.first().unwrap_or(&"[5]")).expect("the input parses");
            let runs: usize = runs.parse().expect("a number of runs");
            let mut matched = 0usize;
            for _ in 0..runs {
                let outcome = spec.run(black_box(input.as_ref()), &mut scratch, &mut host);
                matched += usize::from(matches!(outcome, Ok(o) if o.result().is_some()));
            }
            println!("{matched} matched");
        }
        _ => panic!("usage: count batch|single WORKLOAD ENGINE ROUNDS | count trace ENGINE RUNS"),
    }
}

/// One pass of `spec` over the workload's inputs with the filter API, as the
/// criterion bench makes it: the number of matches.
fn pass(spec: &Spec, workload: &Workload, scratch: &mut Scratch, host: &mut TestHost) -> usize {
    let mut matched = 0;
    spec.run_matching(Batch::new(&workload.heap, &workload.inputs), scratch, host, |_, outcome| {
        matched += 1;
        black_box(&outcome);
    });
    matched
}
