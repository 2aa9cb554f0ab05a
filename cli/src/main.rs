//! `msc`: the command line of the msc workspace.
//!
//! Every subcommand lives in its own file under `cmd/`. They share the
//! input helpers of `input.rs` and report errors as [`CliError`]s: exit
//! code 1 with a readable message (carets included) for anything wrong
//! with what the user gave, 2 for bad usage (clap's own code).

mod cmd;
mod error;
mod input;

use std::process::ExitCode;

use clap::Parser;

pub(crate) use error::CliError;

/// Erlang match specifications: parse, check, run, compile, benchmark.
#[derive(Debug, Parser)]
#[command(name = "msc", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cmd::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(err.exit_code())
        }
    }
}
