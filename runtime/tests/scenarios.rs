//! Every scenario in `testdata/trace/` against its golden output, made by
//! real OTP 27 (`testdata/trace/otp/generate.sh`), on every engine, with
//! the stacks kept by the core and by the host.
//!
//! Output lines are compared as terms (timestamps masked), so printing
//! differences such as strings versus lists do not matter.

use std::path::{Path, PathBuf};

use matchspec_jit::Engine;
use matchspec_runtime::scenario::{Options, StackKeeper, compare, run};

/// Scenarios that need parts of the core that are not built yet, and what
/// they need. They must still fail: one that passes must leave this list.
const PENDING: &[(&str, &str)] = &[];

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace")
}

fn scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("testdata/trace")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "scenario"))
        .collect();
    files.sort();
    files
}

/// Runs one scenario; `None` if it matches its golden file, else a diff.
fn check(path: &Path, engine: Engine, stack: StackKeeper) -> Option<String> {
    let text = std::fs::read_to_string(path).expect("read scenario");
    let expected_path = path.with_extension("expected");
    let Ok(expected) = std::fs::read_to_string(&expected_path) else {
        return Some(format!("{}: no golden file", expected_path.display()));
    };
    let options = Options { engine, mask_timestamps: true, stack };
    let output = run(&text, &options).expect("scenario parses");
    let differences = compare(&output, &expected).expect("output and golden file parse");
    if differences.is_empty() {
        return None;
    }
    let mut diff = format!("{} ({engine:?}, {stack:?} keeps the stacks):\n", path.display());
    for d in differences {
        diff.push_str(&format!(
            "  line {}: got      {}\n          expected {}\n",
            d.line,
            d.got.as_deref().unwrap_or("(nothing)"),
            d.expected.as_deref().unwrap_or("(nothing)")
        ));
    }
    Some(diff)
}

#[test]
fn every_scenario_matches_otp() {
    let files = scenarios();
    assert!(files.len() >= 10, "the scenarios are missing");
    let mut failures = Vec::new();
    let ways = [Engine::Interp, Engine::Jit]
        .into_iter()
        .flat_map(|engine| [StackKeeper::Core, StackKeeper::Host].map(|stack| (engine, stack)));
    for (engine, stack) in ways {
        for path in &files {
            let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
            let pending = PENDING.iter().any(|(p, _)| *p == name);
            match check(path, engine, stack) {
                Some(diff) if !pending => failures.push(diff),
                None if pending => failures.push(format!("{name} passes: take it off PENDING")),
                Some(_) | None => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} scenario run(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
