//! `msc bench`: time a spec over a stream of inputs.

use std::path::Path;
use std::time::Instant;

use matchspec::spec::Kind;
use matchspec::term::Heap;
use matchspec::{CompiledSpec, Config, Outcome, Scratch, TestHost};

use super::EngineArg;
use super::run::load_inputs;
use crate::CliError;
use crate::input::{kind, spec_file};

/// Arguments of `msc bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: a match spec, or `{Kind, Spec}`.
    #[arg(long, value_name = "FILE")]
    spec: String,
    /// The inputs (as for `msc run`).
    #[arg(long, value_name = "FILE")]
    input: String,
    /// The event kind (overrides the spec file's).
    #[arg(long)]
    kind: Option<String>,
    /// The engine to time.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineArg,
    /// How many timed passes over the inputs (after one warm-up pass).
    #[arg(long, default_value_t = 20)]
    rounds: u32,
}

/// Prints `{"workload":..,"engine":..,"events":..,"matched":..,"ns_per_event":..,"compile_us":..}`.
pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let (text, file_kind) = spec_file(&args.spec)?;
    let kind = match &args.kind {
        Some(name) => kind(name)?,
        None => file_kind.unwrap_or(Kind::Table),
    };
    let _ = args.engine.runner()?;
    let mut heap = Heap::new();
    let inputs = load_inputs(&args.input, &mut heap)?;

    let compile_start = Instant::now();
    let spec = CompiledSpec::compile(&text, kind, &Config::default())?;
    let compile_us = compile_start.elapsed().as_secs_f64() * 1e6;

    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    let mut matched = 0u64;
    for &input in &inputs {
        if let Ok(Outcome::Match(_)) = spec.run_with_host(heap.view(input), &mut scratch, &mut host)
        {
            matched += 1;
        }
    }
    let rounds = args.rounds.max(1);
    let start = Instant::now();
    for _ in 0..rounds {
        for &input in &inputs {
            let outcome = spec.run_with_host(heap.view(input), &mut scratch, &mut host);
            std::hint::black_box(&outcome);
        }
    }
    let elapsed = start.elapsed();
    let events = inputs.len() as u64;
    let ns_per_event = elapsed.as_nanos() as f64 / (events.max(1) * u64::from(rounds)) as f64;
    let workload = Path::new(&args.spec)
        .file_stem()
        .map_or_else(|| args.spec.clone(), |s| s.to_string_lossy().into_owned());
    let line = serde_json::json!({
        "workload": workload,
        "engine": args.engine.name(),
        "events": events,
        "matched": matched,
        "ns_per_event": (ns_per_event * 100.0).round() / 100.0,
        "compile_us": compile_us.round() as u64,
    });
    println!("{line}");
    Ok(())
}
