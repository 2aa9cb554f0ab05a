//! `msc run`: the filter engine, a spec over a stream of input terms.

mod output;
mod parallel;
mod parallel_text;

use matchspec::Config;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::time::Instant;

use matchspec::term::{Heap, Word};
use matchspec::{CompiledSpec, Run, Scratch, TestHost};
use msc::Spec;
use msc::stream::{EtfReader, Filter, Framing, Looks, Summary, TextError, TextReader};

pub(crate) use self::output::OutputArg;
use self::output::{Encoding, Printer};
use super::{EngineArg, KindArg};
use crate::CliError;
use crate::input::{read_bytes, spec_file};

/// Arguments of `msc run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: a match spec, `{Kind, Spec}` (as the benchmark
    /// workloads' `.ms` files) or a fun (`fun({K, V}) -> K end`, translated
    /// as `ets:fun2ms/1` or `dbg:fun2ms/1` would); `-` for standard input.
    #[arg(long, value_name = "FILE")]
    spec: String,
    /// The inputs (`--format`): dot-terminated terms, external term format
    /// terms one after another (detected by the leading version byte 131),
    /// `{packet, N}`-framed ones or dbg trace files (both detected by their
    /// first entries); `-` for standard input. Given several times, the files
    /// are read one after another as one stream, in the order given, except
    /// that the files of a dbg wrap set are read in dbg's order.
    #[arg(long, value_name = "FILE", required = true)]
    input: Vec<String>,
    /// The event kind (overrides the one the spec file names; else table).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// The engine that runs the spec (default: the JIT for standard input
    /// and for inputs of 1 MiB or more, where compiling pays for itself,
    /// else the interpreter).
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// Print a line for inputs that match no clause too (`nomatch.`).
    #[arg(long)]
    all: bool,
    /// How the input's entries are written; every input is read and
    /// decided an entry at a time, in bounded memory.
    #[arg(long, value_enum, default_value_t)]
    format: FormatArg,
    /// Skip entries that do not decode or are too long, counting them,
    /// instead of stopping (possible where the next entry's start is known:
    /// framed entries, and text terms, which end at their `.`).
    #[arg(long)]
    skip_bad: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// How results are written: as text, as external term format, or
    /// framed as the input was.
    #[arg(long, value_enum, default_value_t)]
    output: OutputArg,
    /// Threads deciding encoded inputs (default: the machine's cores); the
    /// input is split at entry boundaries and results keep input order.
    #[arg(long, short, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
}

/// How the input's entries are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// External term format if the first byte is 131, a dbg trace file
    /// if it starts with a dbg message entry, `{packet, N}` if it starts
    /// with entries of N-byte lengths, else text.
    #[default]
    Auto,
    /// Dot-terminated terms in Erlang syntax.
    Text,
    /// External term format terms back to back (`term_to_binary/1`).
    Etf,
    /// External term format after a 1-byte length (`{packet, 1}`).
    Packet1,
    /// External term format after a 2-byte big-endian length (`{packet, 2}`).
    Packet2,
    /// External term format after a 4-byte big-endian length (`{packet, 4}`).
    Packet4,
    /// A trace file written by `dbg:trace_port(file, ...)`.
    Dbg,
}

/// Runs the spec on every input and writes the result of each that
/// matches (of every input with `--all`), then the counts on standard
/// error. Encoded inputs are read and decided an entry at a time, in
/// bounded memory, on the wire where the spec's heads allow; text is read
/// whole.
pub(crate) fn run(args: Args, config: &Config, out: &mut dyn Write) -> Result<(), CliError> {
    if args.spec == "-" && args.input.iter().any(|input| input == "-") {
        return Err(CliError::StdinTwice);
    }
    let spec = spec_file(&args.spec)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let spec = spec.compile(kind, config)?;
    let spec = engine_spec(spec, args.engine.unwrap_or_else(|| fastest_engine(&args.input)));
    let start = Instant::now();
    let mut total = Summary::default();
    let options = InputOptions {
        format: args.format,
        output: args.output,
        all: args.all,
        skip_bad: args.skip_bad,
        quiet: args.quiet,
        jobs: args.jobs.map_or_else(default_jobs, usize::from),
    };
    for path in &reading_order(&args)? {
        let read = run_input(&options, &spec, path, out);
        total.add(read.map_err(|err| with_looks(err, path, args.format))?);
        if let Some(source) = total.stopped.take() {
            report_counts(&total, start);
            let err = CliError::Stream { path: path.clone(), source };
            return Err(with_looks(err, path, args.format));
        }
    }
    report_counts(&total, start);
    Ok(())
}

