//! Every scenario in `testdata/trace/` against its golden output, made by
//! real OTP (`testdata/trace/otp/generate.sh`), on every engine, with the
//! stacks kept by the core and by the host: for OTP 27 the golden files
//! next to the scenarios, for OTP 29 those in `testdata/trace/otp29/` (the
//! same scenarios, run with the core's release set to OTP 29).
//!
//! Output lines are compared as terms (timestamps masked), so printing
//! differences such as strings versus lists do not matter.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use msc::{Engine, Release};
use msc_world::scenario::{Golden, Options, StackKeeper, run};

/// Scenarios that need parts of the core that are not built yet, with the
/// release whose golden file they miss and what they need. They must still
/// fail: one that passes must leave this list.
const PENDING: &[(Release, &str, &str)] = &[];

/// Scenarios of `decided/` that OTP 27.3.4 crashes on and that have no
/// OTP 27 golden (none was decided by hand): only the goldens real OTP 29
/// made check them (testdata/trace/decided/README.md).
const NO_OTP27_GOLDEN: &[&str] = &["gc_sessions_off"];

fn trace_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace").join(sub)
}

/// Where `release`'s golden files of the scenarios in `trace_dir(sub)` are:
/// OTP 27's next to them, OTP 29's under `otp29/`.
fn golden_dir(release: Release, sub: &str) -> PathBuf {
    match release {
        Release::Otp27 => trace_dir(sub),
        Release::Otp29 => trace_dir("otp29").join(sub),
    }
}

/// The `.scenario` files of `dir`, sorted.
fn scenarios(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "scenario"))
        .collect();
    files.sort();
    files
}

/// Runs one scenario `text`, named `path`; `None` if it matches `golden`,
/// else a diff.
fn check(path: &Path, text: &str, golden: &Golden, release: Release, way: Way) -> Option<String> {
    let (engine, stack) = way;
    let options = Options { engine, mask_timestamps: true, stack, release };
    let output = run(text, &options).expect("scenario parses");
    let differences = golden.compare(&output).expect("the output parses");
    if differences.is_empty() {
        return None;
    }
    let mut diff =
        format!("{} ({release}, {engine:?}, {stack:?} keeps the stacks):\n", path.display());
    for d in differences {
        diff.push_str(&format!(
            "  line {}: got      {}\n          expected {}\n",
            d.line,
            d.got.as_deref().unwrap_or("(nothing)"),
            d.expected.as_deref().unwrap_or("(nothing)")
        ));
    }
    Some(diff)
}

/// One way to run a scenario: the engine, and who keeps the stacks.
type Way = (Engine, StackKeeper);

/// Runs the scenario at `path` every way in `ways` against `release`'s
/// golden file in `goldens` (read once): the differences, each a diff.
fn check_all_ways(path: &Path, goldens: &Path, release: Release, ways: &[Way]) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read scenario");
    let name = path.file_stem().expect("a scenario file name");
    let golden_path = goldens.join(name).with_extension("expected");
    let Ok(golden) = std::fs::read_to_string(&golden_path) else {
        return vec![format!("{}: no golden file", golden_path.display())];
    };
    let golden = Golden::parse(&golden).expect("the golden file parses");
    ways.iter().filter_map(|&way| check(path, &text, &golden, release, way)).collect()
}

