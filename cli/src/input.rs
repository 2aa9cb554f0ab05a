//! Reading what commands work on: files, standard input, inline terms.

use std::io::Read;

use matchspec::spec::Kind;
use matchspec::syntax::parse_term;
use matchspec::term::Term;

use crate::CliError;

/// Reads `path` (`-` is standard input) as bytes.
pub(crate) fn read_bytes(path: &str) -> Result<Vec<u8>, CliError> {
    let io = |source| CliError::Io { path: path.to_owned(), source };
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(io)?;
        Ok(buf)
    } else {
        std::fs::read(path).map_err(io)
    }
}

/// Reads `path` (`-` is standard input) as UTF-8 text.
pub(crate) fn read_text(path: &str) -> Result<String, CliError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| CliError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

/// A term given on the command line: inline text, or `@FILE` to read it
/// from a file. Returns the term and the text it was parsed from.
pub(crate) fn term_arg(arg: &str) -> Result<(Term, String), CliError> {
    let (path, text) = match arg.strip_prefix('@') {
        Some(path) => (path.to_owned(), read_text(path)?),
        None => ("<argument>".to_owned(), arg.to_owned()),
    };
    let term = parse_term(&text).map_err(|source| CliError::Parse { path, source })?;
    Ok((term, text))
}

/// Parses a `--kind` value.
pub(crate) fn kind(name: &str) -> Result<Kind, CliError> {
    Kind::from_name(name).ok_or_else(|| {
        CliError::Invalid(format!(
            "unknown kind `{name}`; expected table, trace, call, send or receive"
        ))
    })
}

/// A spec file as the benchmark workloads write them: either a match spec,
/// or `{Kind, MatchSpec}`. Returns the spec's text, and the kind if the
/// file names one.
pub(crate) fn spec_file(path: &str) -> Result<(String, Option<Kind>), CliError> {
    let text = read_text(path)?;
    let term =
        parse_term(&text).map_err(|source| CliError::Parse { path: path.to_owned(), source })?;
    let named = term.as_ref().as_tuple().filter(|t| t.len() == 2).and_then(|t| {
        let kind = Kind::from_name(t.get(0)?.as_atom()?.name())?;
        Some((t.get(1)?.to_string(), kind))
    });
    Ok(match named {
        Some((spec, kind)) => (spec, Some(kind)),
        None => (text, None),
    })
}
