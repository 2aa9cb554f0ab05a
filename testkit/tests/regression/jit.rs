//! Inputs that once made the `differential` fuzz target fail (the
//! interpreter and the JIT disagreeing, or either panicking), replayed
//! through the target's own check.
//!
//! Each `testdata/regression/fuzz/differential-<sha>.bin` is named after
//! the first hex digits of the crash artifact's name. The check is the
//! target's own, [`differential::differential`]. Every file must have a
//! row in [`CASES`] naming the root cause.

use msc_testkit::{differential, replay};

/// Every saved input and the root cause of its failure.
const CASES: &[(&str, &str)] = &[
    // See: fuzz crash-8b924fee (differential).
    (
        "differential-8b924fee.bin",
        "{table,[{{'_'},[],['$_']}],{}}: the JIT's is_tuple checked that the input held the \
         header and all `arity` elements before reading the header, so a boxed term shorter \
         than the tuple asked for (here `{}`, a lone header at the end of the input's heap) \
         ended the run as a malformed input (a panic) where the interpreter answers nomatch",
    ),
    // See: fuzz crash-f051c8a5 (differential, found by a run of the generator on random
    // bytes).
    (
        "differential-f051c8a5.bin",
        "{trace,[{'$0',[],[{message,{'<',{'or',1,'$0'},'$0'}}]}],[]}: in a body, `and`/`or` \
         loaded each operand after testing the one before, and a non-boolean leaves (as \
         'EXIT') for the next op; the loads were remembered for the ops after, which the \
         leaving path does not pass through, so the next op used a value that is not \
         defined on every path to it and Cranelift panicked while compiling (register \
         allocation: EntryLivein; with opt_level speed the egraph's \"elaborating effectful \
         instructions\")",
    ),
];

#[test]
fn differential_fuzz_crashes_stay_fixed() {
    let inputs = replay::saved_inputs(&["differential"], CASES);
    replay::replay_all(&inputs, |_, data| differential::differential(data));
}
