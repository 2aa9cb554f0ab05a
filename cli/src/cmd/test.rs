//! `msc test`: what `erlang:match_spec_test/3` would answer.

use std::io::Write;

use matchspec::conformance::{Case, agrees, match_spec_test_with, test_config};
use matchspec::spec::Kind;
use matchspec::syntax::Location;
use matchspec::{CompileError, CompiledSpec, Config, Release, TestHost};

use super::{EngineArg, KindArg};
use crate::CliError;
use crate::input::{fun_spec, is_fun, read_text, term_arg};

/// Arguments of `msc test`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind (with --batch, each case names its own).
    #[arg(long, value_enum, default_value_t)]
    kind: KindArg,
    /// The engine that runs the spec.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineArg,
    /// A file of `{Kind, Spec, Input}` or `{Kind, Spec, Input, Expected}`
    /// cases: prints one answer per case, in order, each ending with `.`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["spec", "input"])]
    batch: Option<String>,
    /// With --batch: compare the answers with the cases' Expected and
    /// report the ones that differ (exit code 1 if any do).
    // The conflicts are not redundant: clap 4.6 does not enforce `requires`
    // when the required argument conflicts with one that is present.
    #[arg(long, requires = "batch", conflicts_with_all = ["spec", "input"])]
    check: bool,
    /// The match spec, as Erlang text (or @FILE), or a fun
    /// (`'fun({K, V}) -> K end'`) to translate as `ets:fun2ms/1` or
    /// `dbg:fun2ms/1` would.
    #[arg(required_unless_present = "batch")]
    spec: Option<String>,
    /// The input term, as Erlang text (or @FILE): for trace kinds the
    /// argument list.
    #[arg(required_unless_present = "batch")]
    input: Option<String>,
}

/// Runs `msc test`.
pub(crate) fn run(args: Args, release: Release, out: &mut dyn Write) -> Result<(), CliError> {
    let config = test_config().release(release);
    match &args.batch {
        Some(file) => batch(file, &args, &config, out),
        None => single(&args, &config, out),
    }
}

/// Prints the answer for one case; for an invalid spec, also shows where
/// each error is on standard error (something ERTS does not do).
fn single(args: &Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    let kind = Kind::from(args.kind);
    let spec_arg = args.spec.as_deref().unwrap_or_default();
    let (spec, spec_text) = if is_fun(spec_arg) {
        let spec = fun_spec(spec_arg, kind)?;
        let text = spec.to_string();
        (spec, text)
    } else {
        term_arg(spec_arg)?
    };
    let (input, _) = term_arg(args.input.as_deref().unwrap_or_default())?;
    let mut host = TestHost::default();
    let answer =
        match_spec_test_with(input.as_ref(), spec.as_ref(), kind, config, &mut host, |spec| {
            args.engine.spec(spec)
        });
    outln!(out, "{answer}.")?;
    out.flush().map_err(CliError::stdout)?;
    for shown in &host.displayed {
        report!("display: {shown}");
    }
    if let Err(CompileError::Spec(errors)) = CompiledSpec::compile(&spec_text, kind, config) {
        report!("{errors}");
    }
    Ok(())
}

/// Prints one answer per case of the file; with `--check`, compares them
/// with the expected answers.
fn batch(file: &str, args: &Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    let text = read_text(file)?;
    let (mut total, mut failed) = (0usize, 0usize);
    for result in crate::input::syntax().terms(&text) {
        let (term, span) =
            result.map_err(|source| CliError::Parse { path: file.to_owned(), source })?;
        let location = Location::of(&text, span.start as usize);
        let case = Case::from_term(term.as_ref()).ok_or_else(|| CliError::NotACase {
            path: file.to_owned(),
            location,
            term: term.to_string(),
        })?;
        let answer = match_spec_test_with(
            case.input,
            case.spec,
            case.kind,
            config,
            &mut TestHost::default(),
            |spec| args.engine.spec(spec),
        );
        outln!(out, "{answer}.")?;
        total += 1;
        if args.check
            && let Some(expected) = case.expected
            && !agrees(expected, answer.as_ref())
        {
            failed += 1;
            out.flush().map_err(CliError::stdout)?;
            report!("{file}:{location}: case {total}: expected {expected}\n  got {answer}");
        }
    }
    if args.check {
        report!("{} passed, {failed} failed", total - failed);
        if failed > 0 {
            return Err(CliError::Disagreements { failed, total, release: config.get_release() });
        }
    }
    Ok(())
}
