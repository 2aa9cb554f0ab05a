//! Runs scenario terms one at a time.

mod link_tree;
mod nodes;
mod ports;
mod world;

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use matchspec::Config;
use matchspec::fun2ms::{Dialect, fun2ms};
use matchspec::host::parse_flag_list;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};
use rustc_hash::FxHashMap;

use super::{Options, Output, StackKeeper, mask_counters, mask_timestamps};
use matchspec_runtime::HostStack;
use matchspec_runtime::commands::{FlagChange, MessageEvent, PortSpec, ProcessSpec};
use matchspec_runtime::core::{CoreConfig, TraceCore};
use matchspec_runtime::error::TraceError;
use matchspec_runtime::flags::TraceFlags;
use matchspec_runtime::ids::{Mfa, Pid, PortId, RemotePid};
use matchspec_runtime::info;
use matchspec_runtime::on_load::on_load_info;
use matchspec_runtime::pattern::{MfaPattern, parse_pattern_action, parse_pattern_flags};
use matchspec_runtime::session::SessionRef;
use matchspec_runtime::system_monitor::{SystemEvent, SystemMonitor};
use matchspec_runtime::tracer::{
    CodeError, Delivered, ModuleTracer, Overload, ProcessTracer, TestTracerModule, TracerModules,
    TracerRef,
};
use matchspec_runtime::{CallStyle, Function, Process, Raised, Reach, StackError};
use matchspec_runtime::{Console, ManualClock, TraceeId};

/// The tracer module a code event names: only `tracer_test` (the
/// world's other modules are its own).
fn tracer_module(module: TermRef<'_>) -> Result<Atom, Failure> {
    module
        .as_atom()
        .filter(|m| m.name() == TestTracerModule::MODULE)
        .ok_or(Failure::World("not_a_tracer_module"))
}

/// The driver process, which runs the commands.
const DRIVER: Pid = Pid::new(70, 0);

/// Why a term could not run: printed as `{error, Reason}`.
#[derive(Debug)]
enum Failure {
    /// A trace command raised.
    Trace(TraceError),
    /// A host event that does not fit the world.
    World(&'static str),
    /// Not a term the format knows.
    Unknown,
    /// A `{fun2ms, FunText}` pattern that does not translate: the message.
    Fun2ms(String),
}

impl From<TraceError> for Failure {
    fn from(e: TraceError) -> Failure {
        Failure::Trace(e)
    }
}

impl From<StackError> for Failure {
    fn from(e: StackError) -> Failure {
        Failure::World(match e {
            StackError::NoActiveFunction => "no_active_function",
            StackError::Exited => "noproc",
            StackError::HostKeepsStack | StackError::CoreKeepsStack => "wrong_stack_keeper",
            StackError::NoWatchedFrame => "no_watched_frame",
        })
    }
}

type Reply = Result<Term, Failure>;

/// A scenario's world: a core with a manual clock, its sessions by name,
/// processes and tracer processes.
#[derive(Debug)]
pub struct Runner {
    options: Options,
    core: Arc<TraceCore>,
    clock: Arc<ManualClock>,
    sessions: FxHashMap<Atom, SessionRef>,
    processes: FxHashMap<Pid, Process>,
    /// The processes' stacks when the host keeps them
    /// ([`StackKeeper::Host`]).
    host_stacks: FxHashMap<Pid, HostStack>,
    tracers: Vec<(Pid, Arc<ProcessTracer>)>,
    /// Overload policies set for tracer processes not created yet.
    overloads: FxHashMap<Pid, Overload>,
    mailbox: Sender<Delivered>,
    inbox: Receiver<Delivered>,
    /// The tracer modules (`tracer_test`) and their code.
    modules: TracerModules,
    world: world::World,
    /// What trace specs showed with `{display, X}`.
    console: Arc<Displayed>,
}

/// The world's console: keeps what trace specs show, in order, for
/// [`Output::displayed`].
#[derive(Debug, Default)]
struct Displayed(std::sync::Mutex<Vec<String>>);

impl Console for Displayed {
    fn display(&self, _: TraceeId, term: TermRef<'_>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(term.to_string());
    }
}

impl Runner {
    /// A world with only the driver process.
    pub fn new(options: Options) -> Runner {
        let clock = Arc::new(ManualClock::new());
        let console = Arc::new(Displayed::default());
        let core = TraceCore::new(CoreConfig {
            engine: options.engine,
            spec: Config::default().release(options.release),
            clock: clock.clone(),
            console: console.clone(),
        });
        let (mailbox, inbox) = crossbeam_channel::unbounded();
        let mut runner = Runner {
            options,
            core,
            clock,
            sessions: FxHashMap::default(),
            processes: FxHashMap::default(),
            host_stacks: FxHashMap::default(),
            tracers: Vec::new(),
            overloads: FxHashMap::default(),
            mailbox,
            inbox,
            modules: TracerModules::default(),
            world: world::World::default(),
            console,
        };
        runner.modules.declare(Atom::new(TestTracerModule::MODULE));
        let driver = runner.core.spawn(DRIVER, Some(idle()));
        runner.add_process(driver);
        // The driver exists from the start, so its messages come first.
        runner.tracer(DRIVER);
        runner
    }

    /// The core the scenario runs on.
    pub fn core(&self) -> &Arc<TraceCore> {
        &self.core
    }

