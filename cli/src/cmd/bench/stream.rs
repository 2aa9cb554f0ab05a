//! `msc bench --stream`: `msc run`'s whole job on a file, timed, and the
//! limits a filter over that file cannot beat.

use matchspec::Config;
use std::io::{Read, Write};
use std::path::Path;

use msc::stream::Summary;

use super::{Args, Timing, json_line};
use crate::CliError;
use crate::cmd::run::{InputOptions, OutputArg, engine_spec, run_input};
use crate::input::spec_file;

/// How many bytes the limits read at a time (as `msc run`'s reader does).
const CHUNK: usize = 64 * 1024;

/// Prints a line for msc (results written to `/dev/null`), then one for
/// each limit: `read` (the file read
/// through a 64 KiB buffer and dropped, as `cat FILE > /dev/null` from the
/// page cache) and `scan` (the same, counting with `memchr` the file's
/// rarest byte, a byte it does not hold if there is one: the whole file
/// searched at memchr's speed).
pub(super) fn run(
    args: &Args,
    spec_path: &str,
    input_path: &str,
    config: &Config,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let spec = spec_file(spec_path)?;
    let kind = spec.kind_or(args.kind.map(Into::into));
    let spec = engine_spec(spec.compile(kind, config)?, args.engine);
    let io = |source| CliError::Io { path: input_path.to_owned(), source };
    let bytes = std::fs::metadata(input_path).map_err(io)?.len();
    let options = InputOptions {
        format: args.format,
        output: args.output,
        all: false,
        skip_bad: false,
        quiet: true,
        jobs: args.jobs.map_or(1, usize::from),
    };
    let mut failed = None;
    let mut summary = Summary::default();
    // Results go where `msc run > /dev/null` sends them: through a buffer
    // to a file that drops them (formatting and buffering cost as in a run).
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null").map_err(io)?;
    let mut results = std::io::BufWriter::new(null);
    let timing = Timing::measure(args.rounds, || {
        match run_input(&options, &spec, input_path, &mut results) {
            Ok(done) => summary = done,
            Err(err) => failed = Some(err),
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    if let Some(stopped) = summary.stopped {
        return Err(CliError::Stream { path: input_path.to_owned(), source: stopped });
    }
    let name = |path: &str| {
        Path::new(path)
            .file_name()
            .map_or_else(|| path.to_owned(), |s| s.to_string_lossy().into_owned())
    };
    let (input, spec_name) = (name(input_path), name(spec_path));
    let output = match args.output {
        OutputArg::Text => "text",
        OutputArg::Etf => "etf",
        OutputArg::Input => "input",
    };
    let line = |what: &str, engine: &str, timing: Timing, events: u64, matched: u64| {
        let (ns_per_event, _) = timing.ns_per(events);
        let mb =
            |d: std::time::Duration| (bytes as f64 / d.as_secs_f64() / 1e6 * 10.0).round() / 10.0;
        json_line(&[
            ("stream", what.into()),
            ("input", input.clone().into()),
            ("spec", spec_name.clone().into()),
            ("engine", engine.into()),
            ("output", output.into()),
            ("bytes", bytes.into()),
            ("events", events.into()),
            ("matched", matched.into()),
            ("ms_median", ((timing.median.as_secs_f64() * 1e4).round() / 10.0).into()),
            ("ms_min", ((timing.min.as_secs_f64() * 1e4).round() / 10.0).into()),
            ("mb_per_s", mb(timing.median).into()),
            ("mb_per_s_max", mb(timing.min).into()),
            ("ns_per_event", ns_per_event.into()),
            ("rounds", args.rounds.max(1).into()),
        ])
    };
    outln!(out, "{}", line("msc", args.engine.name(), timing, summary.entries, summary.matched))?;

    let read = |scan: Option<u8>| -> std::io::Result<u64> {
        let mut file = std::fs::File::open(input_path)?;
        let mut buffer = vec![0u8; CHUNK];
        let mut found = 0;
        loop {
            let n = file.read(&mut buffer)?;
            if n == 0 {
                return Ok(found);
            }
            if let Some(byte) = scan {
                found += memchr::memchr_iter(byte, &buffer[..n]).count() as u64;
            }
        }
    };
    let rarest = rarest_byte(input_path).map_err(io)?;
    for (what, scan) in [("read", None), ("scan", Some(rarest))] {
        let mut failed = None;
        let timing = Timing::measure(args.rounds, || {
            if let Err(err) = read(scan) {
                failed = Some(err);
            }
        });
        if let Some(err) = failed {
            return Err(io(err));
        }
        outln!(out, "{}", line(what, "-", timing, summary.entries, 0))?;
    }
    Ok(())
}

/// The byte value the file holds fewest of.
fn rarest_byte(path: &str) -> std::io::Result<u8> {
    let mut seen = [0u64; 256];
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        for &b in &buffer[..n] {
            seen[usize::from(b)] += 1;
        }
    }
    Ok((0..=255u8).min_by_key(|&b| seen[usize::from(b)]).unwrap_or(0))
}
