//! Control: the `trace` module's commands (`trace:function/4`,
//! `trace:process/4`, `trace:port/4`, `trace:info/3`, `on_load` patterns),
//! which stage changes and commit them as one new generation.
//!
//! **Rule:** control names the model and the core, never the hit path:
//! commands change settings, trace points read them.

pub mod commands;
pub mod info;
mod modules;
pub mod on_load;
pub mod pattern;
pub mod query;
mod system;