    /// Runs one term: prints its reply, then the messages it caused.
    pub fn step(&mut self, term: TermRef<'_>, output: &mut Output) {
        let tag = term
            .as_tuple()
            .and_then(|t| t.get(0))
            .and_then(|t| t.as_atom())
            .unwrap_or(Atom::UNDEFINED);
        let reply = self.execute(tag, term);
        // (A question refused as badarg never reaches the process.)
        if let (Ok(_), Some(pid)) = (&reply, asked_process(tag, term)) {
            self.asked(pid);
        }
        // The step's process blocks again; then the processes its signals
        // woke run, one after the other.
        self.end_step();
        self.run_signals();
        output.displayed.append(&mut self.console.0.lock().unwrap_or_else(|e| e.into_inner()));
        output.terms += 1;
        let mut heap = Heap::new();
        let value = match reply {
            Ok(term) if self.options.mask_timestamps && is_info(tag) => {
                mask_counters(term.as_ref()).copy_to(&mut heap)
            }
            Ok(term) => term.copy_to(&mut heap),
            Err(failure) => {
                output.errors += 1;
                let reason = match failure {
                    Failure::Trace(TraceError::SystemLimit) => {
                        Word::atom(Atom::new("system_limit"))
                    }
                    Failure::Trace(TraceError::Undefined) => Word::atom(Atom::new("undef")),
                    Failure::Trace(_) => Word::atom(Atom::new("badarg")),
                    Failure::World(why) => Word::atom(Atom::new(why)),
                    Failure::Unknown => Word::atom(Atom::new("unknown_term")),
                    Failure::Fun2ms(message) => {
                        let text = heap.string(&message);
                        heap.tuple(&[Word::atom(Atom::new("fun2ms")), text])
                    }
                };
                heap.tuple(&[Word::atom(Atom::ERROR), reason])
            }
        };
        let line = heap.tuple(&[Word::atom(Atom::new("reply")), Word::atom(tag), value]);
        output.lines.push(format!("{}.", heap.view(line).without_strings()));
        self.deliver(output);
    }

    /// Prints the messages delivered since the last term, grouped by
    /// tracer in the order tracers were first named.
    fn deliver(&mut self, output: &mut Output) {
        let mut by_tracer: FxHashMap<Pid, Vec<Term>> = FxHashMap::default();
        for delivered in self.inbox.try_iter() {
            by_tracer.entry(delivered.tracer).or_default().push(delivered.message);
        }
        for (pid, tracer) in &self.tracers {
            // A tracer process that died lost what it had not read.
            let messages = by_tracer.remove(pid).unwrap_or_default();
            for message in messages.into_iter().filter(|_| tracer.is_alive()) {
                let message = if self.options.mask_timestamps {
                    mask_timestamps(message.as_ref())
                } else {
                    message
                };
                let mut heap = Heap::new();
                let tracer = pid.to_word(&mut heap);
                let m = message.copy_to(&mut heap);
                let line = heap.tuple(&[tracer, m]);
                output.lines.push(format!("{}.", heap.view(line).without_strings()));
                output.messages += 1;
            }
        }
    }

