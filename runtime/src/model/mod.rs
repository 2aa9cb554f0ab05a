//! The model: what the core knows, as data. Ids, flags, clocks, sessions,
//! breakpoints and their counters, the per-process tracer links and
//! sequential trace state, tracers and what a pattern says.
//!
//! **Rule:** the model never names the core, the hit path or control; it
//! is read and changed by them (`tests/layers.rs` checks every rule).

pub mod breakpoint;
pub mod clock;
pub mod console;
pub mod counters;
pub mod error;
pub mod flags;
pub mod ids;
pub mod pattern;
pub mod seq_trace;
pub mod session;
pub mod system_monitor;
pub mod trace_spec;
pub mod tracee;
pub mod tracer;
