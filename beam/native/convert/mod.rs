//! Terms across the NIF boundary, converted directly (no ETF round trip of
//! the whole term).
//!
//! [`import`] copies a BEAM term into an msc [`Heap`]; [`export`] builds a
//! BEAM term from an msc term. Numbers, atoms, tuples, lists, maps and
//! binaries are read and built through the NIF API, cell by cell. The kinds
//! the NIF API cannot take apart or build from parts (bignums, bitstrings,
//! pids, ports, references, funs, atoms outside ASCII) cross as the
//! external term format of that one subterm, which keeps each of them
//! exactly: a pid comes back as the same pid.
//!
//! Both walk with explicit stacks, so a list or tuple nested a million
//! levels deep converts without growing the call stack.

mod atoms;
mod export;
mod import;

pub use export::{ExportError, Exported, Exporter, export};
pub use import::{ImportError, import};