    fn execute(&mut self, tag: Atom, term: TermRef<'_>) -> Reply {
        let args: Vec<TermRef<'_>> =
            term.as_tuple().map(|t| t.iter().skip(1).collect()).unwrap_or_default();
        if is_command(tag) {
            self.name_tracers(term);
        }
        match (tag.name(), args.as_slice()) {
            ("session_create", [name, tracer, opts]) => self.session_create(*name, *tracer, *opts),
            ("session_destroy", [name]) => {
                let session = self.any_session(*name)?;
                let destroyed = self.core.session_destroy(&session)?;
                if destroyed {
                    self.clean_processes();
                }
                Ok(Term::atom(if destroyed { Atom::TRUE } else { Atom::FALSE }))
            }
            ("session_info", [what]) => self.session_info(*what),
            ("process", [s, spec, how, flags]) => {
                self.ensure_tracer_modules("tracer", *flags, false)?;
                let session = self.session(*s)?;
                self.trace_process(&session, *spec, *how, *flags)
            }
            ("function", [s, mfa, pattern, flags]) => {
                self.ensure_tracer_modules("meta", *flags, false)?;
                let session = self.session(*s)?;
                let fun = fun_pattern(*pattern)?;
                let pattern = fun.as_ref().map_or(*pattern, Term::as_ref);
                self.trace_function(&session, *mfa, pattern, *flags)
            }
            ("send", [s, pattern, flags]) => {
                self.ensure_tracer_modules("meta", *flags, false)?;
                let session = self.session(*s)?;
                let fun = fun_pattern(*pattern)?;
                let pattern = fun.as_ref().map_or(*pattern, Term::as_ref);
                message_pattern(&self.core, &session, MessageEvent::Send, pattern, *flags)
            }
            ("recv", [s, pattern, flags]) => {
                self.ensure_tracer_modules("meta", *flags, false)?;
                let session = self.session(*s)?;
                let fun = fun_pattern(*pattern)?;
                let pattern = fun.as_ref().map_or(*pattern, Term::as_ref);
                message_pattern(&self.core, &session, MessageEvent::Receive, pattern, *flags)
            }
            ("port", [s, spec, how, flags]) => {
                self.ensure_tracer_modules("tracer", *flags, false)?;
                let session = self.session(*s)?;
                self.trace_port(&session, *spec, *how, *flags)
            }
            ("info", [s, what, item]) => {
                let session = self.session(*s)?;
                self.info(&session, *what, *item)
            }
            ("erlang_trace", [spec, how, flags]) => {
                self.ensure_tracer_modules("tracer", *flags, true)?;
                self.erlang_trace(*spec, *how, *flags)
            }
            ("erlang_trace_pattern", [mfa, pattern, flags]) => {
                self.ensure_tracer_modules("meta", *flags, true)?;
                let legacy = self.core.legacy().clone();
                let fun = fun_pattern(*pattern)?;
                let pattern = fun.as_ref().map_or(*pattern, Term::as_ref);
                // `send` and `'receive'` set the message patterns.
                match mfa.as_atom().map(Atom::name) {
                    Some("send") => {
                        message_pattern(&self.core, &legacy, MessageEvent::Send, pattern, *flags)
                    }
                    Some("receive") => {
                        let event = MessageEvent::Receive;
                        message_pattern(&self.core, &legacy, event, pattern, *flags)
                    }
                    _ => self.trace_function(&legacy, *mfa, pattern, *flags),
                }
            }
            ("erlang_trace_info", [what, item]) => {
                let legacy = self.core.legacy().clone();
                self.info(&legacy, *what, *item)
            }
            ("module", [name, functions]) => self.declare_module(*name, *functions),
            ("spawn", [parent, child]) => self.spawn(*parent, *child),
            ("node", [name]) => self.start_node(*name),
            ("peer", [name]) => self.start_peer(*name),
            ("call", [p, mfa]) => self.call(*p, *mfa, Reach::Remote, CallStyle::Body),
            ("local_call", [p, mfa]) => self.call(*p, *mfa, Reach::Local, CallStyle::Body),
            ("tail_call", [p, mfa]) => self.call(*p, *mfa, Reach::Remote, CallStyle::Tail),
            ("local_tail_call", [p, mfa]) => self.call(*p, *mfa, Reach::Local, CallStyle::Tail),
            ("try_call", [p, mfa]) => self.call(*p, *mfa, Reach::Remote, CallStyle::Try),
            ("return", [p, value]) => {
                let pid = self.process(*p)?.pid();
                self.active(pid)?;
                self.step_if_puppet(pid, world::step(&[world::atom("return")], &[*value]));
                self.return_value(pid, *value)?;
                self.after_end(pid, None);
                Ok(Term::atom(Atom::OK))
            }
            ("raise", [p, class, reason]) => {
                let class =
                    class.as_atom().filter(|c| matches!(c.name(), "error" | "exit" | "throw"));
                let class = class.ok_or(Failure::World("bad_class"))?;
                let pid = self.process(*p)?.pid();
                self.active(pid)?;
                let head = [world::atom("raise"), Word::atom(class)];
                self.step_if_puppet(pid, world::step(&head, &[*reason]));
                let raised = self.raise(pid, class, *reason)?;
                self.after_end(pid, Some(raised));
                Ok(Term::atom(Atom::OK))
            }
            ("do", [p, actions]) => self.do_actions(*p, *actions),
            ("system_tracer", [tracer]) => self.system_tracer(*tracer),
            ("system", [s, event, value]) => self.system(*s, *event, *value),
            ("reset_seq_trace", []) => {
                self.core.reset_seq_trace();
                Ok(Term::atom(Atom::TRUE))
            }
            ("seq_token", [p]) => self.seq_token(*p),
            ("allocate", [p, words]) => self.allocate(*p, *words),
            ("code_delete", [m]) => {
                let deleted = self.modules.delete(tracer_module(*m)?);
                Ok(Term::atom(if deleted { Atom::TRUE } else { Atom::FALSE }))
            }
            ("code_purge", [m]) => {
                if self.modules.purge(tracer_module(*m)?) {
                    // Every process checks its code, scheduled in for it.
                    let mut pids: Vec<Pid> = self.processes.keys().copied().collect();
                    pids.sort();
                    for pid in pids {
                        if let Some(p) = self.processes.get_mut(&pid) {
                            p.check_tracers();
                        }
                    }
                }
                // No process ran the old code: none was killed.
                Ok(Term::atom(Atom::FALSE))
            }
            ("code_load", [m]) => {
                let module = tracer_module(*m)?;
                match self.modules.load(module) {
                    Ok(()) => {
                        let mut heap = Heap::new();
                        let reply =
                            heap.tuple(&[Word::atom(Atom::new("module")), Word::atom(module)]);
                        Ok(Term::from_parts(heap, reply))
                    }
                    Err(CodeError::NotPurged) => Err(Failure::World("not_purged")),
                    Err(CodeError::NoFile) => Err(Failure::World("nofile")),
                }
            }
            ("tracer_overload", [pid, policy]) => {
                let pid = Pid::from_term(*pid).ok_or(Failure::World("not_a_pid"))?;
                if self.tracers.iter().any(|(p, _)| *p == pid) {
                    return Err(Failure::World("tracer_exists"));
                }
                let policy = overload_policy(*policy).ok_or(Failure::World("bad_policy"))?;
                self.overloads.insert(pid, policy);
                Ok(Term::atom(Atom::OK))
            }
            ("advance_clock", [ns]) => {
                self.clock.advance(ns.as_i64().ok_or(Failure::World("not_an_integer"))?);
                Ok(Term::atom(Atom::OK))
            }
            _ => Err(Failure::Unknown),
        }
    }

    /// After a session is destroyed, ERTS's trace cleaner sends every
    /// process a signal to drop its links to the session (and then every
    /// port, which shows nothing): each process handles it in a run of its
    /// own, in the order of the process table, which is the order of pids.
    /// (The driver, busy running the scenario, handles its own unseen.)
    fn clean_processes(&mut self) {
        let mut pids: Vec<Pid> = self.processes.keys().copied().filter(|p| *p != DRIVER).collect();
        pids.sort();
        for pid in pids {
            self.asked(pid);
        }
    }

    /// `trace:system(S, Event, Value)`. Setting `long_message_queue` again
    /// while a process's queue is long for the session is `unsupported`:
    /// ERTS 17.1 then stops reporting that process in the session, which
    /// the core does not reproduce (`docs/scenarios.md`).
    fn system(&mut self, s: TermRef<'_>, event: TermRef<'_>, value: TermRef<'_>) -> Reply {
        if !self.core.release().has(matchspec::Change::TraceSystem) {
            return Err(Failure::Trace(TraceError::Undefined));
        }
        let session = self.session(s)?;
        let queue_limits = SystemEvent::LongMessageQueue;
        let sets_queue_limits = event.as_atom().and_then(SystemEvent::from_atom)
            == Some(queue_limits)
            && value.as_atom() != Some(Atom::FALSE)
            && SystemMonitor::default().set(queue_limits, value).is_ok()
            && session.tracer().is_some_and(|t| t.is_process());
        if sets_queue_limits && session.has_long_queues() {
            return Err(Failure::World("unsupported"));
        }
        self.core.trace_system(&session, event, value)?;
        Ok(Term::atom(Atom::new("ok")))
    }

