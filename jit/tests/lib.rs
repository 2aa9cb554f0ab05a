//! The integration tests of `matchspec-jit`, in one binary.

mod batch;
mod corpus;
mod memory;
mod ops;
mod panics;
mod regression;
