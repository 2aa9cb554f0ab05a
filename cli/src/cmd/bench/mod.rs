//! `msc bench`: time a spec over a stream of inputs.

mod stream;

use matchspec::Config;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use matchspec::run::Batch;
use matchspec::term::Heap;
use matchspec::{Outcome, Run, Scratch, TestHost};
use matchspec_runtime::StackKeeper;
use msc_world::workload::{TraceCase, TraceWorkload};

use super::run::{engine_spec, load_inputs};
use super::{EngineArg, KindArg};
use crate::CliError;
use crate::input::spec_file;

/// Arguments of `msc bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: a match spec, `{Kind, Spec}`, or a fun (as `fun2ms` reads it).
    #[arg(long, value_name = "FILE", required_unless_present = "trace")]
    spec: Option<String>,
    /// The inputs (as for `msc run`).
    #[arg(long, value_name = "FILE", required_unless_present = "trace")]
    input: Option<String>,
    /// Time the whole filter instead, as `msc run` does it: reading the
    /// input file (`--format`, from the page cache after the warm-up),
    /// deciding each entry and writing the results (to nowhere); also the
    /// limits, reading the file alone and scanning it for a byte. One JSON
    /// line each, with MB/s.
    #[arg(long)]
    stream: bool,
    /// Threads for `--stream` (as `msc run --jobs`; default 1).
    #[arg(long, short, value_name = "N", requires = "stream", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// How the `--stream` input's entries are written.
    #[arg(long, value_enum, default_value_t, requires = "stream")]
    format: super::run::FormatArg,
    /// How `--stream` writes the results (as `msc run --output`).
    #[arg(long, value_enum, default_value_t, requires = "stream")]
    output: super::run::OutputArg,
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
    /// How many timed passes over the inputs, after warming up (passes
    /// for at least 200 ms, at least one); the median and the fastest are
    /// reported.
    #[arg(long, default_value_t = 20)]
    rounds: u32,
}

/// How long passes run, untimed, before the timed ones: caches, branch
/// predictors and the CPU's clock settle.
const WARM_UP: Duration = Duration::from_millis(200);

/// The times of the timed passes of a measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    /// The median pass (the lower of the two middle ones for an even
    /// count): what a typical pass costs, untouched by outliers.
    median: Duration,
    /// The fastest pass: what the code costs when nothing disturbs it.
    min: Duration,
}

impl Timing {
    /// The median and minimum of `passes` (at least one).
    fn of(mut passes: Vec<Duration>) -> Timing {
        passes.sort_unstable();
        Timing { median: passes[(passes.len() - 1) / 2], min: passes[0] }
    }

    /// Runs `pass` for [`WARM_UP`], then `rounds` more times (at least
    /// once), timing each.
    fn measure(rounds: u32, mut pass: impl FnMut()) -> Timing {
        let warming = Instant::now();
        pass();
        while warming.elapsed() < WARM_UP {
            pass();
        }
        let passes = (0..rounds.max(1))
            .map(|_| {
                let start = Instant::now();
                pass();
                start.elapsed()
            })
            .collect();
        Timing::of(passes)
    }

    /// Nanoseconds per item of a pass over `items`, median and minimum,
    /// rounded to hundredths.
    fn ns_per(self, items: u64) -> (f64, f64) {
        let per = |d: Duration| {
            let ns = d.as_nanos() as f64 / items.max(1) as f64;
            (ns * 100.0).round() / 100.0
        };
        (per(self.median), per(self.min))
    }
}

/// Prints `{"workload":..,"engine":..,"events":..,"matched":..,"ns_per_event":..,
/// "ns_per_event_min":..,"rounds":..,"compile_us":..}`, keys in that order
/// (`ns_per_event` is the median pass's).
pub(crate) fn run(args: Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    let (Some(spec_path), Some(input_path)) = (&args.spec, &args.input) else {
        return trace(&args, out);
    };
    if args.stream {
        return stream::run(&args, spec_path, input_path, config, out);
    }
    if spec_path == "-" && input_path == "-" {
        return Err(CliError::StdinTwice);
    }
    let spec = spec_file(spec_path)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let mut heap = Heap::new();
    let inputs = load_inputs(input_path, &mut heap)?;

    let compile_start = Instant::now();
    let spec = spec.compile(kind, config)?;
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
    let timing = Timing::measure(args.rounds, || {
        spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, outcome| {
            std::hint::black_box(&outcome);
        });
    });
    let events = inputs.len() as u64;
    let (ns_per_event, ns_per_event_min) = timing.ns_per(events);
    let workload = Path::new(spec_path)
        .file_stem()
        .map_or_else(|| spec_path.clone(), |s| s.to_string_lossy().into_owned());
    let line = json_line(&[
        ("workload", workload.into()),
        ("engine", args.engine.name().into()),
        ("events", events.into()),
        ("matched", matched.into()),
        ("ns_per_event", ns_per_event.into()),
        ("ns_per_event_min", ns_per_event_min.into()),
        ("rounds", args.rounds.max(1).into()),
        ("compile_us", (compile_us.round() as u64).into()),
    ]);
    outln!(out, "{line}")
}

/// `msc bench --trace`: prints
/// `{"trace_case":..,"stack":..,"engine":..,"calls":..,"messages":..,"ns_per_call":..,
/// "ns_per_call_min":..}` for each case and stack keeper (`core`, `host`);
/// `calls` and `messages` are one pass's.
fn trace(args: &Args, out: &mut dyn Write) -> Result<(), CliError> {
    const CALLS_PER_ROUND: u64 = 100_000;
    let keepers = [(StackKeeper::Core, "core"), (StackKeeper::Host, "host")];
    for ((keeper, stack), case) in keepers.into_iter().flat_map(|k| TraceCase::ALL.map(|c| (k, c)))
    {
        let mut workload = TraceWorkload::with_stack(case, args.engine.engine(), keeper);
        let mut messages = 0;
        let timing = Timing::measure(args.rounds, || messages = workload.run(CALLS_PER_ROUND));
        let (ns_per_call, ns_per_call_min) = timing.ns_per(CALLS_PER_ROUND);
        let line = json_line(&[
            ("trace_case", case.name().into()),
            ("stack", stack.into()),
            ("engine", args.engine.name().into()),
            ("calls", CALLS_PER_ROUND.into()),
            ("messages", messages.into()),
            ("ns_per_call", ns_per_call.into()),
            ("ns_per_call_min", ns_per_call_min.into()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_is_the_median_and_the_fastest_pass() {
        let ms = Duration::from_millis;
        let odd = Timing::of(vec![ms(9), ms(1), ms(3), ms(40), ms(2)]);
        assert_eq!(odd, Timing { median: ms(3), min: ms(1) });
        let even = Timing::of(vec![ms(8), ms(4), ms(6), ms(5)]);
        assert_eq!(even, Timing { median: ms(5), min: ms(4) });
        assert_eq!(Timing::of(vec![ms(7)]), Timing { median: ms(7), min: ms(7) });
        assert_eq!(odd.ns_per(1_000_000), (3.0, 1.0));
    }
}
