//! `msc`: the command line of the msc workspace.
//!
//! Every subcommand lives in its own file under `cmd/`. They share the
//! input helpers of `input.rs`, write their output to one buffered,
//! locked standard output, and report errors as [`CliError`]s: exit code 1
//! with a readable message (carets included) for anything wrong with what
//! the user gave, 2 for bad usage (clap's own code). A reader that closes
//! our output early (`msc parse big | head`) is a normal stop: exit code
//! 0, nothing printed.

/// `writeln!` to a command's output, with a write error as a [`CliError`]
/// (a closed pipe as [`CliError::BrokenPipe`]).
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {
        std::io::Write::write_fmt(&mut *$out, format_args!("{}\n", format_args!($($arg)*)))
            .map_err($crate::CliError::stdout)
    };
}

/// `eprintln!` that never panics: if standard error is gone too
/// (`msc ... 2>&1 | head`), the message is dropped.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cmd;
mod error;
mod input;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;
use matchspec::Release;

pub(crate) use error::CliError;

/// Erlang match specifications: parse, check, run, compile, benchmark.
#[derive(Debug, Parser)]
#[command(name = "msc", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
    /// The OTP release whose answers to give: 27 or 29 (also `OTP 29`,
    /// `29.1.2`); the newest by default. docs/releases.md lists what
    /// differs.
    #[arg(long, global = true, value_name = "RELEASE", default_value_t = Release::default())]
    otp: Release,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    input::set_release(cli.otp);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let result = cmd::run(cli.command, cli.otp, &mut out)
        .and_then(|()| out.flush().map_err(CliError::stdout));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever reads our output has all they want.
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(err) => {
            // What the command printed before it failed comes first.
            let _ = out.flush();
            report!("{err}");
            ExitCode::from(err.exit_code())
        }
    }
}
