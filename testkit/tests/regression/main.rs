//! Inputs that once made a fuzz target fail, replayed through the target's
//! own check (one test binary): each file of `testdata/regression/fuzz/` is
//! named `<target>-<sha>.<ext>` after the target that found it and must
//! have a row naming its root cause in the `CASES` of the module that
//! replays its target. `corpus.rs` replays the committed corpora.

mod corpus;
mod jit;
mod matchspec;
mod runtime;
