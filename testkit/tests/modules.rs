//! No import cycle between the top-level modules of any library crate
//! (ARCHITECTURE.md): read from the source, test modules left out.
//!
//! A module's imports are the `crate::name` paths its files write, doc
//! links included; a name
//! that is not a module is followed through the crate root's `pub use
//! module::{...}` re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &[
    "matchspec/src",
    "jit/src",
    "msc/src",
    "runtime/src",
    "world/src",
    "testkit/src",
    "cli/src",
    "beam/native",
];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            rust_files(&path, out);
        }
    }
}

/// The code and documentation of a file outside its test module (plain
/// comments left out): a doc link is an import too, for the reader.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let plain_comment = |l: &&str| {
        let l = l.trim_start();
        l.starts_with("//") && !l.starts_with("///") && !l.starts_with("//!")
    };
    text.lines().filter(|l| !plain_comment(l)).collect::<Vec<_>>().join("\n")
}

/// The identifiers each `crate::` path of `code` starts with (every name
/// of a `crate::{a, b::c}` group).
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String =
                    item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                names.push(name);
            }
        } else {
            names.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
        }
    }
    names
}

/// The top-level modules of the crate at `src` and the modules each imports.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).find(|p| p.exists());
    let root = std::fs::read_to_string(root.expect("a crate root")).expect("readable root");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("src").flatten() {
        let path = entry.path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if name == "lib" || name == "main" || name == "test_support" {
            continue;
        }
        if path.is_dir()
            && !path.join("mod.rs").exists()
            && !src.join(format!("{name}.rs")).exists()
        {
            continue;
        }
        modules.entry(name).or_insert_with(Vec::new).push(path);
    }
    // `pub use module::{Name, ...};` and `pub use module::Name;` at the root.
    let mut reexported = BTreeMap::new();
    for line in code(&root).split(';') {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let module: String =
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let tail = &rest[module.len()..];
        for name in
            tail.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|n| !n.is_empty())
        {
            reexported.insert(name.to_string(), module.clone());
        }
    }
    let mut graph = BTreeMap::new();
    for (name, paths) in &modules {
        let mut files = Vec::new();
        paths.iter().for_each(|p| rust_files(p, &mut files));
        let mut imports = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for first in crate_paths(&code(&text)) {
                let target = if modules.contains_key(&first) {
                    Some(&first)
                } else {
                    reexported.get(&first)
                };
                if let Some(target) = target.filter(|t| *t != name && modules.contains_key(*t)) {
                    imports.insert(target.clone());
                }
            }
        }
        graph.insert(name.clone(), imports);
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'g>(
        node: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            return Some(
                path[at..].iter().map(|n| n.to_string()).chain([node.to_string()]).collect(),
            );
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_import_one_way() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cycles = Vec::new();
    for krate in CRATES {
        let graph = module_graph(&workspace.join(krate));
        assert!(graph.len() > 1, "{krate}: no modules found");
        if let Some(cycle) = cycle(&graph) {
            cycles.push(format!("{krate}: {}", cycle.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn a_cycle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert_eq!(cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    assert_eq!(crate_paths("use crate::{x::Y, z};\nlet q = crate::w::f();"), ["x", "z", "w"]);
}
