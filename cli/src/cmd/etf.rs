//! `msc etf decode|encode`: the external term format.

use std::io::Write;

use matchspec::{Release, etf};

use crate::CliError;
use crate::input::{read_bytes, read_text};

/// The directions of `msc etf`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Read one term in the external term format and print it as `Term.`.
    Decode {
        /// The file of bytes (`-` for standard input).
        #[arg(default_value = "-")]
        file: String,
    },
    /// Read one term as text and write its external term format bytes.
    Encode {
        /// The file of text (`-` for standard input).
        #[arg(default_value = "-")]
        file: String,
        /// Compress the encoding (as `term_to_binary(T, [compressed])`).
        #[arg(long)]
        compressed: bool,
    },
}

/// Runs `msc etf`.
/// Encodings are those of `release` (it orders maps of over 32 keys).
pub(crate) fn run(command: Command, release: Release, out: &mut dyn Write) -> Result<(), CliError> {
    match command {
        Command::Decode { file } => {
            let bytes = read_bytes(&file)?;
            let term =
                etf::decode(&bytes).map_err(|source| CliError::Decode { path: file, source })?;
            outln!(out, "{term}.")
        }
        Command::Encode { file, compressed } => {
            let text = read_text(&file)?;
            let term = crate::input::syntax()
                .parse_term(&text)
                .map_err(|source| CliError::Parse { path: file, source })?;
            let bytes = if compressed {
                etf::encode_compressed_for(term.as_ref(), 6, release)?
            } else {
                etf::encode_for(term.as_ref(), release)?
            };
            out.write_all(&bytes).map_err(CliError::stdout)
        }
    }
}
