//! What the `msc` benchmarks share: where their data lives and how it loads.
//!
//! The benchmarks themselves are in `benches/` (run them with
//! `cargo bench -p msc-benches`; see the README beside this crate). The data
//! is in `testdata/` (copies of the team's shared data, refreshed by
//! `testdata/refresh-shared.sh`):
//!
//! * the text corpus the syntax benchmarks parse and print, found by
//!   [`corpus_path`];
//! * the engine workloads, one `NAME.ms` spec and one `NAME.terms` input
//!   stream each, found by [`workload_dir`] and loaded by [`workloads`].
//!
//! Both locations can be overridden with environment variables, and a
//! benchmark whose data is missing says so and skips rather than failing.
//!
//! [`native`] holds a hand-written Rust filter per workload, the `native`
//! entry the engines are measured against; the tests here check that each
//! gives the interpreter's answer on every input.

pub mod native;

use std::fmt;
use std::path::{Path, PathBuf};

use matchspec::spec::Kind;
use matchspec::syntax::{parse_term, parse_terms_into};
use matchspec::term::{Heap, Word};

/// The environment variable that names the syntax benchmarks' corpus.
pub const CORPUS_ENV: &str = "MSC_CORPUS";

/// The environment variable that names the directory of engine workloads.
pub const WORKLOADS_ENV: &str = "MSC_WORKLOADS";

/// The syntax benchmarks' corpus: `$MSC_CORPUS` if set, else the OTP 27
/// random conformance corpus in `testdata/conformance/`.
pub fn corpus_path() -> PathBuf {
    from_env_or(CORPUS_ENV, "../testdata/conformance/otp27-random-seed1.terms")
}

/// The directory of engine workloads: `$MSC_WORKLOADS` if set, else
/// `testdata/bench/`.
pub fn workload_dir() -> PathBuf {
    from_env_or(WORKLOADS_ENV, "../testdata/bench")
}

fn from_env_or(var: &str, relative: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(relative),
    }
}

/// Reads `path` as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|e| LoadError::new(path, e))
}

/// One engine workload: a spec and the inputs to run it on, as `msc bench`
/// reads them.
#[derive(Debug)]
pub struct Workload {
    /// The file stem the workload is named by (`arith` for `arith.ms`).
    pub name: String,
    /// The event kind: the one the spec file names, else `table`.
    pub kind: Kind,
    /// The match spec's text.
    pub spec: String,
    /// The heap holding every input.
    pub heap: Heap,
    /// The inputs' words in [`heap`](Self::heap), in file order.
    pub inputs: Vec<Word>,
}

impl Workload {
    /// Loads workload `name` from `dir`: the spec from `NAME.ms`, which
    /// holds either a match spec or `{Kind, MatchSpec}`, and the inputs from
    /// `NAME.terms`, a stream of `.`-terminated terms.
    pub fn load(dir: &Path, name: &str) -> Result<Workload, LoadError> {
        let spec_path = dir.join(format!("{name}.ms"));
        let (spec, kind) = spec_file(&spec_path)?;
        let input_path = dir.join(format!("{name}.terms"));
        let text = read_text(&input_path)?;
        let mut heap = Heap::new();
        let inputs =
            parse_terms_into(&text, &mut heap).map_err(|e| LoadError::new(&input_path, e))?;
        Ok(Workload { name: name.to_owned(), kind, spec, heap, inputs })
    }

    /// How many inputs (events) one pass runs.
    pub fn events(&self) -> u64 {
        self.inputs.len() as u64
    }
}

/// Every workload in `dir` (each `NAME.ms` with a `NAME.terms` beside it),
/// sorted by name.
pub fn workloads(dir: &Path) -> Result<Vec<Workload>, LoadError> {
    workload_names(dir)?.iter().map(|name| Workload::load(dir, name)).collect()
}

/// The names of the workloads in `dir`, sorted.
pub fn workload_names(dir: &Path) -> Result<Vec<String>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::new(dir, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| LoadError::new(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "ms")
            && path.with_extension("terms").is_file()
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Reads a spec file: a match spec, or `{Kind, MatchSpec}` (kind `table`
/// when the file names none).
fn spec_file(path: &Path) -> Result<(String, Kind), LoadError> {
    let text = read_text(path)?;
    let term = parse_term(&text).map_err(|e| LoadError::new(path, e))?;
    let named = term.as_ref().as_tuple().filter(|t| t.len() == 2).and_then(|t| {
        let kind = Kind::from_name(t.get(0)?.as_atom()?.name())?;
        Some((t.get(1)?.to_string(), kind))
    });
    Ok(named.unwrap_or((text, Kind::Table)))
}

/// Why benchmark data did not load: the file, and what went wrong.
#[derive(Debug)]
pub struct LoadError {
    path: PathBuf,
    reason: String,
}

impl LoadError {
    fn new(path: &Path, reason: impl fmt::Display) -> LoadError {
        LoadError { path: path.to_owned(), reason: reason.to_string() }
    }

    /// The file or directory that did not load.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for LoadError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("msc-benches-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn loads_a_workload_with_and_without_a_kind() {
        let dir = scratch_dir("load");
        std::fs::write(dir.join("named.ms"), "{trace, [{'_', [], [true]}]}.\n").unwrap();
        std::fs::write(dir.join("named.terms"), "[a].\n[b, 1].\n").unwrap();
        std::fs::write(dir.join("bare.ms"), "[{'$1', [], ['$1']}].\n").unwrap();
        std::fs::write(dir.join("bare.terms"), "{x, 1}.\n").unwrap();
        std::fs::write(dir.join("lonely.ms"), "[{'_', [], [true]}].\n").unwrap();

        let all = workloads(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<_> = all.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["bare", "named"]);

        assert_eq!(all[0].kind, Kind::Table);
        assert_eq!(all[0].spec, "[{'$1', [], ['$1']}].\n");
        assert_eq!(all[0].events(), 1);

        assert_eq!(all[1].kind, Kind::Call);
        assert_eq!(all[1].spec, "[{'_',[],[true]}]");
        assert_eq!(all[1].heap.view(all[1].inputs[1]).to_string(), "[b,1]");
    }

    #[test]
    fn a_missing_file_names_its_path() {
        let dir = scratch_dir("missing");
        let err = Workload::load(&dir, "nothing").unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(err.path(), dir.join("nothing.ms"));
    }

    #[test]
    fn shared_workload_specs_compile() {
        let dir = workload_dir();
        let Ok(names) = workload_names(&dir) else {
            eprintln!("skipped: no workloads at {}", dir.display());
            return;
        };
        for name in names {
            let (spec, kind) = spec_file(&dir.join(format!("{name}.ms"))).unwrap();
            let compiled = matchspec::CompiledSpec::compile(&spec, kind, &Default::default());
            assert!(compiled.is_ok(), "{name}: {:?}", compiled.err());
        }
    }
}
