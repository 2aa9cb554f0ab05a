//! `msc dump`: the compiled IR of a spec.

use matchspec::CompiledSpec;
use matchspec::spec::Kind;

use crate::CliError;
use crate::input::{kind, term_arg};

/// Arguments of `msc dump`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind (if the spec is not given as `{Kind, Spec}`).
    #[arg(long)]
    kind: Option<String>,
    /// The match spec, or `{Kind, Spec}`, as Erlang text (or @FILE).
    spec: String,
}

/// Prints the program.
pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let (term, text) = term_arg(&args.spec)?;
    let named =
        term.as_ref().as_tuple().filter(|t| t.len() == 2).and_then(|t| {
            Some((Kind::from_name(t.get(0)?.as_atom()?.name())?, t.get(1)?.to_string()))
        });
    let (file_kind, text) = match named {
        Some((k, spec)) => (Some(k), spec),
        None => (None, text),
    };
    let kind = match (&args.kind, file_kind) {
        (Some(name), _) => kind(name)?,
        (None, Some(k)) => k,
        (None, None) => Kind::Table,
    };
    let spec = CompiledSpec::compile(&text, kind, &Default::default())?;
    print!("{}", spec.program());
    Ok(())
}
