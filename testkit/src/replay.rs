//! The saved inputs of the fuzz targets, for the regression tests
//! (`tests/regression/`).
//!
//! Each file in `testdata/regression/fuzz/` is named `<target>-<sha>.<ext>`
//! after the fuzz target that found it; each test replays the files of its
//! targets, and each of them must have a row in the test's `CASES` naming
//! its root cause.

use crate::testdata;

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
/// each input it panics on.
pub fn replay_all<R>(inputs: &[(String, Vec<u8>)], check: impl Fn(&str, &[u8]) -> R) {
    let failed: Vec<&str> = inputs
        .iter()
        .filter(|(file, data)| {
            let run = std::panic::AssertUnwindSafe(|| {
                check(file, data);
            });
            std::panic::catch_unwind(run).is_err()
        })
        .map(|(file, _)| file.as_str())
        .collect();
    assert!(failed.is_empty(), "these inputs fail again (see above): {failed:?}");
}
