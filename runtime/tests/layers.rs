//! The layers' rules (ARCHITECTURE.md), checked on the source: which
//! layers each layer's code may name. Test modules are exempt (a model
//! test may build a core to drive what it tests).

use std::path::{Path, PathBuf};

/// Each layer and the layers its code must never name.
const RULES: &[(&str, &[&str])] = &[
    ("model", &["core", "hit", "control"]),
    ("core", &["hit", "control"]),
    ("hit", &["control"]),
    ("control", &["hit"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of `text` outside its test module.
fn non_test_code(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text)
}

/// Where `code` names `crate::<layer>` (a path or a doc link), as lines.
fn mentions(code: &str, layer: &str) -> Vec<String> {
    let needle = format!("crate::{layer}::");
    let braced = format!("crate::{{{layer}");
    code.lines()
        .filter(|line| line.contains(&needle) || line.contains(&braced))
        .map(str::trim)
        .map(String::from)
        .collect()
}

#[test]
fn no_layer_names_a_layer_it_must_not() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    for (layer, forbidden) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no layer {layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for other in *forbidden {
                for line in mentions(non_test_code(&text), other) {
                    broken.push(format!("{}: {layer} names {other}: {line}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "layer rules broken:\n{}", broken.join("\n"));
}
