//! Integration tests of the trace core (one test binary).
