//! `msc trace`: a scenario's output, with the stacks kept by the core or
//! by the world.

use crate::{msc, testdata};

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