    // ---- Names --------------------------------------------------------------------

    /// The live session `name` (a destroyed one is `badarg`, as in OTP).
    fn session(&self, name: TermRef<'_>) -> Result<SessionRef, Failure> {
        let session = self.any_session(name)?;
        if !session.is_alive() {
            return Err(Failure::Trace(TraceError::Session));
        }
        Ok(session)
    }

    /// The session `name`, alive or destroyed.
    fn any_session(&self, name: TermRef<'_>) -> Result<SessionRef, Failure> {
        let name = name.as_atom().ok_or(Failure::Trace(TraceError::Session))?;
        if name.name() == "legacy" {
            return Ok(self.core.legacy().clone());
        }
        self.sessions.get(&name).cloned().ok_or(Failure::Trace(TraceError::Session))
    }

    fn process(&mut self, pid: TermRef<'_>) -> Result<&mut Process, Failure> {
        let pid = Pid::from_term(pid).ok_or(Failure::World("not_a_pid"))?;
        self.processes.get_mut(&pid).ok_or(Failure::World("noproc"))
    }

    /// The tracer process `pid`, created (and spawned) when first named.
    fn tracer(&mut self, pid: Pid) -> TracerRef {
        if let Some((_, tracer)) = self.tracers.iter().find(|(p, _)| *p == pid) {
            return tracer.clone();
        }
        let overload = self.overloads.get(&pid).copied().unwrap_or_default();
        let tracer = Arc::new(
            ProcessTracer::new(pid, self.mailbox.clone(), self.core.clock().clone())
                .with_overload(overload),
        );
        self.tracers.push((pid, tracer.clone()));
        self.core.register_tracer(pid, tracer.clone());
        if !self.processes.contains_key(&pid) {
            let process = self.core.spawn(pid, Some(idle()));
            self.add_process(process);
        }
        tracer
    }

    /// The tracer processes a command names come to exist as it starts,
    /// whether it then succeeds or not: every pid in a tracer position that
    /// was never a process (a session's tracer, `{tracer | meta, Pid}`
    /// anywhere in the term, the collector in a tracer module's state), in
    /// the order named.
    fn name_tracers(&mut self, command: TermRef<'_>) {
        let mut pids = Vec::new();
        tracer_positions(command, &mut pids);
        for pid in pids {
            if !self.world.pids_ever.contains(&pid) {
                self.tracer(pid);
            }
        }
    }

    /// A tracer given as a pid, `{tracer|meta, Pid}` or `{tracer|meta,
    /// Module, State}`.
    fn tracer_term(&mut self, spec: TermRef<'_>) -> Option<TracerRef> {
        let pid = match spec.as_tuple() {
            Some(t) if t.len() == 2 => t.get(1)?,
            Some(t) if t.len() == 3 => return self.module_tracer(t.get(1)?, t.get(2)?),
            Some(_) => return None,
            None => spec,
        };
        Some(self.tracer(Pid::from_term(pid)?))
    }

    /// A session's tracer: a pid or `{Module, State}` (no prefix).
    fn session_tracer(&mut self, spec: TermRef<'_>) -> Option<TracerRef> {
        match spec.as_tuple() {
            Some(t) if t.len() == 2 => self.module_tracer(t.get(0)?, t.get(1)?),
            Some(_) => None,
            None => Some(self.tracer(Pid::from_term(spec)?)),
        }
    }

    /// Tracer module `module` with `state`: `erl_tracer` with a pid (the
    /// tracer process), or `tracer_test` while loaded, whose collector is a
    /// tracer process from now on. Other modules have no tracer callbacks
    /// (badarg).
    fn module_tracer(&mut self, module: TermRef<'_>, state: TermRef<'_>) -> Option<TracerRef> {
        let module = module.as_atom()?;
        match module.name() {
            TestTracerModule::MODULE => {}
            "erl_tracer" => return Some(self.tracer(Pid::from_term(state)?)),
            _ => return None,
        }
        let code = self.modules.code(module).filter(|c| c.is_loaded())?;
        let tracer = TestTracerModule::new(state, self.mailbox.clone());
        if let Some(collector) = tracer.collector() {
            self.tracer(collector);
        }
        Some(Arc::new(ModuleTracer::new(code, tracer)))
    }

    /// What `ensure_tracer_module_loaded/2` of `erlang` and `trace` does
    /// before the BIF: it calls `Module:enabled/3` of a tracer module named
    /// in the flag list as `{Key, Module, State}` that is not loaded, which
    /// raises `undef` when there is no such module, and loads it when it is
    /// on the code path. `erlang`'s looks only at the first `{Key, ...}`
    /// tuple (`lists:keyfind/3`), `trace`'s at every one. Loaded here:
    /// `erl_tracer`, `scenario`, the declared modules and `tracer_test`
    /// (loaded on demand once deleted).
    fn ensure_tracer_modules(
        &self,
        key: &str,
        flags: TermRef<'_>,
        first_only: bool,
    ) -> Result<(), Failure> {
        for item in flags.list_items() {
            let Some(t) = item.as_tuple() else { continue };
            if t.get(0).and_then(|k| k.as_atom()).is_none_or(|k| k.name() != key) {
                continue;
            }
            if let (3, Some(module)) = (t.len(), t.get(1).and_then(|m| m.as_atom()))
                && !self.module_loaded(module)
                && self.modules.load(module).is_err()
            {
                return Err(Failure::World("undef"));
            }
            if first_only {
                break;
            }
        }
        Ok(())
    }

    fn module_loaded(&self, module: Atom) -> bool {
        let module_info = Mfa { module, function: Atom::new("module_info"), arity: 0 };
        matches!(module.name(), "erl_tracer" | "scenario")
            || self.modules.is_loaded(module)
            || self.core.function(module_info).is_some()
    }

