//! Inputs that once made a fuzz target fail, replayed through the target's
//! own check.
//!
//! Each file in `testdata/regression/fuzz/` is named `<target>-<sha>.<ext>`
//! after the fuzz target that found it and the first hex digits of the
//! crash artifact's name. The checks are the targets' own, in
//! [`oracles`]. Every file must have a row in [`CASES`] naming the root
//! cause. The `differential` target's files are replayed by `jit.rs`, the
//! `runtime_ops` target's by `runtime.rs`.

use msc_testkit::replay;

/// Every saved input and the root cause of its failure.
const CASES: &[(&str, &str)] = &[
    // See: fuzz crash-cf85a657 (fun2ms).
    (
        "fun2ms-cf85a657.bin",
        "ms_transform writes any operator it cannot fold as {Op, A, B}, `--` too (ERTS then \
         rejects it), but the inverse (spec_to_fun) printed only the operators ERTS knows, \
         so {'--', i, 0.5} had no fun",
    ),
    (
        "parse_text-329d1ca8.bin",
        "{#Ref<a@b.9.\\0... read a byte at a time: the stream reader took the `.` after an \
         unclosed #Ref< (followed by a control character) as the term's end and reported a \
         bad dot, where the whole text makes one (malformed) #Ref<...> token; a `.` after an \
         unclosed #Pid<, #Port< or #Ref< now waits for its `>` or a line break",
    ),
    // Found by the fun2ms target's limits mode (testkit/src/limits.rs).
    (
        "fun2ms-9e58cae2.bin",
        "a head of maps nested deep: spec_to_fun ordered each map's pairs by their lowest \
         variable through head_vars, which ordered the maps inside the same way, recursing \
         on the thread's stack (an overflow) and walking each map again for every map \
         around it; the lowest variable is now found in one walk without ordering",
    ),
    (
        "fun2ms-b1363179.bin",
        "a body of unary minus nested 7,000 deep over a variable (and a 70,000-character \
         string in the head): 39 seconds under the fuzzer, as fun2ms tried to fold each \
         operator by evaluating all of the nest beneath it (the square of the depth); the \
         folder now remembers each subexpression's value or failure",
    ),
    (
        "fun2ms-limits01.bin",
        "fun([V]) when \"\" > 1 -> 'é' end gives {'>',[],1} (ms_transform folds an \
         operator on constants but not on a string literal); spec_to_fun wrote the operand \
         as [], which folds to true: it now writes \"\"",
    ),
    (
        "fun2ms-limits02.bin",
        "a fun whose body is a tuple nested 1,000 deep: spec_to_fun recursed on the thread's \
         stack and overflowed it (an abort, in a debug build); it now grows its stack as \
         the rest of fun2ms does",
    ),
    // See: fuzz crash-8027bb0f (parse_text).
    (
        "parse_text-8027bb0f.bin",
        "text read a term at a time (next_term_into) gave a missing-dot error whose message \
         named where the term before ends counting from the start of that term, not of the \
         text: the error's span was moved into the whole text, the location in its message \
         was not",
    ),
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
    // `jit.rs` and `runtime.rs` replay the `differential` and `runtime_ops`
    // targets' inputs.
    let targets =
        ["parse_text", "text_roundtrip", "etf_roundtrip", "etf_decode", "compile", "fun2ms"];
    let inputs = replay::saved_inputs(&targets, CASES);
    replay::replay_all(&inputs, |file, data| replay::run_target(replay::target_of(file), data));
}
