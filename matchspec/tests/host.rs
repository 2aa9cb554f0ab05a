//! What a running spec asks of its [`Host`], with which arguments and in
//! which order: a recording host wraps [`TestHost`] and logs every call
//! that changes the process, so argument mix-ups that
//! `erlang:match_spec_test/3` can never show (OTP 27 crashes on trace
//! actions there) still fail a test.

use matchspec::host::Host;
use matchspec::ir::ChangeTrace;
use matchspec::spec::Kind;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};
use matchspec::{CompiledSpec, Config, Outcome, Scratch, TestHost};

/// A [`TestHost`] that logs the calls that act on the process.
#[derive(Default)]
struct Recorder {
    inner: TestHost,
    log: Vec<String>,
}

impl Host for Recorder {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.inner.self_pid(heap)
    }
    fn trace_control_word(&self) -> u32 {
        self.inner.trace_control_word()
    }
    fn set_trace_control_word(&mut self, value: u32) {
        self.log.push(format!("set_tcw {value}"));
        self.inner.set_trace_control_word(value);
    }
    fn is_seq_trace(&mut self) -> bool {
        self.inner.is_seq_trace()
    }
    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.inner.seq_token(heap)
    }
    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool {
        self.log.push(format!("set_seq_token {key} {value}"));
        self.inner.set_seq_token(key, value)
    }
    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        self.inner.seq_trace_info(key, heap)
    }
    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        self.inner.process_dump(heap)
    }
    fn display(&mut self, term: TermRef<'_>) {
        self.log.push(format!("display {term}"));
        self.inner.display(term);
    }
    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        let show = |t: Option<TermRef<'_>>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
        self.log.push(format!("{how:?} target={} a={a} b={}", show(target), show(b)));
        self.inner.change_trace(how, target, a, b)
    }
    fn caller(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller(heap)
    }
    fn caller_line(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller_line(heap)
    }
    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word {
        self.inner.current_stacktrace(depth, heap)
    }
    fn set_silent(&mut self, on: bool) {
        self.log.push(format!("silent {on}"));
        self.inner.set_silent(on);
    }
}

/// Runs a call-trace spec on `args` and returns the host's log.
#[track_caller]
fn host_calls(spec: &str, args: &str) -> Vec<String> {
    let spec = CompiledSpec::compile(spec, Kind::Call, &Config::default())
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let args = Term::parse(args).expect("arguments parse");
    let mut scratch = Scratch::new();
    let mut host = Recorder::default();
    let outcome = spec.run_with_host(args.as_ref(), &mut scratch, &mut host).expect("runs");
    assert!(matches!(outcome, Outcome::Match(_)), "{spec:?} did not match");
    host.log
}

#[test]
fn enable_and_disable_trace_name_target_then_flag() {
    assert_eq!(
        host_calls("[{'_',[],[{enable_trace,send}]}]", "[]"),
        ["Enable target=- a=send b=-"]
    );
    assert_eq!(
        host_calls("[{['$1'],[],[{enable_trace,'$1','receive'}]}]", "[<0.5.0>]"),
        ["Enable target=<0.5.0> a='receive' b=-"]
    );
    assert_eq!(
        host_calls("[{'_',[],[{disable_trace,{self},call}]}]", "[]"),
        ["Disable target=<0.80.0> a=call b=-"]
    );
}

#[test]
fn trace_names_target_then_disable_then_enable() {
    assert_eq!(
        host_calls("[{'_',[],[{trace,[send],['receive']}]}]", "[]"),
        ["Trace target=- a=[send] b=['receive']"]
    );
    assert_eq!(
        host_calls("[{['$1'],[],[{trace,'$1',[call],[send]}]}]", "[p]"),
        ["Trace target=p a=[call] b=[send]"]
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
        ["display 2", "display 1", "Enable target=true a=true b=-", "silent true", "set_tcw 7"]
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
    let mut host = Recorder::default();
    let outcome = spec.run_with_host(args.as_ref(), &mut scratch, &mut host).expect("runs");
    assert!(matches!(outcome, Outcome::NoMatch));
    assert!(host.log.is_empty(), "{:?}", host.log);
}
