//! An embeddable trace core: ERTS's call tracing, driven by match specs.
//!
//! A host (a VM written in Rust, an instrumented program, a simulator)
//! declares its functions and processes and reports what they do; the core
//! decides from sessions, process trace flags, function trace patterns and
//! their match specs what to trace, and hands trace events to tracers.
//! Semantics follow OTP 27's `trace` module (sessions), the legacy
//! `erlang:trace/3` API (the [legacy session](TraceCore::legacy)) and the
//! `erl_tracer` behaviour.
//!
//! # Contents
//!
//! 1. [A first trace](#a-first-trace)
//! 2. [Breakpoints and generations](#breakpoints-and-generations)
//! 3. [Who keeps the stack](#who-keeps-the-stack)
//! 4. [Tracers](#tracers)
//! 5. [Messages, links and sequential tracing](#messages-links-and-sequential-tracing)
//! 6. [Ports](#ports)
//!
//! # A first trace
//!
//! ```
//! use std::sync::Arc;
//! use matchspec::term::{Atom, Term};
//! use matchspec_runtime::{CallStyle, CoreConfig, Function, ManualClock, Mfa, Pid, ProcessTracer, Reach, TraceCore, TraceFlags};
//! use matchspec_runtime::commands::{FlagChange, ProcessSpec};
//! use matchspec_runtime::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
//! use matchspec_runtime::breakpoint::BpFlags;
//!
//! let clock = Arc::new(ManualClock::new());
//! let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
//! // A tracer process whose mailbox is a channel.
//! let (mailbox, inbox) = crossbeam_channel::unbounded();
//! let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock));
//! let session = core.session_create(Atom::new("s1"), Some(tracer));
//!
//! // The host's code and a process.
//! let f = core.declare_module(Atom::new("m"), &[Function::exported("f", 1)])?.remove(0);
//! let mut p = core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
//! core.trace_processes(&session, ProcessSpec::Pid(p.pid()), FlagChange::on(TraceFlags::CALL))?;
//!
//! // Trace m:f/1 when its argument is greater than 10, with its return.
//! let spec = Term::parse("[{['$1'], [{'>', '$1', 10}], [{return_trace}]}]")?;
//! let action = parse_pattern_action(&core, spec.as_ref())?;
//! let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
//! core.set_pattern(&session, MfaPattern::from_term(Term::parse("{m,f,1}")?.as_ref())?, &action, &local)?;
//!
//! p.call(&f, Term::parse("[5]")?.as_ref(), Reach::Remote, CallStyle::Body)?;
//! p.return_value(Term::parse("small")?.as_ref())?;
//! p.call(&f, Term::parse("[42]")?.as_ref(), Reach::Remote, CallStyle::Body)?;
//! p.return_value(Term::parse("big")?.as_ref())?;
//!
//! let messages: Vec<String> = inbox.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect();
//! assert_eq!(messages, [
//!     "{trace,<0.80.0>,call,{m,f,[42]}}",
//!     "{trace,<0.80.0>,return_from,{m,f,1},big}",
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Breakpoints and generations
//!
//! Every declared function has a [`FunctionEntry`]. Calling an untraced
//! function costs the host one atomic load and a branch
//! ([`FunctionEntry::is_traced`]). A traced function has one breakpoint
//! record with two generations of settings: commands write the staging
//! generation and switch generations in one atomic store, so threads
//! hitting breakpoints never block and never see half a change; old
//! settings are freed once no thread can read them ([`core`] explains how).
//!
//! # Who keeps the stack
//!
//! `{caller}`, `{current_stacktrace}`, `return_to` and the return and
//! exception traces need the process's stack, also the frames of calls
//! made before tracing was switched on. Either the core keeps a copy of
//! it, and the host reports every call, return and raise
//! ([`Process::call`], [`Process::return_value`], [`Process::raise`]:
//! simple, about 7 ns a call); or the host keeps it, as a VM does anyway
//! ([`Process::keep_own_stack`]): it reports only calls of traced
//! functions and the end of the frames the core asked it to watch
//! ([`Watch`]), and lends the core its stack ([`CallStack`]) when a trace
//! reads it. An untraced call then costs the host the
//! [`FunctionEntry::is_traced`] check, and its return one test of the
//! frame's watch. [`HostStack`] is such a host stack, ready to use; the
//! scenario goldens run both ways.
//!
//! ```
//! use std::sync::Arc;
//! use matchspec::term::{Atom, Term};
//! use matchspec_runtime::{CallStyle, CoreConfig, Function, HostStack, ManualClock, Mfa, Pid, ProcessTracer, Reach, TraceCore, TraceFlags};
//! use matchspec_runtime::commands::{FlagChange, ProcessSpec};
//! use matchspec_runtime::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
//! use matchspec_runtime::breakpoint::BpFlags;
//!
//! let clock = Arc::new(ManualClock::new());
//! let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
//! let (mailbox, inbox) = crossbeam_channel::unbounded();
//! let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock));
//! let session = core.session_create(Atom::new("s1"), Some(tracer));
//! let functions = [Function::exported("f", 0), Function::exported("g", 0)];
//! let entries = core.declare_module(Atom::new("m"), &functions)?;
//! let (f, g) = (&entries[0], &entries[1]);
//! let mut p = core.spawn(Pid::new(80, 0), None);
//! let mut stack = HostStack::new(&mut p, Some(Mfa::new("m", "main", 0)))?;
//! core.trace_processes(&session, ProcessSpec::Pid(p.pid()), FlagChange::on(TraceFlags::CALL))?;
//! let spec = Term::parse("[{'_', [], [{message, {caller}}, {return_trace}]}]")?;
//! let action = parse_pattern_action(&core, spec.as_ref())?;
//! let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
//! core.set_pattern(&session, MfaPattern::from_term(Term::parse("{m,g,0}")?.as_ref())?, &action, &local)?;
//!
//! let (nil, done) = (Term::nil(), Term::atom(Atom::new("done")));
//! stack.call(&mut p, f, &nil.as_ref(), Reach::Remote, CallStyle::Body)?; // untraced: the core hears nothing
//! stack.call(&mut p, g, &nil.as_ref(), Reach::Remote, CallStyle::Body)?; // traced: its frame is watched
//! assert_eq!(p.stack_depth(), 2); // g's frame and its return_trace frame
//! stack.return_value(&mut p, &done.as_ref())?;
//! stack.return_value(&mut p, &done.as_ref())?;
//!
//! let messages: Vec<String> = inbox.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect();
//! assert_eq!(messages, [
//!     "{trace,<0.80.0>,call,{m,g,[]},{m,f,0}}",
//!     "{trace,<0.80.0>,return_from,{m,g,0},done}",
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Tracers
//!
//! [`Tracer`] is the `erl_tracer` behaviour: `enabled` (trace, discard or
//! remove) and `trace`, with per-kind variants falling back to the generic
//! ones. [`ProcessTracer`] is the default: it builds the tuples ERTS's
//! default tracer sends (`{trace, Pid, call, {M, F, Args}}`, `trace_ts`
//! with the timestamp last, the match spec's message before it) and
//! delivers them to a channel. Timestamps come from the core's [`Clock`];
//! [`ManualClock`] makes them exact in tests.
//!
//! # Messages, links and sequential tracing
//!
//! A message has three trace points: [`Process::send`] in the sender (the
//! `send` event and the sequential trace token's send), then
//! [`Process::message_arrived`] when it enters the receiver's queue (the
//! `'receive'` event) and [`Process::consume`] when a `receive` takes it
//! (the receiver takes the token). Links are signals ([`LinkSignal`]);
//! scheduling and garbage collection are reported by the host
//! ([`Process::trace_schedule_in`], [`Process::trace_gc`]).
//!
//! ```
//! use std::sync::Arc;
//! use matchspec::term::{Atom, Term};
//! use matchspec_runtime::{CoreConfig, ManualClock, Mfa, Origin, Pid, ProcessTracer, TraceCore, TraceFlags};
//! use matchspec_runtime::commands::{FlagChange, ProcessSpec};
//!
//! let clock = Arc::new(ManualClock::new());
//! let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
//! let (mailbox, inbox) = crossbeam_channel::unbounded();
//! let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock));
//! core.set_system_seq_tracer(Some(tracer.clone()))?;
//! let session = core.session_create(Atom::new("s1"), Some(tracer));
//! let mut a = core.spawn(Pid::new(80, 0), Some(Mfa::new("m", "loop", 0)));
//! let mut b = core.spawn(Pid::new(81, 0), Some(Mfa::new("m", "loop", 0)));
//! core.trace_processes(&session, ProcessSpec::Pid(a.pid()), FlagChange::on(TraceFlags::SEND))?;
//! core.trace_processes(&session, ProcessSpec::Pid(b.pid()), FlagChange::on(TraceFlags::RECEIVE))?;
//!
//! // `a` labels its sequential trace, traces sends, and sends `hello` to `b`.
//! let mut heap = matchspec::term::Heap::new();
//! for (key, value) in [("label", "7"), ("send", "true"), ("'receive'", "true")] {
//!     a.seq_trace_set(Term::parse(key)?.as_ref(), Term::parse(value)?.as_ref(), &mut heap);
//! }
//! let (to, hello) = (Term::parse("<0.81.0>")?, Term::parse("hello")?);
//! let token = a.send(to.as_ref(), Some(b.pid()), hello.as_ref());
//! b.message_arrived(Origin::Process(a.pid()), hello.as_ref());
//! b.consume(hello.as_ref(), &token);
//!
//! let messages: Vec<String> = inbox.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect();
//! assert_eq!(messages, [
//!     "{trace,<0.80.0>,send,hello,<0.81.0>}",
//!     "{seq_trace,7,{send,{0,1},<0.80.0>,<0.81.0>,hello}}",
//!     "{trace,<0.81.0>,'receive',hello}",
//!     "{seq_trace,7,{'receive',{0,1},<0.80.0>,<0.81.0>,hello}}",
//! ]);
//! assert_eq!(b.tracee().seq_state().token().map(|t| t.serial), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Ports
//!
//! A host opens ports with [`TraceCore::open_port`], which applies each
//! session's settings for new ports, and reports what each [`Port`] does:
//! its tasks, links, names, messages and closing. `trace:port/4` is
//! [`TraceCore::trace_ports`].
//!
//! ```
//! use std::sync::Arc;
//! use matchspec::term::{Atom, Term};
//! use matchspec_runtime::{CoreConfig, ManualClock, Mfa, Pid, PortId, ProcessTracer, TraceCore, TraceFlags};
//! use matchspec_runtime::commands::{FlagChange, PortSpec};
//!
//! let clock = Arc::new(ManualClock::new());
//! let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
//! let (mailbox, inbox) = crossbeam_channel::unbounded();
//! let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock));
//! let session = core.session_create(Atom::new("s1"), Some(tracer));
//! core.trace_ports(&session, PortSpec::New, FlagChange::on(TraceFlags::PORTS))?;
//!
//! let mut owner = core.spawn(Pid::new(80, 0), Some(Mfa::new("m", "loop", 0)));
//! let port = core.open_port(PortId(5), owner.pid(), Atom::new("cat"));
//! port.linked_by(owner.pid());
//! owner.link_port(port.id());
//! port.close(Term::parse("normal")?.as_ref(), None);
//!
//! let messages: Vec<String> = inbox.try_iter().map(|d| d.message.as_ref().to_string()).collect();
//! assert_eq!(messages, [
//!     "{trace,#Port<0.5>,open,<0.80.0>,cat}",
//!     "{trace,#Port<0.5>,getting_linked,<0.80.0>}",
//!     "{trace,#Port<0.5>,closed,normal}",
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A simulated Erlang world over this core, which runs the scenario files
//! of `msc trace`, is the `msc-world` crate of the repository (not
//! published).

