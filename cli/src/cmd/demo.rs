//! `msc demo`: the pipeline at work on built-in examples.

use std::io::Write;

use matchspec::conformance::match_spec_test;
use msc::{Batch, Heap, Kind, Outcome, Run, Scratch, Spec, Term, TestHost};

use crate::CliError;

/// Arguments of `msc demo` (none yet).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

const TABLE_SPEC: &str = "[{{'$1', '$2', ok}, [{'>', '$2', 100}], [{{'$1', '$2'}}]},
 {{'$1', '_', error}, [], [{{failed, '$1'}}]}]";

const INPUTS: &str = "{user_1, 150, ok}. {user_2, 50, ok}. {user_3, 7, error}. {user_4, 250, ok}.";

const TRACE_SPEC: &str =
    "[{['$1', '_'], [{is_integer, '$1'}], [{message, {{arg, '$1'}}}, {return_trace}]}]";

/// The trace scenario the demo runs (see docs/scenarios.md).
const TRACE_SCENARIO: &str = include_str!("demo.scenario");

const BAD_SPEC: &str = "[{'$1', [{'>', '$2', 0}], [{message, '$1'}]}]";

/// Walks through parsing, checking, compiling and running specs.
pub(crate) fn run(_args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    outln!(out, "== A table spec: keep the ok rows above 100, flag the errors\n{TABLE_SPEC}\n")?;
    let spec = Spec::compile(TABLE_SPEC, Kind::Table)?;
    outln!(
        out,
        "== Compiled to the IR that every engine runs (msc dump)\n{}",
        spec.compiled().program()
    )?;

    outln!(out, "== Run over a stream of rows (msc run)")?;
    let mut heap = Heap::new();
    let rows = matchspec::syntax::parse_terms_into(INPUTS, &mut heap)
        .map_err(|source| CliError::Parse { path: "<demo>".to_owned(), source })?;
    let mut lines = Vec::new();
    let batch = Batch::new(&heap, &rows);
    spec.run_each(batch, &mut Scratch::new(), &mut TestHost::default(), |i, outcome| {
        let row_text = heap.view(rows[i]).to_string();
        lines.push(match outcome {
            Ok(Outcome::Match(m)) => format!("  {row_text:<22} -> {}", m.result),
            Ok(Outcome::NoMatch) => format!("  {row_text:<22} -> (no clause matched)"),
            Err(err) => format!("  {row_text:<22} -> cannot run: {err}"),
        });
    });
    for line in lines {
        outln!(out, "{line}")?;
    }

    outln!(
        out,
        "\n== A call trace spec, answered as erlang:match_spec_test/3 would (msc test)\n{TRACE_SPEC}"
    )?;
    let spec = Term::parse(TRACE_SPEC)
        .map_err(|source| CliError::Parse { path: "<demo>".to_owned(), source })?;
    for args in ["[42, x]", "[x, 42]", "[1, 2, 3]"] {
        let input = Term::parse(args)
            .map_err(|source| CliError::Parse { path: "<demo>".to_owned(), source })?;
        let answer = match_spec_test(input.as_ref(), spec.as_ref(), Kind::Call);
        outln!(out, "  args {args:<10} -> {answer}")?;
    }

    outln!(out, "\n== A broken spec: ERTS's messages, and where they point\n{BAD_SPEC}\n")?;
    match Spec::compile(BAD_SPEC, Kind::Table) {
        Ok(_) => outln!(out, "(compiled)")?,
        Err(err) => outln!(out, "{err}")?,
    }
    trace_core(out)
}

/// Runs the built-in trace scenario and summarises it.
fn trace_core(out: &mut dyn Write) -> Result<(), CliError> {
    outln!(out, "\n== The trace core: a scenario (msc trace)\n{}", TRACE_SCENARIO.trim_end())?;
    let output = msc_world::scenario::run(TRACE_SCENARIO, &Default::default())
        .map_err(|source| CliError::Parse { path: "<demo scenario>".to_owned(), source })?;
    outln!(out, "\n== What it printed: each reply, then the messages each tracer got")?;
    for line in &output.lines {
        outln!(out, "  {line}")?;
    }
    outln!(
        out,
        "\n== Summary: {} terms run, {} trace messages delivered, {} errors",
        output.terms,
        output.messages,
        output.errors
    )
}
