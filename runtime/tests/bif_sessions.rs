//! OTP-19840: a BIF's call trace in two sessions. The variants of
//! `testdata/trace/bif_sessions/probe.escript`, replayed on the trace core
//! for each release and compared with what that release's VM printed
//! (`otp27.terms`, `otp29.terms`): the calls each session's tracer got, and
//! what `trace:info/3` says of the BIF in each session. The scenario world
//! cannot show this: OTP's side cannot declare BIFs.

use std::sync::Arc;

use crossbeam_channel::Receiver;
use matchspec::syntax::{parse_term, parse_terms};
use matchspec::term::{Atom, Heap, Term};
use matchspec::{Config, Release};
use matchspec_runtime::commands::{FlagChange, ProcessSpec};
use matchspec_runtime::info::function_info;
use matchspec_runtime::pattern::{MfaPattern, parse_pattern_action, parse_pattern_flags};
use matchspec_runtime::{
    CallStyle, CoreConfig, Delivered, Function, FunctionEntry, ManualClock, Mfa, Pid, Process,
    ProcessTracer, Reach, SessionRef, TraceCore, TraceFlags,
};

struct World {
    core: Arc<TraceCore>,
    phash2: Arc<FunctionEntry>,
    process: Process,
    sessions: [SessionRef; 2],
    tracers: [Receiver<Delivered>; 2],
}

fn world(release: Release) -> World {
    let clock = Arc::new(ManualClock::new());
    let spec = Config::default().release(release);
    let core = TraceCore::new(CoreConfig { clock: clock.clone(), spec, ..CoreConfig::default() });
    let bifs = [Function::bif("phash2", 1), Function::bif("phash2", 2)];
    let phash2 = core.declare_module(Atom::new("erlang"), &bifs).expect("erlang").remove(0);
    let session = |name: &str, pid: u32| {
        let (tx, rx) = crossbeam_channel::unbounded();
        let tracer = Arc::new(ProcessTracer::new(Pid::new(pid, 0), tx, clock.clone()));
        let session = core.session_create(Atom::new(name), Some(tracer));
        let calls = FlagChange::on(TraceFlags::CALL);
        core.trace_processes(&session, ProcessSpec::Pid(Pid::new(80, 0)), calls).expect("flags");
        (session, rx)
    };
    let process = core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
    let (s1, rx1) = session("s1", 90);
    let (s2, rx2) = session("s2", 91);
    World { core, phash2, process, sessions: [s1, s2], tracers: [rx1, rx2] }
}

impl World {
    /// `trace:function(S, MFA, How, Flags)` in session `s` (0 or 1).
    fn function(&self, s: usize, mfa: &str, how: &str, flags: &str) {
        let session = &self.sessions[s];
        let mfa = MfaPattern::from_term(parse_term(mfa).expect("mfa").as_ref()).expect("mfa");
        let how = parse_pattern_action(&self.core, parse_term(how).expect("how").as_ref());
        let flags = parse_term(flags).expect("flags");
        let meta = session.tracer().cloned();
        let flags = parse_pattern_flags(session, flags.as_ref(), &mut |_| None, meta);
        self.core
            .set_pattern(session, mfa, &how.expect("how"), &flags.expect("flags"))
            .expect("set");
    }

    /// The probe's variant `name`: its patterns on `erlang:phash2/1` (and
    /// `/2`), in session 0 (`s1`) or 1 (`s2`).
    fn patterns(&self, name: &str) {
        let steps: &[(usize, &str, &str, &str)] = match name {
            "global_off" => &[
                (0, "1", "true", "[global]"),
                (1, "1", "true", "[global]"),
                (1, "1", "false", "[global]"),
            ],
            "untraced_off" => &[(0, "1", "true", "[global]"), (1, "1", "false", "[global]")],
            "local_off" => &[
                (0, "1", "true", "[local]"),
                (1, "1", "true", "[local]"),
                (1, "1", "false", "[local]"),
            ],
            "local_and_global" => &[
                (0, "1", "true", "[local]"),
                (1, "1", "true", "[global]"),
                (1, "1", "false", "[global]"),
            ],
            "count_off" => &[
                (0, "1", "true", "[global]"),
                (1, "1", "true", "[call_count]"),
                (1, "1", "false", "[call_count]"),
            ],
            "meta_off" => &[
                (0, "1", "true", "[global]"),
                (1, "1", "true", "[meta]"),
                (1, "1", "false", "[meta]"),
            ],
            "other_arity_off" => &[
                (0, "1", "true", "[global]"),
                (1, "2", "true", "[global]"),
                (1, "2", "false", "[global]"),
            ],
            "off_then_other_on" => &[
                (0, "1", "true", "[global]"),
                (1, "1", "true", "[global]"),
                (0, "1", "false", "[global]"),
                (1, "1", "true", "[global]"),
            ],
            "on_again" => &[
                (0, "1", "true", "[global]"),
                (1, "1", "false", "[global]"),
                (1, "1", "true", "[call_count]"),
            ],
            other => panic!("the probe has a variant {other} this test does not know"),
        };
        for (session, arity, how, flags) in steps {
            self.function(*session, &format!("{{erlang,phash2,{arity}}}"), how, flags);
        }
    }

    /// The variant's patterns, one call of `erlang:phash2(x)`, and the line
    /// the probe printed for it.
    fn run(&mut self, name: &str) -> String {
        self.patterns(name);
        let args = Term::list([Term::atom(Atom::new("x"))]);
        if self.phash2.is_traced() {
            let p = &mut self.process;
            p.call(&self.phash2, args.as_ref(), Reach::Remote, CallStyle::Body).expect("call");
            p.return_value(Term::from(1).as_ref()).expect("return");
        }
        let calls = |rx: &Receiver<Delivered>| {
            rx.try_iter()
                .filter(|d| d.message.to_string().starts_with("{trace,<0.80.0>,call,"))
                .count()
        };
        let traced = |session| {
            let mut heap = Heap::new();
            let item = Term::atom(Atom::new("traced"));
            let mfa = Mfa::new("erlang", "phash2", 1);
            let reply =
                function_info(&self.core, session, mfa, item.as_ref(), &mut heap).expect("info");
            let text = heap.view(reply).to_string();
            text.trim_start_matches("{traced,").trim_end_matches('}').to_owned()
        };
        format!(
            "{{{name},{},{},{},{}}}",
            calls(&self.tracers[0]),
            calls(&self.tracers[1]),
            traced(&self.sessions[0]),
            traced(&self.sessions[1])
        )
    }
}

fn check(release: Release) {
    let file = format!(
        "{}/../testdata/trace/bif_sessions/otp{}.terms",
        env!("CARGO_MANIFEST_DIR"),
        release.major()
    );
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let lines = parse_terms(&text).expect("the golden parses");
    assert_eq!(lines.len(), 9, "{file}");
    for line in lines {
        let name = line.as_ref().as_tuple().and_then(|t| t.get(0)).and_then(|n| n.as_atom());
        let name = name.expect("a variant's name").name();
        assert_eq!(world(release).run(name), line.to_string(), "{file}: {name}");
    }
}

#[test]
fn a_bif_switched_off_in_one_session_is_off_in_all_in_otp_27() {
    check(Release::Otp27);
}

#[test]
fn each_session_keeps_its_bif_trace_in_otp_29() {
    check(Release::Otp29);
}
