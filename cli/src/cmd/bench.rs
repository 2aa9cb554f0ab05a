//! `msc bench`: time a spec over a stream of inputs.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use matchspec::run::Batch;
use matchspec::term::Heap;
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use matchspec_runtime::StackKeeper;
use msc_world::workload::{TraceCase, TraceWorkload};

use super::run::{engine_spec, load_inputs};
use super::{EngineArg, KindArg};
use crate::CliError;
use crate::input::spec_file;

/// Arguments of `msc bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: a match spec, or `{Kind, Spec}`.
    #[arg(long, value_name = "FILE", required_unless_present = "trace")]
    spec: Option<String>,
    /// The inputs (as for `msc run`).
    #[arg(long, value_name = "FILE", required_unless_present = "trace")]
    input: Option<String>,
    /// Time the trace core instead: the cost of one call when the function
    /// is untraced, traced with a spec that rejects the call, and traced
    /// with a message emitted, with the stack kept by the core and by the
    /// host (one JSON line each).
    #[arg(long, conflicts_with_all = ["spec", "input", "kind"])]
    trace: bool,
    /// The event kind (overrides the one the spec file names; else table).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// The engine to time.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineArg,
    /// How many timed passes over the inputs (after one warm-up pass).
    #[arg(long, default_value_t = 20)]
    rounds: u32,
}

/// Prints `{"workload":..,"engine":..,"events":..,"matched":..,"ns_per_event":..,"compile_us":..}`,
/// keys in that order.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let (Some(spec_path), Some(input_path)) = (&args.spec, &args.input) else {
        return trace(&args, out);
    };
    if spec_path == "-" && input_path == "-" {
        return Err(CliError::StdinTwice);
    }
    let spec = spec_file(spec_path)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let mut heap = Heap::new();
    let inputs = load_inputs(input_path, &mut heap)?;

    let compile_start = Instant::now();
    let spec = CompiledSpec::compile(&spec.text, kind, &Config::default())?;
    // With `--engine jit` this includes compiling to machine code.
    let spec = engine_spec(spec, args.engine);
    let compile_us = compile_start.elapsed().as_secs_f64() * 1e6;

    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    let mut matched = 0u64;
    spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, outcome| {
        if let Ok(Outcome::Match(_)) = outcome {
            matched += 1;
        }
    });
    let rounds = args.rounds.max(1);
    let start = Instant::now();
    for _ in 0..rounds {
        spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, outcome| {
            std::hint::black_box(&outcome);
        });
    }
    let elapsed = start.elapsed();
    let events = inputs.len() as u64;
    let ns_per_event = elapsed.as_nanos() as f64 / (events.max(1) * u64::from(rounds)) as f64;
    let workload = Path::new(spec_path)
        .file_stem()
        .map_or_else(|| spec_path.clone(), |s| s.to_string_lossy().into_owned());
    let line = json_line(&[
        ("workload", workload.into()),
        ("engine", args.engine.name().into()),
        ("events", events.into()),
        ("matched", matched.into()),
        ("ns_per_event", ((ns_per_event * 100.0).round() / 100.0).into()),
        ("compile_us", (compile_us.round() as u64).into()),
    ]);
    outln!(out, "{line}")
}

/// `msc bench --trace`: prints
/// `{"trace_case":..,"stack":..,"engine":..,"calls":..,"messages":..,"ns_per_call":..}`
/// for each case and stack keeper (`core`, `host`).
fn trace(args: &Args, out: &mut dyn Write) -> Result<(), CliError> {
    const CALLS_PER_ROUND: u64 = 100_000;
    let keepers = [(StackKeeper::Core, "core"), (StackKeeper::Host, "host")];
    for ((keeper, stack), case) in keepers.into_iter().flat_map(|k| TraceCase::ALL.map(|c| (k, c)))
    {
        let mut workload = TraceWorkload::with_stack(case, args.engine.engine(), keeper);
        workload.run(CALLS_PER_ROUND);
        let rounds = u64::from(args.rounds.max(1));
        let start = Instant::now();
        let mut messages = 0;
        for _ in 0..rounds {
            messages += workload.run(CALLS_PER_ROUND);
        }
        let calls = CALLS_PER_ROUND * rounds;
        let ns_per_call = start.elapsed().as_nanos() as f64 / calls as f64;
        let line = json_line(&[
            ("trace_case", case.name().into()),
            ("stack", stack.into()),
            ("engine", args.engine.name().into()),
            ("calls", calls.into()),
            ("messages", messages.into()),
            ("ns_per_call", ((ns_per_call * 100.0).round() / 100.0).into()),
        ]);
        outln!(out, "{line}")?;
    }
    Ok(())
}

/// A JSON object on one line with its keys in the order given. (`json!`
/// would sort them: without serde_json's `preserve_order` feature, which
/// would reach every crate of the workspace that uses serde_json, its
/// objects are B-tree maps.)
fn json_line(fields: &[(&str, serde_json::Value)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("{}:{value}", serde_json::Value::from(*key)))
        .collect();
    format!("{{{}}}", fields.join(","))
}
