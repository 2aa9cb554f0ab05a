//! `msc dump`: the compiled IR of a spec, or what the JIT makes of it.

use matchspec::Config;
use std::io::Write;

use matchspec::fun2ms::{Dialect, spec_to_fun};
use matchspec::spec::Kind;
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
    #[arg(long, conflicts_with = "fun")]
    asm: bool,
    /// Show the spec as the fun `ets:fun2ms/1` (table) or `dbg:fun2ms/1`
    /// (trace kinds) translates to it, with the bindings it needs.
    #[arg(long, conflicts_with = "clif")]
    fun: bool,
    /// The match spec, `{Kind, Spec}` or a fun, as Erlang text (or @FILE).
    spec: String,
}

/// Prints the program in its text form (see `matchspec::ir`).
pub(crate) fn run(args: Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    let spec = spec_arg(&args.spec)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let compiled = spec.compile(kind, config)?;
    if args.fun {
        let text = spec.spec_for(kind)?;
        let term = crate::input::syntax()
            .parse_term(&text)
            .map_err(|source| CliError::Parse { path: spec.path().to_owned(), source })?;
        let dialect = if kind == Kind::Table { Dialect::Table } else { Dialect::Trace };
        let fun = spec_to_fun(term.as_ref(), dialect).map_err(CliError::NoFun)?;
        for (name, value) in &fun.bindings {
            outln!(out, "% {name} = {value}")?;
        }
        return outln!(out, "{}", fun.text);
    }
    if args.clif || args.asm {
        let listing = JitProgram::listing(&compiled).map_err(CliError::Jit)?;
        let text = if args.clif { listing.clif } else { listing.asm };
        return write!(out, "{text}").map_err(CliError::stdout);
    }
    write!(out, "{}", compiled.program()).map_err(CliError::stdout)
}