    // ---- Commands -----------------------------------------------------------------

    fn session_create(
        &mut self,
        name: TermRef<'_>,
        tracer: TermRef<'_>,
        opts: TermRef<'_>,
    ) -> Reply {
        let name = name.as_atom().ok_or(TraceError::BadOpt)?;
        if !opts.is_nil() {
            return Err(TraceError::BadOpt.into());
        }
        let tracer = match tracer.as_atom() {
            Some(Atom::UNDEFINED) => None,
            _ => Some(self.session_tracer(tracer).ok_or(TraceError::BadOpt)?),
        };
        let session = self.core.session_create(name, tracer);
        self.sessions.insert(name, session);
        Ok(Term::atom(name))
    }

    fn session_info(&mut self, what: TermRef<'_>) -> Reply {
        let mut heap = Heap::new();
        let list = if let Some(pid) = Pid::from_term(what) {
            info::session_info_process(&self.core, pid, &mut heap)
        } else if let Some(port) = PortId::from_term(what) {
            info::session_info_port(&self.core, port, &mut heap)
        } else if what.as_tuple().is_some() {
            let mfa = exact_mfa(what).ok_or(TraceError::BadTarget)?;
            info::session_info_function(&self.core, mfa, &mut heap)
        } else if let Some(which) = what.as_atom() {
            let sessions =
                info::sessions_tracing(&self.core, which).ok_or(TraceError::BadTarget)?;
            let refs: Vec<Word> = sessions.iter().map(|s| s.weak_ref(&mut heap)).collect();
            heap.list(&refs)
        } else {
            return Err(TraceError::BadTarget.into());
        };
        // Weak references `{Name, Id}` show as names.
        let view = heap.view(list);
        let names: Option<Vec<Term>> = view.proper_list().map(|items| {
            items
                .iter()
                .map(|r| r.as_tuple().and_then(|t| t.get(0)).unwrap_or(*r).to_owned())
                .collect()
        });
        Ok(match names {
            Some(names) => Term::list(names),
            None => view.to_owned(),
        })
    }

    fn trace_process(
        &mut self,
        session: &SessionRef,
        spec: TermRef<'_>,
        how: TermRef<'_>,
        flags_term: TermRef<'_>,
    ) -> Reply {
        let spec = match spec.as_atom().map(Atom::name) {
            Some("all" | "processes") => ProcessSpec::All,
            Some("existing" | "existing_processes") => ProcessSpec::Existing,
            Some("new" | "new_processes") => ProcessSpec::New,
            _ => ProcessSpec::Pid(Pid::from_term(spec).ok_or(TraceError::BadTarget)?),
        };
        let change = self.flag_change(session, how, flags_term)?;
        let n = self.core.trace_processes(session, spec, change)?;
        Ok(Term::from(n as i64))
    }

    /// `trace:port/4`.
    fn trace_port(
        &mut self,
        session: &SessionRef,
        spec: TermRef<'_>,
        how: TermRef<'_>,
        flags_term: TermRef<'_>,
    ) -> Reply {
        let spec = port_spec(spec).ok_or(TraceError::BadTarget)?;
        let change = self.flag_change(session, how, flags_term)?;
        let n = self.core.trace_ports(session, spec, change)?;
        Ok(Term::from(n as i64))
    }

    /// Legacy `erlang:trace/3`: a port or `ports`, `existing_ports`,
    /// `new_ports` change ports; `all`, `existing` and `new` change
    /// processes and ports (the ports only for a flag list with a port flag
    /// or a modifier, as in ERTS), answering the sum.
    fn erlang_trace(
        &mut self,
        spec: TermRef<'_>,
        how: TermRef<'_>,
        flags_term: TermRef<'_>,
    ) -> Reply {
        let legacy = self.core.legacy().clone();
        let ports_only = PortId::from_term(spec).is_some()
            || matches!(
                spec.as_atom().map(Atom::name),
                Some("ports" | "existing_ports" | "new_ports")
            );
        if ports_only {
            return self.trace_port(&legacy, spec, how, flags_term);
        }
        let processes = self.trace_process(&legacy, spec, how, flags_term)?;
        if !matches!(spec.as_atom().map(Atom::name), Some("all" | "existing" | "new")) {
            return Ok(processes);
        }
        let ports = self.trace_port(&legacy, spec, how, flags_term)?;
        let sum = processes.as_ref().as_i64().unwrap_or(0) + ports.as_ref().as_i64().unwrap_or(0);
        Ok(Term::from(sum))
    }

    /// Reads the `How` and `Flags` arguments of `trace:process/4` and
    /// `trace:port/4`, resolving the tracer: `{tracer, T}` (only in a
    /// session without a tracer), else in such a session the calling
    /// process (the legacy default). `cpu_timestamp` is refused: the core
    /// has no CPU clock.
    fn flag_change(
        &mut self,
        session: &SessionRef,
        how: TermRef<'_>,
        flags_term: TermRef<'_>,
    ) -> Result<FlagChange, Failure> {
        let on = match how.as_atom() {
            Some(Atom::TRUE) => true,
            Some(Atom::FALSE) => false,
            _ => return Err(TraceError::BadOpt.into()),
        };
        let list = parse_flag_list(flags_term).ok_or(TraceError::BadOpt)?;
        if list.cpu_timestamp {
            return Err(TraceError::BadOpt.into());
        }
        let tracer = match list.tracer {
            Some(_) if session.tracer().is_some() => return Err(TraceError::BadOpt.into()),
            Some(t) => Some(self.tracer_term(t).ok_or(TraceError::BadOpt)?),
            None if session.tracer().is_none() && on => Some(self.tracer(DRIVER)),
            None => None,
        };
        let mut flags = TraceFlags::from_bits_truncate(list.mask);
        // `all` also sets the timestamp flags.
        if has_atom(flags_term, "all") {
            flags |= TraceFlags::TIMESTAMPS;
        }
        Ok(if on { FlagChange::On { flags, tracer } } else { FlagChange::Off { flags } })
    }

