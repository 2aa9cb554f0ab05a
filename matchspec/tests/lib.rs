//! The integration tests of `matchspec`, in one binary (see ARCHITECTURE.md).

mod bif;
mod corpus_roundtrip;
mod deep;
mod etf;
mod fun2ms;
mod fun2ms_roundtrip;
mod host;
mod interp;
mod quirks;
mod releases;
mod text_stream;
