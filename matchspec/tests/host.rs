//! What a running spec asks of its host, with which arguments and in which
//! order: [`Recording`] wraps [`TestHost`] and logs every effect, so
//! argument mix-ups that `erlang:match_spec_test/3` can never show (OTP 27
//! crashes on trace actions there) still fail a test.

use matchspec::host::{Effect, Recording};
use matchspec::spec::Kind;
use matchspec::term::Term;
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};

/// One line per effect, terms as text.
fn describe(effect: &Effect) -> String {
    let show = |t: &Option<Term>| t.as_ref().map_or_else(|| "-".to_owned(), Term::to_string);
    let answer = |a: &Option<bool>| a.map_or_else(|| "'EXIT'".to_owned(), |a| a.to_string());
    match effect {
        Effect::EnableTrace { target, flag, answer: a } => {
            format!("Enable target={} flag={flag} -> {}", show(target), answer(a))
        }
        Effect::DisableTrace { target, flag, answer: a } => {
            format!("Disable target={} flag={flag} -> {}", show(target), answer(a))
        }
        Effect::Trace { target, disable, enable, answer: a } => {
            format!(
                "Trace target={} disable={disable} enable={enable} -> {}",
                show(target),
                answer(a)
            )
        }
        Effect::SetSeqToken { key, value, accepted } => {
            format!("set_seq_token {key} {value} -> {accepted}")
        }
        Effect::SetTraceControlWord(w) => format!("set_tcw {w}"),
        Effect::Silent(on) => format!("silent {on}"),
        Effect::Display(t) => format!("display {t}"),
    }
}

/// Runs a call-trace spec on `args` and returns the host's log.
#[track_caller]
fn host_calls(spec: &str, args: &str) -> Vec<String> {
    let spec = CompiledSpec::compile(spec, Kind::Call, &Config::default())
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let args = Term::parse(args).expect("arguments parse");
    let mut scratch = Scratch::new();
    let mut host = Recording::new(TestHost::default());
    let outcome = spec.run(args.as_ref(), &mut scratch, &mut host).expect("runs");
    assert!(matches!(outcome, Outcome::Match(_)), "{spec:?} did not match");
    host.effects().iter().map(describe).collect()
}

#[test]
fn enable_and_disable_trace_name_target_then_flag() {
    assert_eq!(
        host_calls("[{'_',[],[{enable_trace,send}]}]", "[]"),
        ["Enable target=- flag=send -> true"]
    );
    assert_eq!(
        host_calls("[{['$1'],[],[{enable_trace,'$1','receive'}]}]", "[<0.5.0>]"),
        ["Enable target=<0.5.0> flag='receive' -> 'EXIT'"]
    );
    assert_eq!(
        host_calls("[{'_',[],[{disable_trace,{self},call}]}]", "[]"),
        ["Disable target=<0.80.0> flag=call -> true"]
    );
}

#[test]
fn trace_names_target_then_disable_then_enable() {
    assert_eq!(
        host_calls("[{'_',[],[{trace,[send],['receive']}]}]", "[]"),
        ["Trace target=- disable=[send] enable=['receive'] -> false"]
    );
    assert_eq!(
        host_calls("[{['$1'],[],[{trace,'$1',[call],[send]}]}]", "[p]"),
        ["Trace target=p disable=[call] enable=[send] -> 'EXIT'"]
    );
}

#[test]
fn trace_actions_run_last_argument_first_and_in_body_order() {
    // ERTS evaluates a call's arguments last to first: the display in the
    // flag position runs before the one in the target position.
    let log = host_calls(
        "[{'_',[],[{enable_trace,{display,1},{display,2}},{silent,true},{set_tcw,7}]}]",
        "[]",
    );
    assert_eq!(
        log,
        [
            "display 2",
            "display 1",
            "Enable target=true flag=true -> 'EXIT'",
            "silent true",
            "set_tcw 7"
        ]
    );
}

#[test]
fn a_match_that_fails_its_guard_asks_nothing() {
    let spec = CompiledSpec::compile(
        "[{'_',[false],[{enable_trace,send}]}]",
        Kind::Call,
        &Config::default(),
    )
    .expect("compiles");
    let args = Term::parse("[]").expect("parses");
    let mut scratch = Scratch::new();
    let mut host = Recording::new(TestHost::default());
    let outcome = spec.run(args.as_ref(), &mut scratch, &mut host).expect("runs");
    assert!(matches!(outcome, Outcome::NoMatch));
    assert!(host.effects().is_empty(), "{:?}", host.effects());
}

#[test]
fn seq_token_and_display_requests_carry_their_terms() {
    let log = host_calls(
        "[{['$1'],[],[{set_seq_token,label,'$1'},{display,{{'$1',x}}},{get_seq_token}]}]",
        "[17]",
    );
    assert_eq!(log, ["set_seq_token label 17 -> false", "display {17,x}"]);
}