    fn trace_function(
        &mut self,
        session: &SessionRef,
        mfa: TermRef<'_>,
        pattern: TermRef<'_>,
        flags: TermRef<'_>,
    ) -> Reply {
        let default_meta = match session.tracer() {
            Some(t) => Some(t.clone()),
            None => Some(self.tracer(DRIVER)),
        };
        let mut resolve = |spec: TermRef<'_>| self.tracer_term(spec);
        let flags = parse_pattern_flags(session, flags, &mut resolve, default_meta)?;
        let action = parse_pattern_action(&self.core, pattern)?;
        let n = if mfa.as_atom() == Some(Atom::new("on_load")) {
            self.core.set_on_load(session, action, flags)?
        } else {
            let pattern = MfaPattern::from_term(mfa)?;
            self.core.set_pattern(session, pattern, &action, &flags)?
        };
        Ok(Term::from(n as i64))
    }

    /// `trace:info/3` (and `erlang:trace_info/2` in the legacy session).
    /// `item` may be any term: what ERTS does with one it does not know
    /// depends on the target (see `info`).
    fn info(&mut self, session: &SessionRef, what: TermRef<'_>, item: TermRef<'_>) -> Reply {
        let key = || item.as_atom().ok_or(TraceError::BadOpt);
        let mut heap = Heap::new();
        let answer = if let Some(pid) = Pid::from_term(what) {
            info::process_info(&self.core, session, ProcessSpec::Pid(pid), key()?, &mut heap)?
        } else if let Some(port) = PortId::from_term(what) {
            info::port_info(&self.core, session, PortSpec::Port(port), item, &mut heap)?
        } else if what.as_tuple().is_some() {
            let mfa = exact_mfa(what).ok_or(TraceError::BadTarget)?;
            info::function_info(&self.core, session, mfa, item, &mut heap)?
        } else {
            match what.as_atom().map(Atom::name) {
                Some("new" | "new_processes") => {
                    info::process_info(&self.core, session, ProcessSpec::New, key()?, &mut heap)?
                }
                Some("on_load") => {
                    on_load_info(&self.core, session, item, &mut heap).ok_or(TraceError::BadOpt)?
                }
                Some("send") => {
                    info::message_pattern_info(session, MessageEvent::Send, key()?, &mut heap)?
                }
                Some("receive") => {
                    info::message_pattern_info(session, MessageEvent::Receive, key()?, &mut heap)?
                }
                Some("new_ports") => {
                    info::port_info(&self.core, session, PortSpec::New, item, &mut heap)?
                }
                _ => return Err(TraceError::BadTarget.into()),
            }
        };
        Ok(Term::from_parts(heap, answer))
    }

    // ---- Host events --------------------------------------------------------------

    fn declare_module(&mut self, name: TermRef<'_>, functions: TermRef<'_>) -> Reply {
        let module = name.as_atom().ok_or(Failure::World("bad_module"))?;
        let items = functions.proper_list().ok_or(Failure::World("bad_module"))?;
        let mut declared = Vec::with_capacity(items.len());
        for item in items {
            let t = item.as_tuple().ok_or(Failure::World("bad_module"))?;
            let f = t.get(0).and_then(|f| f.as_atom());
            let a = t.get(1).and_then(|a| a.as_i64()).and_then(|a| u8::try_from(a).ok());
            let exported = match (t.len(), t.get(2).and_then(|l| l.as_atom()).map(Atom::name)) {
                (2, _) => true,
                (3, Some("local")) => false,
                _ => return Err(Failure::World("bad_module")),
            };
            match (f, a) {
                (Some(name), Some(arity)) => {
                    declared.push(Function { name, arity, exported, bif: false })
                }
                _ => return Err(Failure::World("bad_module")),
            }
        }
        self.core.declare_module(module, &declared)?;
        Ok(Term::atom(Atom::OK))
    }

    fn spawn(&mut self, parent: TermRef<'_>, child: TermRef<'_>) -> Reply {
        let parent = Pid::from_term(parent).ok_or(Failure::World("not_a_pid"))?;
        if !self.processes.contains_key(&parent) {
            return Err(Failure::World("noproc"));
        }
        if let Some(child) = RemotePid::from_term(child) {
            return self.spawn_remote_event(parent, child);
        }
        let child = Pid::from_term(child).ok_or(Failure::World("not_a_pid"))?;
        if self.processes.contains_key(&child) {
            return Err(Failure::World("already_exists"));
        }
        self.step_if_puppet(parent, world::step(&[world::atom("spawn")], &[]));
        self.spawn_in_step(parent, child);
        Ok(Term::atom(Atom::OK))
    }