#![forbid(unsafe_code)]

// The layers, each with its rule (ARCHITECTURE.md): the model is data;
// the core is the registry and the generation protocol over it; the hit
// path and control both build on the core and never on each other.
mod control;
pub mod core;
mod hit;
mod model;
#[cfg(test)]
mod test_support;

pub use control::{commands, info, on_load, pattern, query};
pub use model::{
    breakpoint, clock, console, counters, error, flags, ids, seq_trace, session, system_monitor,
    trace_spec, tracee, tracer,
};

pub use breakpoint::{Function, FunctionEntry};
pub use clock::{Clock, ManualClock, SystemClock};
pub use console::{Console, NoConsole};
pub use core::{CoreConfig, TraceCore};
pub use error::TraceError;
pub use flags::TraceFlags;
pub use hit::host_stack::HostStack;
pub use hit::links::LinkSignal;
pub use hit::messages::Origin;
pub use hit::ports::Port;
pub use hit::process::{
    CallStack, CallStyle, Process, Raised, Reach, StackError, StackKeeper, Watch,
};
pub use hit::scheduling::{GcEvent, GcInfo};
pub use ids::{AnyPid, Mfa, Pid, PortId, RemotePid};
pub use seq_trace::{MessageToken, SeqState, SeqToken};
pub use session::{Session, SessionId, SessionRef};
pub use tracer::{
    Delivered, Enabled, Overload, ProcessTracer, TraceOpts, TraceTag, TraceeId, Tracer,
};

/// The README's examples, run as doctests (here, where every crate they
/// use is in reach) so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
