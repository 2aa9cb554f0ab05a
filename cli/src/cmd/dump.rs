//! `msc dump`: the compiled IR of a spec.

use std::io::Write;

use matchspec::{CompiledSpec, Config};

use super::KindArg;
use crate::CliError;
use crate::input::spec_arg;

/// Arguments of `msc dump`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind (overrides the one a `{Kind, Spec}` names; else table).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// The match spec, or `{Kind, Spec}`, as Erlang text (or @FILE).
    spec: String,
}

/// Prints the program in its text form (see `matchspec::ir`).
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec_arg(&args.spec)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let compiled = CompiledSpec::compile(&spec.text, kind, &Config::default())?;
    write!(out, "{}", compiled.program()).map_err(CliError::stdout)
}