    fn call(&mut self, p: TermRef<'_>, call: TermRef<'_>, reach: Reach, style: CallStyle) -> Reply {
        let t = call.as_tuple().filter(|t| t.len() == 3).ok_or(Failure::World("bad_call"))?;
        let (m, f, args) = (t.get(0).expect("3"), t.get(1).expect("3"), t.get(2).expect("3"));
        let arity = args.list_len().ok_or(Failure::World("bad_call"))?;
        let mfa = Mfa {
            module: m.as_atom().ok_or(Failure::World("bad_call"))?,
            function: f.as_atom().ok_or(Failure::World("bad_call"))?,
            arity: u8::try_from(arity).map_err(|_| Failure::World("bad_call"))?,
        };
        let entry = self.core.function(mfa).ok_or(Failure::World("undef"))?;
        if reach == Reach::Remote && !entry.is_exported() {
            return Err(Failure::World("undef"));
        }
        let pid = self.process(p)?.pid();
        if reach == Reach::Local && self.functions(pid).next().map(|f| f.module) != Some(mfa.module)
        {
            return Err(Failure::World("not_local"));
        }
        if matches!(style, CallStyle::Tail | CallStyle::Try) {
            self.active(pid)?;
        }
        let (m, f) = (Word::atom(mfa.module), Word::atom(mfa.function));
        let step = match (reach, style) {
            (Reach::Remote, CallStyle::Body) => world::step(&[world::atom("call"), m, f], &[args]),
            (Reach::Remote, CallStyle::Try) => {
                world::step(&[world::atom("try_call"), m, f], &[args])
            }
            (Reach::Remote, CallStyle::Tail) => {
                world::step(&[world::atom("tail_call"), m, f], &[args])
            }
            (Reach::Local, CallStyle::Tail) => {
                world::step(&[world::atom("local_tail_call"), f], &[args])
            }
            (Reach::Local, _) => world::step(&[world::atom("local_call"), f], &[args]),
        };
        self.step_if_puppet(pid, step);
        let process = self.processes.get_mut(&pid).ok_or(Failure::World("noproc"))?;
        match self.host_stacks.get_mut(&pid) {
            Some(stack) => stack.call(process, &entry, &args, reach, style)?,
            None => process.call(&entry, args, reach, style)?,
        }
        Ok(Term::atom(Atom::OK))
    }

    /// The innermost function of `pid` returns `value`.
    fn return_value(&mut self, pid: Pid, value: TermRef<'_>) -> Result<(), Failure> {
        let process = self.processes.get_mut(&pid).ok_or(Failure::World("noproc"))?;
        match self.host_stacks.get_mut(&pid) {
            Some(stack) => stack.return_value(process, &value)?,
            None => process.return_value(value)?,
        }
        Ok(())
    }

    /// The innermost function of `pid` raises.
    fn raise(&mut self, pid: Pid, class: Atom, reason: TermRef<'_>) -> Result<Raised, Failure> {
        let process = self.processes.get_mut(&pid).ok_or(Failure::World("noproc"))?;
        Ok(match self.host_stacks.get_mut(&pid) {
            Some(stack) => stack.raise(process, class, reason)?,
            None => process.raise(class, reason)?,
        })
    }

    /// The active functions of `pid`, innermost first, from whoever keeps
    /// its stack.
    fn functions(&self, pid: Pid) -> Box<dyn Iterator<Item = Mfa> + '_> {
        match (self.host_stacks.get(&pid), self.processes.get(&pid)) {
            (Some(stack), _) => Box::new(stack.functions()),
            (None, Some(process)) => Box::new(process.functions()),
            (None, None) => Box::new(std::iter::empty()),
        }
    }

    /// Adds a spawned process to the world; its stack is kept as the
    /// options say.
    fn add_process(&mut self, mut process: Process) {
        let pid = process.pid();
        self.world.pids_ever.insert(pid);
        if self.options.stack == StackKeeper::Host {
            let stack = HostStack::new(&mut process, Some(idle()))
                .expect("a fresh process has no trace frames");
            self.host_stacks.insert(pid, stack);
        }
        self.processes.insert(pid, process);
    }
}

impl Runner {
    /// `{allocate, P, Words}`: `P` allocates `Words` heap words (what
    /// `call_memory` accounts).
    fn allocate(&mut self, p: TermRef<'_>, words: TermRef<'_>) -> Reply {
        let pid = self.process(p)?.pid();
        let count = words.as_i64().and_then(|w| u64::try_from(w).ok());
        let count = count.ok_or(Failure::World("not_an_integer"))?;
        self.step_if_puppet(pid, world::step(&[world::atom("allocate")], &[words]));
        self.process(p)?.allocated(count)?;
        Ok(Term::atom(Atom::OK))
    }

    /// Fails unless the process has an active function (what a return,
    /// raise or tail call needs), before any step is sent.
    fn active(&mut self, pid: Pid) -> Result<(), Failure> {
        if !self.processes.contains_key(&pid) {
            return Err(Failure::World("noproc"));
        }
        match self.functions(pid).next() {
            Some(_) => Ok(()),
            None => Err(Failure::World("no_active_function")),
        }
    }

    /// Sends the step to `pid` if it is a puppet (the driver and tracer
    /// processes act without steps).
    fn step_if_puppet(&mut self, pid: Pid, step: Term) {
        if self.is_puppet(pid) {
            self.step_to(pid, step);
        }
    }
}

/// Is `tag` a command whose reply is a `trace:info/3` answer?
/// The ports a `trace:port/4` (or `erlang:trace/3`) spec names.
fn port_spec(spec: TermRef<'_>) -> Option<PortSpec> {
    if let Some(port) = PortId::from_term(spec) {
        return Some(PortSpec::Port(port));
    }
    Some(match spec.as_atom()?.name() {
        "all" | "ports" => PortSpec::All,
        "existing" | "existing_ports" => PortSpec::Existing,
        "new" | "new_ports" => PortSpec::New,
        _ => return None,
    })
}

fn is_info(tag: Atom) -> bool {
    matches!(tag.name(), "info" | "erlang_trace_info")
}

/// The idle loop every scenario process starts in.
/// `in` (`scheduled_in`) or `out` of `process`, in the function on top of
/// its stack, wherever that is kept.
fn trace_schedule(process: &mut Process, host_stack: Option<&HostStack>, scheduled_in: bool) {
    match (host_stack, scheduled_in) {
        (Some(stack), true) => process.trace_schedule_in_at(false, stack),
        (Some(stack), false) => process.trace_schedule_out_at(false, stack),
        (None, true) => process.trace_schedule_in(false),
        (None, false) => process.trace_schedule_out(false),
    }
}

fn idle() -> Mfa {
    Mfa::new("scenario", "idle", 0)
}

/// Does the list `list` hold the atom `name`?
fn has_atom(list: TermRef<'_>, name: &str) -> bool {
    list.list_items().any(|item| item.as_atom().is_some_and(|a| a.name() == name))
}

