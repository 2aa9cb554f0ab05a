//! `msc ... | head -1`: when the reader closes standard output early, `msc`
//! stops quietly with exit code 0; it never panics (exit code 101).

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::{command, temp_file};

/// Runs `msc args`, reads one line of its output, closes the pipe and
/// checks how `msc` ended. The output must be far larger than the pipe's
/// buffer, so that `msc` is still writing when the pipe closes.
#[track_caller]
fn check(args: &[&str]) {
    let mut child = command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("msc starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("a line");
    assert!(!line.is_empty(), "msc {args:?} printed nothing");
    drop(stdout);
    let output = child.wait_with_output().expect("msc ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "msc {args:?} panicked:\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "msc {args:?}: {:?}\n{stderr}", output.status);
    assert_eq!(stderr, "", "msc {args:?}: a closed pipe is not worth a message");
}

/// `{N, item_N, N * 7}.` for N in 1..=count, one per line.
fn terms(count: usize) -> String {
    (1..=count).map(|n| format!("{{{n}, item_{n}, {}}}.\n", n * 7)).collect()
}

#[test]
fn parse() {
    check(&["parse", &temp_file("pipe_parse.terms", terms(50_000))]);
}

#[test]
fn run() {
    let spec = temp_file("pipe_run.ms", "{table, [{{'$1', '$2', '_'}, [], [{{'$2', '$1'}}]}]}.");
    let input = temp_file("pipe_run.terms", terms(50_000));
    check(&["run", "--spec", &spec, "--input", &input]);
    check(&["run", "--spec", &spec, "--input", &input, "--all"]);
}

#[test]
fn test_batch() {
    let cases: String = (1..=20_000)
        .map(|n| format!("{{table, [{{{{'$1', '_'}}, [], ['$1']}}], {{{n}, x}}}}.\n"))
        .collect();
    check(&["test", "--batch", &temp_file("pipe_batch.terms", cases)]);
}

#[test]
fn dump() {
    let clauses: Vec<String> =
        (1..=3_000).map(|n| format!("{{{{{n}, '$1'}}, [{{is_atom, '$1'}}], ['$1']}}")).collect();
    check(&[
        "dump",
        &format!("@{}", temp_file("pipe_dump.ms", format!("[{}].", clauses.join(",\n")))),
    ]);
}
