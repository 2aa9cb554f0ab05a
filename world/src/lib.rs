//! A simulated Erlang world over the trace core of `matchspec-runtime`.
//!
//! The trace core is a library a host embeds; this crate is one such
//! host, made for tests and tools rather than for users: processes with
//! mailboxes and link trees, nodes, ports and their tasks, driven by the
//! scenario files of `msc trace` ([`scenario`], format in
//! `docs/scenarios.md`), and the workloads the trace benchmarks time
//! ([`workload`]). Its output is what OTP 27 prints for the same scenario;
//! `tests/scenarios.rs` checks that against the golden files of
//! `testdata/trace/`.
//!
//! It stays out of the library so the library has no simulator in it and
//! prints nothing: this crate is where trace messages become text.

#![forbid(unsafe_code)]

pub mod scenario;
pub mod workload;