/// `{M, F, A}` without wildcards.
fn exact_mfa(term: TermRef<'_>) -> Option<Mfa> {
    let t = term.as_tuple().filter(|t| t.len() == 3)?;
    Some(Mfa {
        module: t.get(0)?.as_atom()?,
        function: t.get(1)?.as_atom()?,
        arity: u8::try_from(t.get(2)?.as_i64()?).ok()?,
    })
}

/// `unbounded`, `{drop, Limit}` or `{remove, Limit}`.
fn overload_policy(term: TermRef<'_>) -> Option<Overload> {
    if term.as_atom().map(Atom::name) == Some("unbounded") {
        return Some(Overload::Unbounded);
    }
    let t = term.as_tuple().filter(|t| t.len() == 2)?;
    let limit = usize::try_from(t.get(1)?.as_i64()?).ok()?;
    match t.get(0)?.as_atom()?.name() {
        "drop" => Some(Overload::Drop { limit }),
        "remove" => Some(Overload::Remove { limit }),
        _ => None,
    }
}

/// A pattern written `{fun2ms, "fun(...) -> ... end"}`: the spec
/// `dbg:fun2ms/1` makes of the fun. Any other pattern is `None`, used as it is.
fn fun_pattern(pattern: TermRef<'_>) -> Result<Option<Term>, Failure> {
    let Some(t) = pattern.as_tuple().filter(|t| t.len() == 2) else { return Ok(None) };
    if t.get(0).and_then(|a| a.as_atom()).map(Atom::name) != Some("fun2ms") {
        return Ok(None);
    }
    let text: Option<String> = t.get(1).and_then(|s| s.proper_list()).and_then(|chars| {
        chars.iter().map(|c| char::from_u32(u32::try_from(c.as_i64()?).ok()?)).collect()
    });
    let text = text.ok_or(Failure::World("fun2ms_needs_a_string"))?;
    fun2ms(&text, Dialect::Trace, &[]).map(Some).map_err(|e| Failure::Fun2ms(e.message()))
}

/// `trace:send/3` and `trace:recv/3` (the flag list must be empty).
fn message_pattern(
    core: &TraceCore,
    session: &SessionRef,
    event: MessageEvent,
    pattern: TermRef<'_>,
    flags: TermRef<'_>,
) -> Reply {
    if !flags.is_nil() {
        return Err(TraceError::BadOpt.into());
    }
    let n = core.set_message_pattern(session, event, pattern)?;
    Ok(Term::from(n as i64))
}

/// Commands (configuration and questions), as opposed to host events.
fn is_command(tag: Atom) -> bool {
    matches!(
        tag.name(),
        "session_create"
            | "session_info"
            | "process"
            | "port"
            | "function"
            | "send"
            | "recv"
            | "info"
            | "erlang_trace"
            | "erlang_trace_pattern"
            | "erlang_trace_info"
            | "system_tracer"
    )
}

/// The pids in tracer positions of `command`, in order: the tracer of
/// `session_create` and `system_tracer` (a pid, or the collector in a
/// module's `{Module, {Decisions, Collector, Extra}}`), and anywhere in
/// the term `{tracer | meta, Pid}` and `{tracer | meta, Module, State}`.
fn tracer_positions(command: TermRef<'_>, pids: &mut Vec<Pid>) {
    let Some(t) = command.as_tuple() else { return };
    let tracer_arg = match t.get(0).and_then(|k| k.as_atom()).map(Atom::name) {
        Some("system_tracer") if t.len() == 2 => t.get(1),
        Some("session_create") if t.len() == 4 => t.get(2),
        _ => None,
    };
    let Some(tracer) = tracer_arg else { return positions_in(command, pids) };
    match tracer.as_tuple() {
        Some(module) if module.len() == 2 => state_collector(module.get(1), pids),
        _ => pids.extend(Pid::from_term(tracer)),
    }
    if let Some(opts) = t.get(3).filter(|_| t.len() == 4) {
        positions_in(opts, pids);
    }
}

/// `{tracer | meta, Pid}` and `{tracer | meta, Module, State}` in `term`
/// (walked with an explicit stack, in order).
fn positions_in(term: TermRef<'_>, pids: &mut Vec<Pid>) {
    let mut stack = vec![term];
    while let Some(term) = stack.pop() {
        let items: Vec<TermRef<'_>> = if let Some(t) = term.as_tuple() {
            let key = t.get(0).and_then(|k| k.as_atom()).map(Atom::name);
            let tracer_key = matches!(key, Some("tracer" | "meta"));
            if tracer_key && t.len() == 2 {
                let pid = t.get(1).expect("two elements");
                pids.extend(Pid::from_term(pid));
                vec![pid]
            } else if tracer_key && t.len() == 3 {
                let state = t.get(2).expect("three elements");
                pids.extend(Pid::from_term(state));
                state_collector(Some(state), pids);
                vec![state]
            } else {
                t.iter().collect()
            }
        } else {
            term.list_items().collect()
        };
        stack.extend(items.into_iter().rev());
    }
}

/// The collector of a tracer module's state `{Decisions, Collector, ...}`.
fn state_collector(state: Option<TermRef<'_>>, pids: &mut Vec<Pid>) {
    let collector =
        state.and_then(|s| s.as_tuple()).filter(|s| s.len() >= 2).and_then(|s| s.get(1));
    pids.extend(collector.and_then(Pid::from_term));
}

/// The process a question is about, if it is one the process answers
/// itself: `info`, `erlang_trace_info` and `session_info` of a pid (not
/// `seq_token`: `process_info/2` reads the token without it).
fn asked_process(tag: Atom, term: TermRef<'_>) -> Option<Pid> {
    let t = term.as_tuple()?;
    let about = match (tag.name(), t.len()) {
        ("info", 4) => t.get(2)?,
        ("erlang_trace_info", 3) | ("session_info", 2) => t.get(1)?,
        _ => return None,
    };
    Pid::from_term(about)
}
