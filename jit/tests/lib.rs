//! The integration tests of `matchspec-jit`, in one binary.

mod memory;
mod ops;
mod panics;
mod wire;
