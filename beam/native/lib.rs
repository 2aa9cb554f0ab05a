//! The NIF behind the `msc` OTP application (`beam/msc/src/*.erl`): match specs
//! compiled and run by msc, called from Erlang and Elixir.
//!
//! The Erlang modules are the API; this crate is their engine room:
//!
//! - `convert`: terms across the boundary, directly (no ETF round trip of
//!   whole terms), with explicit stacks.
//! - `spec`: `msc:compile/3`, `msc:test/3`, `msc:match_spec_run/2`.
//! - `tracer`: `msc_tracer`, an `erl_tracer` with sinks and overload policies.
//! - `table`: `msc_table`, resident tables (`msc::table`).
//! - `error`: compile errors as `[{error, Message, Where}]`.
//! - `release`: the VM's OTP release, whose answers every part gives.
//!
//! Every NIF runs inside rustler's panic guard: a panic becomes an Erlang
//! exception (`nif_panicked`), never a crashed VM, so the crate must build
//! with `panic = "unwind"` (the workspace's profiles do).

// The NIF API's symbols come from the VM that loads the library, so no test
// executable can link this code: a unit-test build (which `cargo test`
// makes when given a test name, despite `test = false`) is empty.
#![cfg(not(test))]

mod atoms;
mod convert;
mod error;
mod release;
mod spec;
mod table;
mod tracer;

rustler::init!("msc_tracer", load = release::load);
