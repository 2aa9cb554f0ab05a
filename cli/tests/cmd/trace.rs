//! `msc trace`: a scenario's output, with the stacks kept by the core or
//! by the world, and the answers of the release `--otp` names.

use crate::{msc, msc_with_stdin, testdata};

#[test]
fn both_stack_keepers_print_the_golden_output() {
    // Exceptions through watched frames, `return_to` and `{caller}`.
    for name in ["trace_local_SUITE-exception", "match_spec_SUITE-caller_and_return_to"] {
        let scenario = testdata(&format!("trace/{name}.scenario"));
        let golden = std::fs::read_to_string(testdata(&format!("trace/{name}.expected")))
            .expect("the golden file");
        for stack in ["core", "host"] {
            let run = msc(&["trace", "--mask-timestamps", "--stack", stack, &scenario]).ok();
            assert_eq!(run.out(), golden, "{name} with --stack {stack}");
        }
    }
}

#[test]
fn an_unknown_stack_keeper_is_refused() {
    let run = msc(&["trace", "--stack", "nobody", &testdata("trace/docs-example.scenario")]);
    assert_ne!(run.status.code(), Some(0));
    assert!(run.stderr.contains("nobody"), "{}", run.stderr);
}

/// `--otp 29`: the core answers `trace:info/3` as OTP 29 does (an item it
/// does not know is `badarg` even for an untraced function), and each
/// release's golden file holds for its release only.
#[test]
fn the_release_decides_the_trace_info_answers() {
    let text = b"{module, m, [{f, 0}]}.
                 {session_create, s1, <0.90.0>, []}.
                 {info, s1, {m, f, 0}, flags}.
                 {function, s1, {m, f, 0}, true, [local]}.
                 {info, s1, {m, f, 0}, meta}.";
    let infos = |otp: &str| {
        let run = msc_with_stdin(&["--otp", otp, "trace", "-"], text).ok();
        run.out().lines().filter(|l| l.starts_with("{reply,info,")).map(String::from).collect()
    };
    let infos: [Vec<String>; 2] = [infos("27"), infos("29")];
    assert_eq!(infos[0], ["{reply,info,{flags,false}}.", "{reply,info,{meta,[]}}."]);
    assert_eq!(infos[1], ["{reply,info,{error,badarg}}.", "{reply,info,{meta,false}}."]);

    let scenario = testdata("trace/core-trace_info_table.scenario");
    let golden27 = testdata("trace/core-trace_info_table.expected");
    let golden29 = testdata("trace/otp29/core-trace_info_table.expected");
    msc(&["trace", "--otp", "27", "--expect", &golden27, &scenario]).ok();
    msc(&["trace", "--otp", "29", "--expect", &golden29, &scenario]).ok();
    msc(&["trace", "--expect", &golden29, &scenario]).ok();
    msc(&["--otp", "29", "trace", "--stack", "host", "--expect", &golden29, &scenario]).ok();
    let run = msc(&["trace", "--otp", "29", "--expect", &golden27, &scenario]).code(1);
    assert!(run.out().contains("expected {reply,info,{flags,false}}"), "{}", run.out());
    msc(&["trace", "--otp", "27", "--expect", &golden29, &scenario]).code(1);
}
