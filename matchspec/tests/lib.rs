//! The integration tests of `matchspec`, one binary (see the style guide).
