//! Machine code is freed with its program, and huge specs compile in
//! bounded time and memory (or are refused as too large), with the
//! interpreter's answers.
//!
//! The leak check measures the whole process (resident memory and the
//! number of memory mappings), so it runs in a process of its own: the
//! other tests of this binary run in parallel threads and allocate.
//! Resident memory is the sharp test: a program leaked (`mem::forget`)
//! keeps about 10 KiB, so 8,000 leaked programs grow it by 78 MiB where the
//! bound is 4. The mapping count catches code regions left behind that the
//! kernel cannot merge with their neighbours (it merges adjacent anonymous
//! mappings of the same protection, so leaked code often adds none).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use matchspec::spec::Kind;
use matchspec::term::Term;
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use matchspec_jit::{JitError, JitProgram};

/// Specs of different shapes, so the programs' code sizes vary.
const SPECS: &[&str] = &[
    "[{{'$1', '$2', ok}, [{'>', '$2', 100}], ['$1']}]",
    "[{{'$1', '$2', '$3'}, [{is_atom, '$1'}, {is_integer, '$2'}, \
      {'andalso', {'>=', '$2', 10}, {'=<', '$2', 190}}], [{{'$1', '$2'}}]}]",
    "[{{'$1', '$2', '$3'}, [], [{{'$3', '$2', '$1', ['$1', '$2'], '$_'}}]}]",
    "[{{'$1', '$2'}, [{'<', {'*', '$1', 3}, {'+', '$2', 100}}], \
      [{'-', {'*', '$2', 2}, {'div', '$1', 7}}]}]",
    "[{{a, {b, '$1', [c | '$2']}, '_'}, [{is_list, '$2'}], ['$2']}, \
      {{a, {b, '$1', '_'}, #{k => '$3'}}, [{is_integer, '$3'}], [{{'$1', '$3'}}]}]",
];

/// Resident memory in bytes (`/proc/self/statm`, in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("rss");
    pages * page_size()
}

/// The page size, from `/proc/self/smaps` (4 KiB if it does not say).
fn page_size() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("KernelPageSize:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(4096)
}

/// The peak resident memory of this process so far (`VmHWM`), in KiB.
fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The number of memory mappings of this process.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps").lines().count()
}

/// Compiles, runs once and drops `count` programs, cycling through `specs`.
fn churn(specs: &[CompiledSpec], count: usize) {
    let input = Term::parse("{user_7, 150, ok}").expect("input");
    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    for i in 0..count {
        let spec = &specs[i % specs.len()];
        let jit = JitProgram::compile(spec).expect("compiles");
        let outcome = jit.run(input.as_ref(), &mut scratch, &mut host).expect("runs");
        std::hint::black_box(&outcome);
    }
}

/// Programs compiled and dropped after the warm-up: enough that leaking a
/// page of code (or 200 bytes) per program shows, few enough for a debug
/// build.
const PROGRAMS: usize = if cfg!(debug_assertions) { 8_000 } else { 20_000 };

/// Resident memory may grow this much over the loop (allocator slack).
const RSS_SLACK: u64 = 4 << 20;

/// Set in the child process that measures.
const CHILD: &str = "MSC_LEAK_CHECK_CHILD";

