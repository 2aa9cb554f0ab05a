//! Inputs that once made a fuzz target fail, replayed through the target's
//! own check.
//!
//! Each file in `testdata/regression/fuzz/` is named `<target>-<sha>.<ext>`
//! after the fuzz target that found it and the first hex digits of the
//! crash artifact's name. The checks are `fuzz/src/lib.rs` itself, included
//! here as a module, so a replay checks exactly what the target checked.
//! Every file must have a row in [`CASES`] naming the root cause. The
//! `differential` target's files are replayed by `jit/tests/regression.rs`.

#[allow(dead_code, reason = "the fuzz targets use some items the tests do not")]
#[path = "../../fuzz/src/lib.rs"]
mod oracles;

use std::path::Path;

/// Every saved input and the root cause of its failure.
const CASES: &[(&str, &str)] = &[
    // See: fuzz crash-a160c5c0 (text_roundtrip).
    (
        "text_roundtrip-a160c5c0.bin",
        "a port of node 'it\\'s' printed as #Port<'it\\'s'.0.0>, which did not parse: the \
         node name of #Pid/#Port/#Ref ended at the first quote even when escaped, and the \
         lexer ended the literal at the first `>` even inside the quoted name",
    ),
    // See: fuzz crash-908a47b2 (etf_decode).
    (
        "etf_decode-908a47b2.bin",
        "the same: a decoded port whose node name holds `'` printed as text that did not \
         parse back",
    ),
    // See: fuzz crash-2a55413b (etf_roundtrip).
    (
        "etf_roundtrip-2a55413b.bin",
        "the port #Port<0.9223372036854775807> (which the text syntax can write) encoded \
         to V4_PORT_EXT bytes that decode rejects, as OTP does, since a port of this node \
         has at most 60 bits; encode now refuses this node's pids, ports and references \
         whose numbers ERTS never gives (EncodeError::BadLocalIdentifier)",
    ),
];

#[test]
fn fuzz_crashes_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/regression/fuzz");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    // The `differential` target's inputs need the JIT, which this crate's
    // tests cannot use: `jit/tests/regression.rs` replays them.
    files.retain(|f| !f.starts_with("differential-"));
    files.sort();
    for file in &files {
        assert!(
            CASES.iter().any(|(name, _)| name == file),
            "{file} has no row in CASES naming its root cause"
        );
        let data = std::fs::read(dir.join(file)).expect("read regression input");
        let target = file.split_once('-').map_or(file.as_str(), |(target, _)| target);
        let check: fn(&[u8]) -> bool = match target {
            "parse_text" => oracles::parse_text,
            "text_roundtrip" => oracles::text_roundtrip,
            "etf_roundtrip" => oracles::etf_roundtrip,
            "etf_decode" => oracles::etf_decode,
            "compile" => oracles::compile,
            _ => panic!("{file}: unknown fuzz target {target}"),
        };
        check(&data);
    }
    for (name, _) in CASES {
        assert!(files.iter().any(|f| f == name), "{name} is in CASES but not on disk");
    }
}
