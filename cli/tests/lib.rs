//! The integration tests of `msc`, in one binary: the built `msc` run as a
//! user runs it, with `std::process::Command`. `cmd/` mirrors
//! `src/cmd/`, one file per subcommand; `ir_golden` checks `msc dump`
//! against `testdata/ir/`.

mod broken_pipe;
mod cmd;
mod exit_codes;
mod ir_golden;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

/// What one run of `msc` gave.
#[derive(Debug)]
pub(crate) struct Run {
    /// How it ended.
    pub(crate) status: ExitStatus,
    /// Standard output, as bytes (`msc etf encode` writes binary).
    pub(crate) stdout: Vec<u8>,
    /// Standard error.
    pub(crate) stderr: String,
}

impl Run {
    /// Standard output as text.
    pub(crate) fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Asserts exit code `code` and no panic; returns `self` for more checks.
    #[track_caller]
    pub(crate) fn code(self, code: i32) -> Run {
        assert_eq!(
            self.status.code(),
            Some(code),
            "exit status {:?}, expected {code}\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.out(),
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "msc panicked:\n{}", self.stderr);
        self
    }

    /// Asserts success; returns `self`.
    #[track_caller]
    pub(crate) fn ok(self) -> Run {
        self.code(0)
    }
}

/// The `msc` binary, ready for arguments.
pub(crate) fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_msc"));
    command.args(args);
    command
}

/// Runs `msc` with `args` and an empty standard input.
#[track_caller]
pub(crate) fn msc(args: &[&str]) -> Run {
    msc_with_stdin(args, b"")
}

/// Runs `msc` with `args`, feeding `stdin` to it.
#[track_caller]
pub(crate) fn msc_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("msc starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // Write from another thread so that a large input cannot deadlock
    // against a large output. `msc` may stop reading early; that is fine.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("msc runs");
    writer.join().expect("the stdin writer does not panic");
    Run {
        status: output.status,
        stdout: output.stdout,
        stderr: String::from_utf8(output.stderr).expect("msc writes UTF-8 to stderr"),
    }
}

/// The path of `rel` in the workspace's `testdata/`.
pub(crate) fn testdata(rel: &str) -> String {
    format!("{}/../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Writes `contents` to a scratch file called `name` (unique per test) and
/// returns its path.
pub(crate) fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("msc-cli");
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("the scratch file can be written");
    path.to_str().expect("the scratch path is UTF-8").to_owned()
}

/// Checks an error rendered with a caret:
///
/// ```text
/// error: MESSAGE
///  --> LINE:COLUMN
///   |
/// 2 |   [{'_',[],[{message,1}]}]
///   |             ^^^^^^^^^^^
/// ```
///
/// The location must be `line:column`, and the first `^` must sit under
/// column `column` of the quoted line, where the text reads `at`.
#[track_caller]
pub(crate) fn assert_caret(rendered: &str, message: &str, line: u32, column: u32, at: &str) {
    let lines: Vec<&str> = rendered.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with(&format!("error: {message}"))) else {
        panic!("no `error: {message}` in\n{rendered}");
    };
    let gutter = line.to_string();
    let pad = " ".repeat(gutter.len());
    let [_, arrow, bar, source, carets, ..] = &lines[start..] else {
        panic!("the error is cut short:\n{rendered}");
    };
    assert_eq!(*arrow, format!("{pad}--> {line}:{column}"), "location in\n{rendered}");
    assert_eq!(*bar, format!("{pad} |"), "in\n{rendered}");
    let source = source
        .strip_prefix(&format!("{gutter} | "))
        .unwrap_or_else(|| panic!("no line {line} quoted in\n{rendered}"));
    let carets = carets
        .strip_prefix(&format!("{pad} | "))
        .unwrap_or_else(|| panic!("no caret line in\n{rendered}"));
    let column = column as usize - 1;
    assert_eq!(
        carets.chars().position(|c| c == '^'),
        Some(column),
        "the caret is not under column {}:\n{rendered}",
        column + 1
    );
    assert!(carets.chars().all(|c| c == ' ' || c == '^'), "stray text in the caret line");
    let pointed: String = source.chars().skip(column).collect();
    assert!(pointed.starts_with(at), "the caret points at `{pointed}`, not `{at}`:\n{rendered}");
    let width = carets.chars().filter(|&c| c == '^').count();
    assert!(width >= 1 && width <= pointed.chars().count(), "caret width {width}:\n{rendered}");
}