#[test]
fn dropped_programs_free_their_memory() {
    if !Path::new("/proc/self/statm").exists() {
        eprintln!("skipped: no /proc/self/statm");
        return;
    }
    if std::env::var_os(CHILD).is_some() {
        return leak_check();
    }
    // Run this same test again, alone, in a process of its own.
    let exe = std::env::current_exe().expect("the test binary");
    let output = Command::new(exe)
        .args([
            "memory::dropped_programs_free_their_memory",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(output.status.success(), "the leak check failed");
    assert!(stdout.contains("programs compiled and dropped"), "the leak check did not run");
}

/// The measurement, in the child process.
fn leak_check() {
    let specs: Vec<CompiledSpec> = SPECS
        .iter()
        .map(|s| CompiledSpec::compile(s, Kind::Table, &Config::default()).expect("compiles"))
        .collect();
    // Warm up: the ISA, the allocator's pools, the test harness's buffers.
    churn(&specs, PROGRAMS / 10);
    let (rss_before, maps_before) = (resident_bytes(), mappings());
    let start = Instant::now();
    churn(&specs, PROGRAMS);
    let elapsed = start.elapsed();
    let (rss_after, maps_after) = (resident_bytes(), mappings());
    println!(
        "{PROGRAMS} programs compiled and dropped in {elapsed:.2?} ({:.0} µs each): \
         resident {} KiB -> {} KiB, mappings {maps_before} -> {maps_after}",
        elapsed.as_secs_f64() * 1e6 / PROGRAMS as f64,
        rss_before >> 10,
        rss_after >> 10,
    );
    assert!(
        rss_after <= rss_before + RSS_SLACK,
        "resident memory grew by {} KiB over {PROGRAMS} programs",
        (rss_after - rss_before) >> 10
    );
    assert!(
        maps_after <= maps_before,
        "mappings grew from {maps_before} to {maps_after} over {PROGRAMS} programs"
    );
}

/// The JIT's answer for `input` (or `None` if it refused the spec as too
/// large) and the interpreter's, as text.
fn both(spec: &CompiledSpec, jit: Option<&JitProgram>, input: &str) -> (Option<String>, String) {
    let show = |outcome: Outcome<'_>| match outcome.result() {
        Some(result) => result.to_string(),
        None => "nomatch".to_owned(),
    };
    let input = Term::parse(input).expect("input");
    let mut scratch = Scratch::new();
    let mut host = TestHost::default();
    let got = jit
        .map(|jit| show(jit.run(input.as_ref(), &mut scratch, &mut host).expect("the JIT runs")));
    let expected = show(spec.run(input.as_ref(), &mut scratch, &mut host).expect("interprets"));
    (got, expected)
}

/// Compiles `text` with the JIT (timing it), checks it against the
/// interpreter on `inputs`, and returns the interpreter's answers.
fn huge(name: &str, text: &str, inputs: &[&str]) -> Vec<String> {
    let spec = CompiledSpec::compile(text, Kind::Table, &Config::default()).expect("compiles");
    let ops = spec.program().code().len();
    let start = Instant::now();
    let compiled = JitProgram::compile(&spec);
    let elapsed = start.elapsed();
    let jit = match compiled {
        Ok(jit) => {
            eprintln!(
                "{name}: {} bytes of spec, {ops} ops: compiled in {elapsed:.2?} \
                 (peak resident so far {} MiB)",
                text.len(),
                peak_resident_kib().unwrap_or(0) >> 10
            );
            Some(jit)
        }
        Err(err @ JitError::TooLarge { .. }) => {
            eprintln!("{name}: {ops} ops: refused in {elapsed:.2?}: {err}");
            None
        }
        Err(err) => panic!("{name}: the JIT failed: {err}"),
    };
    inputs
        .iter()
        .map(|input| {
            let (got, expected) = both(&spec, jit.as_ref(), input);
            if let Some(got) = got {
                assert_eq!(got, expected, "{name} on {input}");
            }
            expected
        })
        .collect()
}

/// 5,000 clauses `{{'$1', N}, [{'>', '$1', N}], [{{N, '$1'}}]}`.
fn many_clauses(n: usize) -> String {
    let clauses: Vec<String> = (0..n)
        .map(|i| format!("{{{{'$1', {i}}}, [{{'>', '$1', {i}}}], [{{{{{i}, '$1'}}}}]}}"))
        .collect();
    format!("[{}]", clauses.join(", "))
}

/// `'$1' == 0 orelse ('$1' == 1 orelse (...))`, `n` comparisons nested.
fn orelse_chain(n: usize) -> String {
    let mut guard = format!("{{'==', '$1', {}}}", n - 1);
    for i in (0..n - 1).rev() {
        guard = format!("{{'orelse', {{'==', '$1', {i}}}, {guard}}}");
    }
    guard
}

/// `{'orelse', '$1' == 0, ..., '$1' == n - 1}`, one call of `n` arguments.
fn orelse_flat(n: usize) -> String {
    let tests: Vec<String> = (0..n).map(|i| format!("{{'==', '$1', {i}}}")).collect();
    format!("{{'orelse', {}}}", tests.join(", "))
}

/// A body tuple of `n` elements: `'$1'`, `'$2' + i` and constants in turn.
fn wide_tuple(n: usize) -> String {
    let elements: Vec<String> = (0..n)
        .map(|i| match i % 3 {
            0 => "'$1'".to_owned(),
            1 => format!("{{'+', '$2', {i}}}"),
            _ => format!("{i}"),
        })
        .collect();
    format!("{{{{{}}}}}", elements.join(", "))
}

#[test]
fn a_spec_of_5000_clauses_compiles_and_agrees() {
    let answers = huge(
        "5000 clauses",
        &many_clauses(5000),
        &["{7000, 4999}", "{1, 2}", "{x, 0}", "{4999, 4998}", "{1, 5000}", "{1.5, 1}"],
    );
    assert_eq!(answers, ["{4999,7000}", "nomatch", "{0,x}", "{4998,4999}", "nomatch", "{1,1.5}"]);
}

/// `n` clauses `{{'$1', N}, [{'>', {'*', '$1', 2}, N}], [{{N, '$1'}}]}`:
/// each guard's product is computed by its comparison (`fuse.rs`).
fn many_fused_clauses(n: usize) -> String {
    let clauses: Vec<String> = (0..n)
        .map(|i| {
            format!("{{{{'$1', {i}}}, [{{'>', {{'*', '$1', 2}}, {i}}}], [{{{{{i}, '$1'}}}}]}}")
        })
        .collect();
    format!("[{}]", clauses.join(", "))
}

#[test]
fn a_spec_of_4000_fused_comparisons_compiles_and_agrees() {
    let big = "1180591620717411303424";
    let answers = huge(
        "4000 fused clauses",
        // Seven ops a clause: 4,000 stay below the JIT's limit of ops.
        &many_fused_clauses(4000),
        &[
            "{7000, 3999}",
            "{1, 2}",
            "{x, 0}",
            "{2.5, 4}",
            &format!("{{{big}, 17}}"),
            &format!("{{-{big}, 17}}"),
        ],
    );
    assert_eq!(
        answers,
        ["{3999,7000}", "nomatch", "nomatch", "{4,2.5}", &format!("{{17,{big}}}"), "nomatch"]
    );
}

#[test]
fn a_guard_of_3000_comparisons_compiles_and_agrees() {
    let inputs = ["{2999, a}", "{3000, b}", "{1.0, c}", "{foo, d}", "{0, e}"];
    let expected = ["a", "nomatch", "c", "nomatch", "e"];
    for (name, guard) in [("nested orelse", orelse_chain(3000)), ("flat orelse", orelse_flat(3000))]
    {
        let text = format!("[{{{{'$1', '$2'}}, [{guard}], ['$2']}}]");
        assert_eq!(huge(name, &text, &inputs), expected, "{name}");
    }
}

#[test]
fn a_body_tuple_of_2000_elements_compiles_and_agrees() {
    let text = format!("[{{{{'$1', '$2'}}, [], [{}]}}]", wide_tuple(2000));
    let answers =
        huge("2000-element body", &text, &["{a, 5}", "{a, foo}", "{[], 1152921504606846975}"]);
    // A failing element is `'EXIT'`, the others are still built.
    assert!(answers[0].starts_with("{a,6,2,a,9,5,a,12,8,"), "{:.60}", answers[0]);
    assert!(answers[1].starts_with("{a,'EXIT',2,a,'EXIT',5,"), "{:.60}", answers[1]);
    assert!(answers[2].starts_with("{[],1152921504606846976,2,"), "{:.60}", answers[2]);
}

#[test]
fn all_of_it_in_one_spec_compiles_and_agrees() {
    // 4,999 clauses, then one with the 3,000-comparison guard and the
    // 2,000-element body.
    let clauses = many_clauses(4999);
    let text = format!(
        "{}, {{{{'$1', '$2'}}, [{}], [{}]}}]",
        &clauses[..clauses.len() - 1],
        orelse_chain(3000),
        wide_tuple(2000)
    );
    let answers = huge("all in one", &text, &["{7000, 4998}", "{2999, 5000}", "{3000, 5000}"]);
    assert_eq!(answers[0], "{4998,7000}");
    assert!(answers[1].starts_with("{2999,5001,2,2999,5004,5,"), "{:.60}", answers[1]);
    assert_eq!(answers[2], "nomatch");
}
