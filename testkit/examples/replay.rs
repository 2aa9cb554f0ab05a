//! Runs fuzz inputs through their target's check and prints how long
//! each took and whether it reached the oracle.
//!
//! `cargo run -p msc-testkit --example replay -- TARGET FILE...`

use std::process::ExitCode;
use std::time::Instant;

use msc_testkit::replay;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((target, files)) = args.split_first() else {
        eprintln!("usage: replay TARGET FILE...");
        return ExitCode::FAILURE;
    };
    if !replay::TARGETS.contains(&target.as_str()) {
        eprintln!("no fuzz target {target}; the targets: {}", replay::TARGETS.join(", "));
        return ExitCode::FAILURE;
    }
    for file in files {
        let data = match std::fs::read(file) {
            Ok(data) => data,
            Err(e) => {
                eprintln!("read {file}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let start = Instant::now();
        let reached = replay::run_target(target, &data);
        let took = start.elapsed();
        println!("{file}: {} bytes, {took:.2?}, oracle reached: {reached}", data.len());
    }
    ExitCode::SUCCESS
}
