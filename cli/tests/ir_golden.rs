//! Golden tests of `msc dump`: every `testdata/ir/NAME.ms` compiles to the
//! program text in `NAME.ir`. Run with `MSC_BLESS=1` to rewrite the `.ir`
//! files from what `msc dump` prints now (see `testdata/ir/README.md`).

use std::path::{Path, PathBuf};

use crate::{msc, testdata};

#[test]
fn dumps_match_the_goldens() {
    let dir = PathBuf::from(testdata("ir"));
    let bless = std::env::var_os("MSC_BLESS").is_some_and(|v| v != "0");
    let mut specs: Vec<PathBuf> = files(&dir, "ms");
    specs.sort();
    assert!(specs.len() >= 12, "the goldens are missing from {}", dir.display());

    let mut failures = Vec::new();
    for spec in &specs {
        let golden = spec.with_extension("ir");
        let run = msc(&["dump", &format!("@{}", spec.display())]);
        if run.status.code() != Some(0) {
            failures.push(format!("{}: msc dump failed:\n{}", name(spec), run.stderr));
            continue;
        }
        let got = run.out();
        if bless {
            std::fs::write(&golden, &got).expect("the golden can be written");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == got => {}
            Ok(expected) => failures.push(format!(
                "{}: the dump differs from {}\n{}",
                name(spec),
                name(&golden),
                diff(&expected, &got)
            )),
            Err(err) => failures.push(format!("{}: {err}", name(&golden))),
        }
    }
    // A golden without its spec is a leftover from a rename.
    for golden in files(&dir, "ir") {
        if !golden.with_extension("ms").exists() {
            failures.push(format!(
                "{}: no {} beside it",
                name(&golden),
                name(&golden.with_extension("ms"))
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) with the {} IR goldens (MSC_BLESS=1 rewrites them; review the diff):\n\n{}",
        failures.len(),
        specs.len(),
        failures.join("\n\n")
    );
}

/// The files of `dir` named `*.ext`.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect()
}

fn name(path: &Path) -> String {
    path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The lines that differ, `-` expected and `+` got, with line numbers.
fn diff(expected: &str, got: &str) -> String {
    let (expected, got): (Vec<&str>, Vec<&str>) =
        (expected.lines().collect(), got.lines().collect());
    let mut out = String::new();
    for i in 0..expected.len().max(got.len()) {
        match (expected.get(i), got.get(i)) {
            (Some(e), Some(g)) if e == g => {}
            (e, g) => {
                if let Some(e) = e {
                    out.push_str(&format!("{:>4} - {e}\n", i + 1));
                }
                if let Some(g) = g {
                    out.push_str(&format!("{:>4} + {g}\n", i + 1));
                }
            }
        }
    }
    out
}
