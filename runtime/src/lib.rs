//! The trace core (not built yet: see issues 5 and 6).
#![forbid(unsafe_code)]
