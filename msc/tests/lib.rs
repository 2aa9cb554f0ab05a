//! The integration tests of `msc`, in one binary.

mod batch;
mod corpus;
mod dbg;
mod run_api;
mod stream;
mod table;
