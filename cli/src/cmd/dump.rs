//! `msc dump`: the compiled IR of a spec, or what the JIT makes of it.

use std::io::Write;

use matchspec::{CompiledSpec, Config};
use matchspec_jit::JitProgram;

use super::KindArg;
use crate::CliError;
use crate::input::spec_arg;

/// Arguments of `msc dump`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind (overrides the one a `{Kind, Spec}` names; else table).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Show the Cranelift IR the JIT makes of the program instead.
    #[arg(long, conflicts_with = "asm")]
    clif: bool,
    /// Show the machine code the JIT makes of the program instead.
    #[arg(long)]
    asm: bool,
    /// The match spec, or `{Kind, Spec}`, as Erlang text (or @FILE).
    spec: String,
}

/// Prints the program in its text form (see `matchspec::ir`).
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec_arg(&args.spec)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let compiled = CompiledSpec::compile(&spec.text, kind, &Config::default())?;
    if args.clif || args.asm {
        let listing = JitProgram::listing(&compiled).map_err(CliError::Jit)?;
        let text = if args.clif { listing.clif } else { listing.asm };
        return write!(out, "{text}").map_err(CliError::stdout);
    }
    write!(out, "{}", compiled.program()).map_err(CliError::stdout)
}
