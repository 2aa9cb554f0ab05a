//! The subcommands, one file each.

mod bench;
mod demo;
mod dump;
mod engine;
mod etf;
mod fun2ms;
mod kind;
mod parse;
mod run;
mod test;
mod trace;

use std::io::Write;

use clap::Subcommand;
use matchspec::{Config, Release};

use crate::CliError;

pub(crate) use engine::EngineArg;
pub(crate) use kind::KindArg;

/// What `msc` can do.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show what msc does, on built-in examples.
    Demo(demo::Args),
    /// Read dot-terminated terms and print each back in canonical form.
    Parse(parse::Args),
    /// Convert between term text and the external term format.
    #[command(subcommand)]
    Etf(etf::Command),
    /// Translate a fun into a match spec, as `ets:fun2ms/1` or `dbg:fun2ms/1`.
    Fun2ms(fun2ms::Args),
    /// Answer like `erlang:match_spec_test/3` for one case or a batch.
    Test(test::Args),
    /// Run a spec over a stream of input terms (the filter engine).
    Run(run::Args),
    /// Print the compiled IR of a spec.
    Dump(dump::Args),
    /// Time a spec over a stream of inputs; print one JSON line.
    Bench(bench::Args),
    /// Run a trace scenario: tracing commands and host events, in order.
    Trace(trace::Args),
}

/// Runs a subcommand; its output goes to `out`.
/// Runs `command`, giving the answers of `release` wherever releases
/// differ.
pub(crate) fn run(command: Command, release: Release, out: &mut dyn Write) -> Result<(), CliError> {
    let config = Config::default().release(release);
    match command {
        Command::Demo(args) => demo::run(args, out),
        Command::Parse(args) => parse::run(args, out),
        Command::Etf(command) => etf::run(command, release, out),
        Command::Fun2ms(args) => fun2ms::run(args, &config, out),
        Command::Test(args) => test::run(args, release, out),
        Command::Run(args) => run::run(args, &config, out),
        Command::Dump(args) => dump::run(args, &config, out),
        Command::Bench(args) => bench::run(args, &config, out),
        Command::Trace(args) => trace::run(args, release, out),
    }
}
