//! `msc run`: the filter engine, a spec over a stream of input terms.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use matchspec::term::{Heap, Word};
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use msc::Spec;

use super::{EngineArg, KindArg};
use crate::CliError;
use crate::input::{read_bytes, spec_file};

/// Arguments of `msc run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: a match spec, or `{Kind, Spec}` (as the benchmark
    /// workloads' `.ms` files); `-` for standard input.
    #[arg(long, value_name = "FILE")]
    spec: String,
    /// The inputs: dot-terminated terms, or external term format terms one
    /// after another (detected by the leading version byte 131); `-` for
    /// standard input.
    #[arg(long, value_name = "FILE")]
    input: String,
    /// The event kind (overrides the one the spec file names; else table).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// The engine that runs the spec.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineArg,
    /// Print a line for inputs that match no clause too (`nomatch.`).
    #[arg(long)]
    all: bool,
}

/// Runs the spec on every input and prints the result of each that
/// matches (of every input with `--all`), then the counts on standard error.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> Result<(), CliError> {
    if args.spec == "-" && args.input == "-" {
        return Err(CliError::StdinTwice);
    }
    let spec = spec_file(&args.spec)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let spec = CompiledSpec::compile(&spec.text, kind, &Config::default())?;
    let spec = engine_spec(spec, args.engine);
    let mut heap = Heap::new();
    let inputs = load_inputs(&args.input, &mut heap)?;

    let progress = progress_bar(inputs.len());
    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    let (mut matched, mut errors) = (0u64, 0u64);
    let start = Instant::now();
    for (i, &input) in inputs.iter().enumerate() {
        match spec.run(heap.view(input), &mut scratch, &mut host) {
            Ok(Outcome::Match(m)) => {
                matched += 1;
                let flags = m.flags;
                if kind.is_trace() && (flags.return_trace || flags.exception_trace) {
                    let mut names = Vec::new();
                    if flags.return_trace {
                        names.push("return_trace");
                    }
                    if flags.exception_trace {
                        names.push("exception_trace");
                    }
                    outln!(out, "{{{},[{}]}}.", m.result, names.join(","))?;
                } else {
                    outln!(out, "{}.", m.result)?;
                }
            }
            Ok(Outcome::NoMatch) => {
                if args.all {
                    outln!(out, "nomatch.")?;
                }
            }
            Err(err) => {
                errors += 1;
                out.flush().map_err(CliError::stdout)?;
                let report = || report!("msc: input {}: {err}", i + 1);
                match &progress {
                    Some(bar) => bar.suspend(report),
                    None => report(),
                }
            }
        }
        if i % 4096 == 0
            && let Some(bar) = &progress
        {
            bar.set_position(i as u64);
        }
    }
    out.flush().map_err(CliError::stdout)?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let n = inputs.len() as u64;
    report!(
        "{n} events, {matched} matched, {} no match{}, {:.3} s",
        n - matched - errors,
        if errors > 0 { format!(", {errors} not runnable") } else { String::new() },
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `spec` on `engine`, reporting on standard error if the JIT could not
/// compile it (it then runs in the interpreter).
pub(crate) fn engine_spec(spec: CompiledSpec, engine: EngineArg) -> Spec {
    let spec = Spec::new(spec, engine.engine());
    if let Some(err) = spec.jit_error() {
        report!("msc: the JIT did not compile the spec ({err}); it runs in the interpreter");
    }
    spec
}

/// A progress bar on standard error, if that is a terminal and the
/// results go elsewhere (on the same terminal they would break the bar up).
/// It clears itself however the run ends.
fn progress_bar(len: usize) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() || std::io::stdout().is_terminal() {
        return None;
    }
    let bar =
        indicatif::ProgressBar::new(len as u64).with_finish(indicatif::ProgressFinish::AndClear);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {human_pos}/{human_len} events, {eta} left",
    ) {
        bar.set_style(style);
    }
    Some(bar)
}

/// Loads the input terms of `path` into `heap`: text terms, or external
/// term format terms back to back.
pub(crate) fn load_inputs(path: &str, heap: &mut Heap) -> Result<Vec<Word>, CliError> {
    let bytes = read_bytes(path)?;
    if bytes.first() == Some(&131) {
        let mut roots = Vec::new();
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let offset = bytes.len() - rest.len();
            let (root, used) = matchspec::etf::decode_prefix(rest, heap).map_err(|source| {
                CliError::Decode { path: format!("{path} (term at byte {offset})"), source }
            })?;
            roots.push(root);
            rest = &rest[used..];
        }
        return Ok(roots);
    }
    let text = String::from_utf8(bytes).map_err(|e| CliError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    matchspec::syntax::parse_terms_into(&text, heap)
        .map_err(|source| CliError::Parse { path: path.to_owned(), source })
}
