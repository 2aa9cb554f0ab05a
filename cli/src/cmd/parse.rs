//! `msc parse`: terms in, canonical terms out.

use std::io::Write;

use crate::CliError;
use crate::input::read_text;

/// Arguments of `msc parse`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The file of dot-terminated terms (`-` for standard input).
    #[arg(default_value = "-")]
    file: String,
}

/// Prints each term of the file as `Term.` on its own line; reports every
/// term that does not parse (with a caret) and fails if any did not.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(&args.file)?;
    let mut bad = 0;
    for result in crate::input::syntax().terms(&text) {
        match result {
            Ok((term, _)) => outln!(out, "{term}.")?,
            Err(err) => {
                bad += 1;
                // Keep the report next to the terms around it on a terminal.
                out.flush().map_err(CliError::stdout)?;
                report!("{}:\n{err}", args.file);
            }
        }
    }
    if bad > 0 {
        return Err(CliError::ParseCount { path: args.file, count: bad });
    }
    Ok(())
}
