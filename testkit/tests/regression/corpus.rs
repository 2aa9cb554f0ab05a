//! Each fuzz target's committed corpus (`testdata/regression/corpus/`),
//! replayed: every input must still pass its target's check and still
//! reach the oracle. A target whose corpus is missing fails the test.

use msc_testkit::replay;

/// The fewest inputs a target's committed corpus may hold.
const AT_LEAST: usize = 50;

#[test]
fn committed_corpora_pass_and_reach_their_oracles() {
    let mut small = Vec::new();
    for &target in replay::TARGETS {
        // Named `target/file`, so that a failure says whose input it is.
        let inputs: Vec<(String, Vec<u8>)> = replay::corpus_inputs(target)
            .into_iter()
            .map(|(file, data)| (format!("{target}/{file}"), data))
            .collect();
        if inputs.len() < AT_LEAST {
            small.push(format!("{target}: {} inputs", inputs.len()));
        }
        replay::replay_all(&inputs, |_, data| replay::run_target(target, data));
    }
    assert!(small.is_empty(), "corpora missing or under {AT_LEAST} inputs: {small:?}");
}
