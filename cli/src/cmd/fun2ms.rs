//! `msc fun2ms`: what `ets:fun2ms/1` and `dbg:fun2ms/1` make of a fun.

use matchspec::{Config, Release};
use std::io::Write;

use matchspec::fun2ms::{Dialect, FunCase, fun2ms_with_syntax};
use matchspec::spec::Kind;
use matchspec::syntax::Location;
use matchspec::term::Term;

use super::KindArg;
use crate::CliError;
use crate::input::{compile_fun, read_text, syntax, without_final_dot};

/// Arguments of `msc fun2ms`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind: `table` translates as `ets:fun2ms/1`, the trace
    /// kinds as `dbg:fun2ms/1`; the spec is then checked for the kind.
    #[arg(long, value_enum, default_value_t)]
    kind: KindArg,
    /// A variable the fun uses but does not bind, as `Name=Term` (the
    /// shell's bindings); repeat for several.
    #[arg(long = "bind", value_name = "NAME=TERM", conflicts_with = "batch")]
    bindings: Vec<String>,
    /// A file of `{Dialect, FunText}` or `{Dialect, FunText, Bindings}`
    /// cases, either with a trailing Expected (Dialect `table` or `trace`):
    /// prints `{ok, Spec}.` or `{error, Text}.` for each, in order, and
    /// compares with Expected where given (exit code 1 if any differ).
    #[arg(long, value_name = "FILE", conflicts_with = "fun")]
    batch: Option<String>,
    /// The fun, as Erlang text: `'fun({K, V}) when V > 1 -> K end'`.
    #[arg(required_unless_present = "batch")]
    fun: Option<String>,
}

/// Runs `msc fun2ms`.
pub(crate) fn run(args: Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.batch {
        Some(file) => batch(file, config.get_release(), out),
        None => single(&args, config, out),
    }
}

/// Prints the spec the fun translates to, after checking it for the kind.
fn single(args: &Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    let text = without_final_dot(args.fun.as_deref().unwrap_or_default());
    let bindings = args.bindings.iter().map(|b| binding(b)).collect::<Result<Vec<_>, _>>()?;
    let named: Vec<(&str, Term)> = bindings.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let kind = Kind::from(args.kind);
    let dialect = if kind == Kind::Table { Dialect::Table } else { Dialect::Trace };
    let spec = fun2ms_with_syntax(text, dialect, &named, syntax())
        .map(|(spec, _)| spec)
        .map_err(CliError::Fun2ms)?;
    compile_fun(text, kind, &named, config)?;
    outln!(out, "{spec}.")
}

/// `--bind Name=Term`.
fn binding(arg: &str) -> Result<(String, Term), CliError> {
    let bad = |why: String| CliError::Usage(format!("--bind {arg}: {why}"));
    let (name, term) = arg.split_once('=').ok_or_else(|| bad("expected NAME=TERM".into()))?;
    let name = name.trim();
    let is_var = name.chars().next().is_some_and(|c| c.is_uppercase() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '@');
    if !is_var {
        return Err(bad(format!("`{name}` is not an Erlang variable name")));
    }
    let term =
        syntax().parse_term(term).map_err(|e| bad(format!("the value does not parse:\n{e}")))?;
    Ok((name.to_owned(), term))
}

/// One line per case; disagreements with Expected are reported at the end.
fn batch(file: &str, release: Release, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(file)?;
    let (mut total, mut failed) = (0usize, 0usize);
    for result in syntax().terms(&text) {
        let (term, span) =
            result.map_err(|source| CliError::Parse { path: file.to_owned(), source })?;
        let location = Location::of(&text, span.start as usize);
        let not_a_case =
            || CliError::NotAFunCase { path: file.to_owned(), location, term: term.to_string() };
        let case = FunCase::from_term(term.as_ref()).ok_or_else(not_a_case)?;
        let answer = fun2ms_with_syntax(&case.fun, case.dialect, &case.named_bindings(), syntax())
            .map(|(spec, _)| spec);
        let line = match &answer {
            Ok(spec) => format!("{{ok,{spec}}}"),
            Err(e) => format!("{{error,{}}}", Term::string(&e.message())),
        };
        outln!(out, "{line}.")?;
        total += 1;
        if let Some(why) = case.disagreement(&answer) {
            failed += 1;
            out.flush().map_err(CliError::stdout)?;
            report!("{file}:{location}: case {total}: {why}");
        }
    }
    if failed > 0 {
        report!("{} agreed, {failed} differed", total - failed);
        return Err(CliError::Disagreements { failed, total, release });
    }
    Ok(())
}
