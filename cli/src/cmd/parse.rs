//! `msc parse`: terms in, canonical terms out.

use std::io::Write;

use matchspec::syntax::TermStream;

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
pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let text = read_text(&args.file)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut bad = 0;
    for result in TermStream::new(&text) {
        match result {
            Ok((term, _)) => writeln!(out, "{term}.").map_err(|e| io("-", e))?,
            Err(err) => {
                bad += 1;
                out.flush().map_err(|e| io("-", e))?;
                eprintln!("{}:\n{err}", args.file);
            }
        }
    }
    out.flush().map_err(|e| io("-", e))?;
    if bad > 0 {
        return Err(CliError::ParseCount { path: args.file, count: bad });
    }
    Ok(())
}

pub(crate) fn io(path: &str, source: std::io::Error) -> CliError {
    CliError::Io { path: path.to_owned(), source }
}
