//! Temporary profiling driver.
use matchspec_jit::Engine;
use matchspec_runtime::workload::{TraceCase, TraceWorkload};
fn main() {
    let case = match std::env::args().nth(1).as_deref() {
        Some("untraced") => TraceCase::Untraced,
        Some("rejected") => TraceCase::Rejected,
        _ => TraceCase::Emitted,
    };
    let engine = if std::env::args().nth(2).as_deref() == Some("jit") {
        Engine::Jit
    } else {
        Engine::Interp
    };
    let mut w = TraceWorkload::new(case, engine);
    w.run(1000);
    let n = 100_000;
    w.run(n);
}
