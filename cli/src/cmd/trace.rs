//! `msc trace SCENARIO`: runs a trace scenario (docs/scenarios.md) and
//! prints each term's reply and the trace messages it caused.

use std::io::Write;

use matchspec_runtime::scenario::{Options, StackKeeper, run as run_scenario};

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
}

/// `--stack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StackArg {
    /// The trace core keeps them.
    Core,
    /// The host (the scenario world) keeps them.
    Host,
}

/// Runs the scenario.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(&args.scenario)?;
    let stack = match args.stack {
        StackArg::Core => StackKeeper::Core,
        StackArg::Host => StackKeeper::Host,
    };
    let options =
        Options { engine: args.engine.engine(), mask_timestamps: args.mask_timestamps, stack };
    let output = run_scenario(&text, &options)
        .map_err(|source| CliError::Parse { path: args.scenario.clone(), source })?;
    for line in &output.lines {
        outln!(out, "{line}")?;
    }
    Ok(())
}