/// `err`, an error reading the input `path` as `format`, with what the
/// input looks like if that is another format (or none): the first thing a
/// user wants to know when a file will not read.
fn with_looks(err: CliError, path: &str, format: FormatArg) -> CliError {
    let about_the_input = match &err {
        CliError::Stream { .. } | CliError::Parse { .. } | CliError::ParseCount { .. } => true,
        CliError::Io { source, .. } => source.kind() == std::io::ErrorKind::InvalidData,
        _ => false,
    };
    if !about_the_input || path == "-" {
        return err;
    }
    let mut start = Vec::new();
    let read =
        std::fs::File::open(path).and_then(|file| file.take(64 * 1024).read_to_end(&mut start));
    if read.is_err() {
        return err;
    }
    let looks = Looks::at(&start);
    // The format it looks like, as `--format` names it.
    let like = match looks {
        Looks::Framed(Framing::Concatenated) => FormatArg::Etf,
        Looks::Framed(Framing::Packet1) => FormatArg::Packet1,
        Looks::Framed(Framing::Packet2) => FormatArg::Packet2,
        Looks::Framed(Framing::Packet4) => FormatArg::Packet4,
        Looks::Framed(Framing::DbgTrace) => FormatArg::Dbg,
        Looks::Text => FormatArg::Text,
        Looks::Other => FormatArg::Auto,
    };
    let advice = match looks {
        Looks::Other => {
            let first = &start[..start.len().min(8)];
            format!(
                "it starts with bytes {first:?} (encoded terms start with 131, a dbg trace \
                 file with 0 or 1, and text is UTF-8)"
            )
        }
        _ if format != FormatArg::Auto && format != like => {
            let flag = clap::ValueEnum::to_possible_value(&like).map(|v| v.get_name().to_owned());
            let flag = flag.unwrap_or_default();
            format!("read it with --format {flag}, or without --format to detect it")
        }
        // It looks as it was read: the error is about its content.
        _ => return err,
    };
    CliError::Looks { error: Box::new(err), path: path.to_owned(), looks, advice }
}

/// The inputs in the order they are read: as given, except that the dbg
/// trace files of one wrap set are put in the order dbg reads them.
fn reading_order(args: &Args) -> Result<Vec<String>, CliError> {
    let is_dbg = |path: &str| match args.format {
        FormatArg::Dbg => true,
        FormatArg::Auto if path != "-" => {
            let mut start = [0u8; 6];
            let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut start));
            read.is_ok() && Framing::detect(&start) == Some(Framing::DbgTrace)
        }
        _ => false,
    };
    let slots: Vec<usize> = (0..args.input.len()).filter(|&i| is_dbg(&args.input[i])).collect();
    let names: Vec<&str> = slots.iter().map(|&i| args.input[i].as_str()).collect();
    let order = msc::stream::wrap_order(&names)?;
    let mut paths = args.input.clone();
    for (&slot, &i) in slots.iter().zip(&order) {
        paths[slot] = names[i].to_owned();
    }
    Ok(paths)
}

/// The engine that reads `inputs` fastest: the JIT where they are long
/// enough for its compile time (a few milliseconds) not to show, or of
/// unknown length (standard input); the interpreter for short files. Both
/// give the same answers.
fn fastest_engine(inputs: &[String]) -> EngineArg {
    /// The input, in bytes, from which the JIT pays.
    const JIT_PAYS: u64 = 1 << 20;
    let mut total = 0u64;
    for input in inputs {
        match std::fs::metadata(input) {
            Ok(meta) if input != "-" && meta.is_file() => total += meta.len(),
            // Standard input, a pipe, or a file that will fail to open.
            _ => return EngineArg::Jit,
        }
    }
    if total >= JIT_PAYS { EngineArg::Jit } else { EngineArg::Interp }
}

