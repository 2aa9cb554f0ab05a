//! The hit path: what a host reports (calls, returns, messages, links,
//! scheduling, ports) and the trace events that follow, decided from the
//! active generation without locks.
//!
//! **Rule:** the hit path names the model and the core, never control: a
//! trace point does not run commands.

pub(crate) mod accounting;
pub(crate) mod bp_cache;
pub(crate) mod frames;
pub(crate) mod host;
pub mod host_stack;
pub mod links;
pub mod messages;
pub mod ports;
pub mod process;
pub(crate) mod procs;
pub mod scheduling;
mod spawn;
mod system_monitor;
