//! The integration tests of `matchspec-jit`, in one binary.

mod corpus;
