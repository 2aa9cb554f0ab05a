//! The saved inputs of the fuzz targets, for the regression tests
//! (`tests/regression/`).
//!
//! Each file in `testdata/regression/fuzz/` is named `<target>-<sha>.<ext>`
//! after the fuzz target that found it; each test replays the files of its
//! targets, and each of them must have a row in the test's `CASES` naming
//! its root cause. `testdata/regression/corpus/<target>/` holds each
//! target's minimised corpus from fuzzing: the inputs that reached the most
//! of the code, replayed so that `cargo test` runs what fuzzing found.

use std::path::Path;

use crate::testdata;

/// Every fuzz target, by name.
pub const TARGETS: &[&str] = &[
    "parse_text",
    "text_roundtrip",
    "etf_roundtrip",
    "etf_decode",
    "compile",
    "differential",
    "runtime_ops",
    "fun2ms",
    "stream_run",
];

/// Runs the check of the fuzz target `target` on `data`: whether the input
/// reached the oracle (`false`: the target rejects it, as too long or not
/// making a case). Panics when the check fails, or for an unknown target.
pub fn run_target(target: &str, data: &[u8]) -> bool {
    use crate::{differential, oracles, runtime_ops, stream_run};
    match target {
        "parse_text" => oracles::parse_text(data),
        "text_roundtrip" => oracles::text_roundtrip(data),
        "etf_roundtrip" => oracles::etf_roundtrip(data),
        "etf_decode" => oracles::etf_decode(data),
        "compile" => oracles::compile(data),
        "differential" => differential::differential(data),
        "runtime_ops" => runtime_ops::runtime_ops(data),
        "fun2ms" => oracles::fun2ms(data),
        "stream_run" => stream_run::stream_run(data),
        other => panic!("no fuzz target {other}"),
    }
}

/// The committed corpus of `target` (file name and bytes, in name order),
/// from `testdata/regression/corpus/<target>/`; empty if it has none.
pub fn corpus_inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = testdata("regression/corpus").join(target);
    read_dir_sorted(&dir)
}

fn read_dir_sorted(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<String> = entries
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let data = std::fs::read(dir.join(&file)).expect("read corpus input");
            (file, data)
        })
        .collect()
}

/// The saved inputs of the targets `targets` names (file name and bytes,
/// in name order), from `testdata/regression/fuzz/`. Panics unless every
/// such file has a row in `cases` and every row of `cases` is on disk.
pub fn saved_inputs(targets: &[&str], cases: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    let dir = testdata("regression/fuzz");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .filter(|name| targets.contains(&target_of(name)))
        .collect();
    files.sort();
    for file in &files {
        assert!(
            cases.iter().any(|(name, _)| name == file),
            "{file} has no row in CASES naming its root cause"
        );
    }
    for (name, _) in cases {
        assert!(files.iter().any(|f| f == name), "{name} is in CASES but not on disk");
    }
    files
        .into_iter()
        .map(|file| {
            let data = std::fs::read(dir.join(&file)).expect("read regression input");
            (file, data)
        })
        .collect()
}

/// The fuzz target a saved input's file name names.
pub fn target_of(file: &str) -> &str {
    file.split_once('-').map_or(file, |(target, _)| target)
}

/// Runs `check` on every input (its file name and bytes), and fails naming
/// each input it panics on, and each it no longer reaches the oracle with
/// (`check` answers `false`: the target would reject the input, so it
/// would test nothing).
pub fn replay_all(inputs: &[(String, Vec<u8>)], check: impl Fn(&str, &[u8]) -> bool) {
    let mut failed: Vec<&str> = Vec::new();
    let mut unused: Vec<&str> = Vec::new();
    for (file, data) in inputs {
        let run = std::panic::AssertUnwindSafe(|| check(file, data));
        match std::panic::catch_unwind(run) {
            Ok(true) => {}
            Ok(false) => unused.push(file),
            Err(_) => failed.push(file),
        }
    }
    assert!(failed.is_empty(), "these inputs fail again (see above): {failed:?}");
    assert!(unused.is_empty(), "these inputs no longer reach their oracle: {unused:?}");
}
