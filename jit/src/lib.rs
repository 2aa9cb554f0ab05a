//! The Cranelift JIT for match-spec programs (not built yet: see issue 4).