/// Prints what a run counted on standard error.
fn report_counts(summary: &Summary, start: Instant) {
    let Summary { entries, matched, not_runnable, skipped, .. } = *summary;
    report!(
        "{entries} events, {matched} matched, {} no match{}{}, {:.3} s",
        entries - matched - not_runnable,
        if not_runnable > 0 { format!(", {not_runnable} not runnable") } else { String::new() },
        if skipped > 0 { format!(", {skipped} bad entries skipped") } else { String::new() },
        start.elapsed().as_secs_f64()
    );
}

/// How `msc run` reads and writes each input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InputOptions {
    /// How the input's entries are written.
    pub(crate) format: FormatArg,
    /// How results are written.
    pub(crate) output: OutputArg,
    /// Write `nomatch` for inputs no clause matches.
    pub(crate) all: bool,
    /// Skip bad framed entries.
    pub(crate) skip_bad: bool,
    /// No progress bar.
    pub(crate) quiet: bool,
    /// Threads deciding encoded inputs.
    pub(crate) jobs: usize,
}

/// The machine's cores (1 if that cannot be known).
pub(crate) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Runs the spec over one input file, writing results to `out`.
pub(crate) fn run_input(
    args: &InputOptions,
    spec: &Spec,
    path: &str,
    out: &mut dyn Write,
) -> Result<Summary, CliError> {
    let io = |source| CliError::Io { path: path.to_owned(), source };
    let mut input: Box<dyn BufRead + Send> = if path == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(std::fs::File::open(path).map_err(io)?))
    };
    let framing = match args.format {
        FormatArg::Auto => Framing::detect(input.fill_buf().map_err(io)?),
        FormatArg::Text => None,
        FormatArg::Etf => Some(Framing::Concatenated),
        FormatArg::Packet1 => Some(Framing::Packet1),
        FormatArg::Packet2 => Some(Framing::Packet2),
        FormatArg::Packet4 => Some(Framing::Packet4),
        FormatArg::Dbg => Some(Framing::DbgTrace),
    };
    let encoding = match (args.output, framing) {
        (OutputArg::Text, _) | (OutputArg::Input, None) => Encoding::Text,
        (OutputArg::Etf, _) | (OutputArg::Input, Some(Framing::Concatenated)) => {
            Encoding::Etf { prefix: 0 }
        }
        (OutputArg::Input, Some(Framing::Packet1)) => Encoding::Etf { prefix: 1 },
        (OutputArg::Input, Some(Framing::Packet2)) => Encoding::Etf { prefix: 2 },
        (OutputArg::Input, Some(Framing::Packet4)) => Encoding::Etf { prefix: 4 },
        (OutputArg::Input, Some(Framing::DbgTrace)) => Encoding::DbgTrace,
    };
    let mut printer = Printer {
        out,
        encoding,
        kind: spec.kind(),
        all: args.all,
        progress: None,
        path: path.to_owned(),
        failed: None,
        line: String::new(),
        encoded: Vec::new(),
        deferred: None,
    };
    let summary = match framing {
        None => {
            let size = std::fs::metadata(path).map(|m| m.len()).ok().filter(|_| path != "-");
            printer.progress = size.and_then(|size| progress_bar(size, args.quiet));
            if args.jobs > 1 {
                let summary =
                    parallel_text::run(spec, input, args.jobs, args.skip_bad, &mut printer)?;
                printer.out.flush().map_err(CliError::stdout)?;
                return Ok(summary);
            }
            let mut reader = TextReader::new(input).syntax(crate::input::syntax());
            let (mut heap, mut scratch, mut host) =
                (Heap::new(), Scratch::new(), TestHost::default());
            let mut summary = Summary::default();
            while let Some(term) = reader.next_into(&mut heap) {
                let number = summary.entries + summary.skipped + 1;
                match term {
                    Ok(word) => {
                        let outcome = spec.run(heap.view(word), &mut scratch, &mut host);
                        summary.count(outcome.as_ref());
                        printer.progress(number, reader.offset());
                        printer.print(number, outcome.as_ref())?;
                    }
                    Err(TextError::Parse { error, .. }) if args.skip_bad => {
                        summary.skipped += 1;
                        printer.out.flush().map_err(CliError::stdout)?;
                        report!("msc: {path}: skipped term {number}:\n{error}");
                    }
                    Err(TextError::Parse { error, .. }) => {
                        printer.out.flush().map_err(CliError::stdout)?;
                        return Err(CliError::Parse { path: path.to_owned(), source: error });
                    }
                    Err(TextError::Io(source)) => {
                        return Err(CliError::Io { path: path.to_owned(), source });
                    }
                    Err(err @ TextError::NotUtf8 { .. }) => {
                        let source =
                            std::io::Error::new(std::io::ErrorKind::InvalidData, err.to_string());
                        return Err(CliError::Io { path: path.to_owned(), source });
                    }
                }
                heap.clear();
            }
            summary
        }
        Some(framing) => {
            let size = std::fs::metadata(path).map(|m| m.len()).ok().filter(|_| path != "-");
            printer.progress = size.and_then(|size| progress_bar(size, args.quiet));
            if args.jobs > 1 {
                return parallel::run(spec, input, framing, args.jobs, args.skip_bad, &mut printer)
                    .and_then(|summary| {
                        printer.out.flush().map_err(CliError::stdout)?;
                        Ok(summary)
                    });
            }
            let mut reader = EtfReader::new(input).framing(framing);
            let result = Filter::new(spec).skip_bad(args.skip_bad).run(&mut reader, &mut printer);
            if let Some(err) = printer.failed.take() {
                return Err(err);
            }
            result.map_err(CliError::stdout)?
        }
    };
    printer.out.flush().map_err(CliError::stdout)?;
    Ok(summary)
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

