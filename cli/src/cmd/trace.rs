//! `msc trace SCENARIO`: runs a trace scenario (docs/scenarios.md) and
//! prints each term's reply and the trace messages it caused.

use std::io::Write;

use matchspec_runtime::scenario::{Options, run as run_scenario};

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
}

/// Runs the scenario.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(&args.scenario)?;
    let options = Options { engine: args.engine.engine(), mask_timestamps: args.mask_timestamps };
    let output = run_scenario(&text, &options)
        .map_err(|source| CliError::Parse { path: args.scenario.clone(), source })?;
    for line in &output.lines {
        outln!(out, "{line}")?;
    }
    Ok(())
}