/// Runs every scenario of `files` four ways ({interp, jit} x the stacks
/// kept by the core or the host) for `release` against its golden files in
/// `goldens`, on as many threads as the machine has; the differences, each
/// a diff.
fn failures(files: &[PathBuf], goldens: &Path, release: Release) -> Vec<String> {
    let ways: Vec<Way> = [Engine::Interp, Engine::Jit]
        .into_iter()
        .flat_map(|engine| [StackKeeper::Core, StackKeeper::Host].map(|stack| (engine, stack)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = files.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                let ways = &ways;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for path in part {
                        let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
                        if release == Release::Otp27 && NO_OTP27_GOLDEN.contains(&name) {
                            let golden = goldens.join(name).with_extension("expected");
                            if golden.exists() {
                                failures.push(format!("{name} has an OTP 27 golden now"));
                            }
                            continue;
                        }
                        let pending = PENDING.iter().any(|&(r, p, _)| r == release && p == name);
                        let diffs = check_all_ways(path, goldens, release, ways);
                        match (pending, diffs.is_empty()) {
                            (false, _) => failures.extend(diffs),
                            (true, true) => failures
                                .push(format!("{name} passes for {release}: take it off PENDING")),
                            (true, false) => {}
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a scenario run panicked")).collect()
    })
}

/// Runs every scenario of `trace_dir(dir)` for `release` against its
/// golden files (there must be `at_least` scenarios).
fn assert_all_match(dir: &str, release: Release, at_least: usize) {
    let files = scenarios(&trace_dir(dir));
    assert!(
        files.len() >= at_least,
        "{dir}: {} scenarios, expected {at_least} or more",
        files.len()
    );
    let failures = failures(&files, &golden_dir(release, dir), release);
    assert!(
        failures.is_empty(),
        "{} scenario run(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The scenarios ported from OTP's suites and written for the core.
#[test]
fn every_scenario_matches_otp() {
    assert_all_match("", Release::Otp27, 173);
}

/// The random scenarios of `random-scenarios.escript` (seed 12), each with
/// the output OTP 27 gave (testdata/trace/random/README.md).
#[test]
fn every_random_scenario_matches_otp() {
    assert_all_match("random", Release::Otp27, 1000);
}

/// The scenarios OTP 27.3.4 crashes on, with answers decided by hand
/// (testdata/trace/decided/README.md).
#[test]
fn every_decided_scenario_matches() {
    assert_all_match("decided", Release::Otp27, 1);
}

/// The same scenarios against what OTP 29.1.2, which runs them
/// (OTP-20385), printed.
#[test]
fn every_decided_scenario_matches_otp29() {
    assert_all_match("decided", Release::Otp29, 2);
}

/// The same scenarios with the core answering as OTP 29, against what OTP
/// 29.1.2 printed (testdata/trace/otp29/README.md).
#[test]
fn every_scenario_matches_otp29() {
    assert_all_match("", Release::Otp29, 173);
}

/// The random scenarios (seed 12) against what OTP 29.1.2 printed.
#[test]
fn every_random_scenario_matches_otp29() {
    assert_all_match("random", Release::Otp29, 1000);
}

/// `testdata/trace/otp29/` holds a golden file for every scenario and
/// nothing else: a scenario renamed or removed leaves no golden behind.
#[test]
fn every_otp29_golden_has_its_scenario() {
    let names = |path: &Path, ext: &str| -> BTreeSet<String> {
        std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| p.file_stem().and_then(|n| n.to_str()).expect("a name").to_owned())
            .collect()
    };
    for dir in ["", "random", "decided"] {
        let scenarios = names(&trace_dir(dir), "scenario");
        let goldens = names(&golden_dir(Release::Otp29, dir), "expected");
        let missing: Vec<&String> = scenarios.difference(&goldens).collect();
        let stray: Vec<&String> = goldens.difference(&scenarios).collect();
        assert!(
            missing.is_empty() && stray.is_empty(),
            "testdata/trace/otp29/{dir}: no golden for {missing:?}; no scenario for {stray:?}"
        );
    }
}

/// `{display, X}` reaches the host's console, not the trace output: the
/// core prints nothing (ERTS prints `X` on the node's standard output).
#[test]
fn display_goes_to_the_console() {
    let text = "
        {module, m, [{f, 1}]}.
        {session_create, s1, <0.90.0>, []}.
        {spawn, <0.70.0>, <0.80.0>}.
        {process, s1, <0.80.0>, true, [call]}.
        {function, s1, {m, f, 1}, [{['$1'], [], [{display, {{seen, '$1'}}}]}], [local]}.
        {call, <0.80.0>, {m, f, [42]}}.
    ";
    for engine in [Engine::Interp, Engine::Jit] {
        let output = run(text, &Options { engine, ..Options::default() }).expect("parses");
        assert_eq!(output.displayed, ["{seen,42}"], "{engine}");
        assert!(output.lines.iter().all(|l| !l.contains("seen")), "{engine}: {:?}", output.lines);
    }
}

/// Setting a session's queue limits again while a queue is long for it is
/// `unsupported` (ERTS 17.1 then stops reporting that process in the
/// session, which the world does not reproduce); turning them off is not.
#[test]
fn queue_limits_set_again_over_a_long_queue_are_unsupported() {
    let text = "
        {spawn, <0.70.0>, <0.80.0>}.
        {session_create, s1, <0.90.0>, []}.
        {system, s1, long_message_queue, {0, 1}}.
        {do, <0.70.0>, [{send, <0.80.0>, a}]}.
        {system, s1, long_message_queue, {0, 2}}.
        {system, s1, long_message_queue, {2, 1}}.
        {system, s1, long_message_queue, false}.
        {system, s1, long_message_queue, {0, 2}}.
    ";
    let output = run(text, &Options::default()).expect("parses");
    let replies: Vec<&str> = output
        .lines
        .iter()
        .filter(|l| l.starts_with("{reply,system"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        replies,
        [
            "{reply,system,ok}.",
            "{reply,system,{error,unsupported}}.",
            "{reply,system,{error,badarg}}.",
            "{reply,system,ok}.",
            "{reply,system,ok}."
        ]
    );
    assert!(
        output.lines.contains(&"{<0.90.0>,{monitor,<0.80.0>,long_message_queue,true}}.".to_owned())
    );
}

/// A pattern may be a fun, `{fun2ms, "fun(...) -> ... end"}`: it traces as
/// the spec `dbg:fun2ms/1` makes of it, and a fun that does not translate
/// is an error reply naming why.
#[test]
fn a_fun_pattern_traces_as_its_spec() {
    let scenario = |pattern: &str| {
        format!(
            "{{module, m, [{{f, 1}}]}}.
             {{session_create, s1, <0.90.0>, []}}.
             {{spawn, <0.70.0>, <0.80.0>}}.
             {{process, s1, <0.80.0>, true, [call]}}.
             {{function, s1, {{m, f, 1}}, {pattern}, [local]}}.
             {{call, <0.80.0>, {{m, f, [1]}}}}.
             {{return, <0.80.0>, ok}}.
             {{call, <0.80.0>, {{m, f, [2]}}}}.
             {{return, <0.80.0>, ok}}."
        )
    };
    let run_lines = |pattern: &str| run(&scenario(pattern), &Options::default()).unwrap().lines;
    let fun = run_lines(r#"{fun2ms, "fun([X]) when X > 1 -> return_trace() end"}"#);
    let spec = run_lines("[{['$1'], [{'>', '$1', 1}], [{return_trace}]}]");
    assert_eq!(fun, spec);
    assert!(fun.iter().any(|l| l.contains("return_from")), "{fun:?}");
    let bad = run_lines(r#"{fun2ms, "fun({X}) -> X end"}"#);
    let reply = bad.iter().find(|l| l.starts_with("{reply,function")).unwrap();
    let expected = "{reply,function,{error,{fun2ms,\"dbg:fun2ms requires fun with single \
                    variable or list parameter\"}}}.";
    let (got, want) = (msc::parse_term(reply).unwrap(), msc::parse_term(expected).unwrap());
    assert!(got.as_ref().eq_exact(&want.as_ref()), "{reply}");
}

/// `{tracer_overload, Pid, Policy}`: a tracer process of two sessions gets
/// two messages per call; with room for one, the other is dropped and
/// counted, and `{drop, N}` comes before the next message.
#[test]
fn a_tracer_overload_policy_drops_and_counts() {
    let scenario = |policy: &str| {
        format!(
            "{{tracer_overload, <0.90.0>, {policy}}}.
             {{module, m, [{{f, 1}}]}}.
             {{session_create, s1, <0.90.0>, []}}.
             {{session_create, s2, <0.90.0>, []}}.
             {{spawn, <0.70.0>, <0.80.0>}}.
             {{process, s1, <0.80.0>, true, [call]}}.
             {{process, s2, <0.80.0>, true, [call]}}.
             {{function, s1, {{m, f, 1}}, true, [local]}}.
             {{function, s2, {{m, f, 1}}, true, [local]}}.
             {{call, <0.80.0>, {{m, f, [1]}}}}.
             {{return, <0.80.0>, ok}}.
             {{call, <0.80.0>, {{m, f, [2]}}}}.
             {{tracer_overload, <0.90.0>, unbounded}}."
        )
    };
    let messages = |policy: &str| -> Vec<String> {
        let output = run(&scenario(policy), &Options::default()).unwrap();
        output.lines.into_iter().filter(|l| l.starts_with("{<0.90.0>")).collect()
    };
    let call = |n: u8| format!("{{<0.90.0>,{{trace,<0.80.0>,call,{{m,f,[{n}]}}}}}}.");
    assert_eq!(messages("unbounded"), [call(1), call(1), call(2), call(2)]);
    assert_eq!(messages("{drop, 1}"), [call(1), "{<0.90.0>,{drop,1}}.".to_owned(), call(2)]);
    // Removed at the second message: a dead tracer process loses its mailbox.
    assert!(messages("{remove, 1}").is_empty());
    let output = run(&scenario("{drop, 1}"), &Options::default()).unwrap();
    assert_eq!(output.lines.last().unwrap(), "{reply,tracer_overload,{error,tracer_exists}}.");
}
