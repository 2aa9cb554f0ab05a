//! `msc test`: what `erlang:match_spec_test/3` would answer.

use std::io::Write;

use matchspec::conformance::{Case, agrees, match_spec_test_with, test_config};
use matchspec::syntax::TermStream;
use matchspec::{CompileError, CompiledSpec, TestHost};

use super::EngineArg;
use super::parse::io;
use crate::CliError;
use crate::input::{kind, read_text, term_arg};

/// Arguments of `msc test`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The event kind: table, trace (or call), send, receive.
    #[arg(long, default_value = "table")]
    kind: String,
    /// The engine that runs the spec.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineArg,
    /// A file of `{Kind, Spec, Input}` or `{Kind, Spec, Input, Expected}`
    /// cases: prints one answer per case, in order, each ending with `.`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["spec", "input"])]
    batch: Option<String>,
    /// With --batch: compare the answers with the cases' Expected and
    /// report the ones that differ (exit code 1 if any do).
    #[arg(long, requires = "batch")]
    check: bool,
    /// The match spec, as Erlang text (or @FILE).
    #[arg(required_unless_present = "batch")]
    spec: Option<String>,
    /// The input term, as Erlang text (or @FILE): for trace kinds the
    /// argument list.
    #[arg(required_unless_present = "batch")]
    input: Option<String>,
}

/// Runs `msc test`.
pub(crate) fn run(args: Args) -> Result<(), CliError> {
    match &args.batch {
        Some(file) => batch(file, &args),
        None => single(&args),
    }
}

fn single(args: &Args) -> Result<(), CliError> {
    let kind = kind(&args.kind)?;
    let (spec, spec_text) = term_arg(args.spec.as_deref().unwrap_or_default())?;
    let (input, _) = term_arg(args.input.as_deref().unwrap_or_default())?;
    let mut runner = args.engine.runner()?;
    let mut host = TestHost::default();
    let answer = match_spec_test_with(
        input.as_ref(),
        spec.as_ref(),
        kind,
        &test_config(),
        &mut *runner,
        &mut host,
    );
    println!("{answer}.");
    for shown in &host.displayed {
        eprintln!("display: {shown}");
    }
    // Beyond ERTS: show where each error is.
    if let Err(CompileError::Spec(errors)) = CompiledSpec::compile(&spec_text, kind, &test_config())
    {
        eprintln!("{errors}");
    }
    Ok(())
}

fn batch(file: &str, args: &Args) -> Result<(), CliError> {
    let text = read_text(file)?;
    let mut runner = args.engine.runner()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut total, mut disagree) = (0usize, 0usize);
    for result in TermStream::new(&text) {
        let (term, span) =
            result.map_err(|source| CliError::Parse { path: file.to_owned(), source })?;
        let case = Case::from_term(term.as_ref()).ok_or_else(|| {
            CliError::Invalid(format!(
                "{file}: byte {}: not a {{Kind, Spec, Input}} case: {term}",
                span.start
            ))
        })?;
        let answer = match_spec_test_with(
            case.input,
            case.spec,
            case.kind,
            &test_config(),
            &mut *runner,
            &mut TestHost::default(),
        );
        writeln!(out, "{answer}.").map_err(|e| io("-", e))?;
        total += 1;
        if args.check
            && let Some(expected) = case.expected
            && !agrees(expected, answer.as_ref())
        {
            disagree += 1;
            eprintln!("case {total} (byte {}): expected {expected}\n  got {answer}", span.start);
        }
    }
    out.flush().map_err(|e| io("-", e))?;
    if args.check {
        eprintln!("{} passed, {disagree} failed", total - disagree);
        if disagree > 0 {
            return Err(CliError::Invalid(format!(
                "{disagree} of {total} cases disagree with their expected answers"
            )));
        }
    }
    Ok(())
}