/// A progress bar on standard error, unless `quiet`, if that is a terminal
/// and the results go elsewhere (on the same terminal they would break the bar up).
/// It clears itself however the run ends.
fn progress_bar(len: u64, quiet: bool) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() || std::io::stdout().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len).with_finish(indicatif::ProgressFinish::AndClear);
    let template = "{bar:40} {bytes}/{total_bytes}, {bytes_per_sec}, {msg}, {eta} left";
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// Moves `bar` to byte `position`, with `events` decided so far as a rate.
pub(crate) fn show_progress(bar: &indicatif::ProgressBar, position: u64, events: u64) {
    bar.set_position(position);
    let seconds = bar.elapsed().as_secs_f64();
    if seconds > 0.0 {
        let rate = indicatif::HumanCount((events as f64 / seconds) as u64);
        bar.set_message(format!("{rate} events/s"));
    }
}

/// Loads the input terms of `path` into `heap`: text terms, or external
/// term format terms back to back.
pub(crate) fn load_inputs(path: &str, heap: &mut Heap) -> Result<Vec<Word>, CliError> {
    parse_inputs(path, read_bytes(path)?, heap)
}

/// The input terms of `bytes`, read from `path`, in `heap`.
fn parse_inputs(path: &str, bytes: Vec<u8>, heap: &mut Heap) -> Result<Vec<Word>, CliError> {
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
    crate::input::syntax()
        .parse_terms_into(&text, heap)
        .map_err(|source| CliError::Parse { path: path.to_owned(), source })
}

#[cfg(test)]
mod tests {
    use super::{EngineArg, fastest_engine};

    #[test]
    fn the_jit_runs_long_or_unknown_inputs_and_the_interpreter_short_files() {
        let dir = std::env::temp_dir().join(format!("msc-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let short = dir.join("short.terms");
        let long = dir.join("long.terms");
        std::fs::write(&short, "{a, 1}.\n").expect("written");
        std::fs::write(&long, "{a, 1}.\n".repeat(150_000)).expect("written");
        let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
        assert_eq!(fastest_engine(&[path(&short)]), EngineArg::Interp);
        assert_eq!(fastest_engine(&[path(&long)]), EngineArg::Jit);
        assert_eq!(fastest_engine(&[path(&short), path(&long)]), EngineArg::Jit);
        assert_eq!(fastest_engine(&[path(&short), "-".to_owned()]), EngineArg::Jit);
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
