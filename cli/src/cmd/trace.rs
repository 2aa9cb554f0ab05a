//! `msc trace SCENARIO`: runs a trace scenario (docs/scenarios.md) and
//! prints each term's reply and the trace messages it caused.

use std::io::Write;

use matchspec::Release;
use msc_world::scenario::{Options, StackKeeper, compare, run as run_scenario};

use super::EngineArg;
use crate::CliError;
use crate::input::read_text;

/// Arguments of `msc trace`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The scenario file (`-` for standard input).
    pub(crate) scenario: String,
    /// The engine that runs the match specs.
    #[arg(long, value_enum, default_value_t = EngineArg::Interp)]
    pub(crate) engine: EngineArg,
    /// Print every timestamp as '$ts', and call_time and call_memory
    /// measures in info replies as '$ts' and '$words', processes sorted
    /// (how golden files from OTP store them).
    #[arg(long)]
    pub(crate) mask_timestamps: bool,
    /// Who keeps the processes' stacks: the trace core (the world reports
    /// every call and return), or the world itself (the core hears of
    /// traced calls and watched frames only). The output is the same.
    #[arg(long, value_enum, default_value_t = StackArg::Core)]
    pub(crate) stack: StackArg,
    /// Compare the output with this golden file (as OTP made it, masked)
    /// term by term instead of printing it: print the lines that differ and
    /// exit with status 1 if any do.
    #[arg(long, value_name = "GOLDEN")]
    pub(crate) expect: Option<String>,
}

/// `--stack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StackArg {
    /// The trace core keeps them.
    Core,
    /// The host (the scenario world) keeps them.
    Host,
}

/// Runs the scenario, the core giving the answers of `release` (`--otp`).
pub(crate) fn run(args: Args, release: Release, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(&args.scenario)?;
    let stack = match args.stack {
        StackArg::Core => StackKeeper::Core,
        StackArg::Host => StackKeeper::Host,
    };
    let mask_timestamps = args.mask_timestamps || args.expect.is_some();
    let options = Options { engine: args.engine.engine(), mask_timestamps, stack, release };
    let output = run_scenario(&text, &options)
        .map_err(|source| CliError::Parse { path: args.scenario.clone(), source })?;
    // ERTS prints `{display, X}` on the node's standard output, apart from
    // the trace messages; here it goes to standard error.
    for shown in &output.displayed {
        eprintln!("{shown}");
    }
    let Some(golden) = args.expect else {
        for line in &output.lines {
            outln!(out, "{line}")?;
        }
        return Ok(());
    };
    let expected = read_text(&golden)?;
    let differences = compare(&output, &expected)
        .map_err(|source| CliError::Parse { path: golden.clone(), source })?;
    for d in &differences {
        let shown = |line: &Option<String>| line.clone().unwrap_or_else(|| "(nothing)".into());
        outln!(out, "line {}: got      {}", d.line, shown(&d.got))?;
        outln!(
            out,
            "{:width$}  expected {}",
            "",
            shown(&d.expected),
            width = 5 + d.line.to_string().len()
        )?;
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(CliError::GoldenMismatch { golden, differences: differences.len() })
    }
}
