//! [`TraceCore`]: the registry of sessions, functions and processes, and
//! the staging protocol that changes breakpoints.
//!
//! # Generations
//!
//! All breakpoint changes of one command are written to the *staging*
//! slot of the functions they touch (`Stage::edit`); then
//! `TraceCore::commit` makes them active together by storing a new
//! `Generation` (one atomic store). Threads hitting breakpoints hold the
//! generation they started with for the whole hit, so they read one slot
//! index throughout and never see half of a change. Before the staging
//! slots are written again, the committer waits until no thread holds the
//! old generation (ERTS waits for thread progress), then copies the new
//! active settings into the old slots: those become the next staging
//! generation. Settings nobody can read any more are freed by reference
//! counting.

mod fence;
pub(crate) mod pin;
mod seq_tracer;
mod sync;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use arc_swap::{ArcSwap, Guard};
use matchspec::term::{Atom, TermRef};
use matchspec::{Config, Release};
use msc::Engine;
use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;

use crate::core::pin::Pins;
use crate::model::breakpoint::{Breakpoint, FunctionEntry};
use crate::model::clock::{Clock, SystemClock};
use crate::model::console::{Console, NoConsole};
use crate::model::error::TraceError;
use crate::model::ids::{Mfa, Pid, PortId};
use crate::model::pattern::OnLoad;
use crate::model::session::{Session, SessionId, SessionRef};
use crate::model::tracee::Tracee;
use crate::model::tracer::{Contained, Deferral, TracerRef};

/// How a [`TraceCore`] is set up.
#[derive(Clone, Debug)]
pub struct CoreConfig {
    /// The engine that runs trace match specs.
    pub engine: Engine,
    /// How match specs compile, and the OTP release whose answers the core
    /// gives (`spec.get_release()`, the one place the core reads it from:
    /// see [`TraceCore::release`]).
    pub spec: Config,
    /// Where timestamps come from.
    pub clock: Arc<dyn Clock>,
    /// Where trace specs' `{display, X}` goes ([`NoConsole`] drops it).
    pub console: Arc<dyn Console>,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            engine: Engine::Interp,
            spec: Config::default(),
            clock: Arc::new(SystemClock::new()),
            console: Arc::new(NoConsole),
        }
    }
}

/// Which slot of every breakpoint is active.
#[derive(Debug)]
pub(crate) struct Generation {
    pub(crate) index: usize,
}

/// Marks the current thread as inside a hit while alive: commands from it
/// are refused (a tracer callback that changed settings would wait for its
/// own hit to end), and messages to tracers that may block are kept until
/// the outermost hit ends. One thread-local count serves both
/// ([`Deferral`]).
pub(crate) struct HitGuard(Deferral);

impl HitGuard {
    pub(crate) fn enter() -> HitGuard {
        HitGuard(Deferral::begin())
    }

    /// Is the current thread inside a hit?
    fn active() -> bool {
        Deferral::active()
    }
}

#[derive(Debug, Default)]
struct FunctionTable {
    by_mfa: FxHashMap<Mfa, Arc<FunctionEntry>>,
    modules: FxHashMap<Atom, Vec<Arc<FunctionEntry>>>,
}

/// The settings only commands change, kept under the staging lock (ERTS's
/// code modification permission).
#[derive(Debug, Default)]
pub(crate) struct Staged {
    /// Each session's `on_load` pattern.
    pub(crate) on_load: FxHashMap<SessionId, OnLoad>,
}

/// The trace core: sessions, the functions and processes of the host, and
/// what each session traces.
///
/// Shared by every thread of the host (`Arc<TraceCore>`). Commands change
/// settings one at a time; trace points run concurrently with them and
/// with each other without locks (but the short per-shard locks of
/// `call_time` and `call_memory` totals).
#[derive(Debug)]
pub struct TraceCore {
    pub(crate) config: CoreConfig,
    pub(crate) staged: Mutex<Staged>,
    generation: ArcSwap<Generation>,
    /// The generation as breakpoint hits read it (the same one).
    pub(crate) pins: Pins,
    sessions: RwLock<Vec<SessionRef>>,
    next_session: AtomicU32,
    legacy: SessionRef,
    functions: RwLock<FunctionTable>,
    processes: RwLock<FxHashMap<Pid, Arc<Tracee>>>,
    pub(crate) ports: RwLock<FxHashMap<PortId, Arc<Tracee>>>,
    tracers: RwLock<FxHashMap<Pid, TracerRef>>,
    /// How many times a tracer panicked (and was removed for it).
    tracer_panics: Arc<AtomicU64>,
    /// The system sequential tracer (`seq_trace:set_system_tracer/1`).
    pub(crate) seq_tracer: RwLock<Option<TracerRef>>,
    /// How many times `seq_trace:reset_trace/0` ran: tokens of messages
    /// sent before the last reset are void.
    pub(crate) seq_epoch: AtomicU64,
    /// Has any session ever set system monitoring (`trace:system/3`)?
    /// Until one has, a host's queue lengths and collections cost one
    /// load.
    pub(crate) system_monitored: AtomicBool,
    /// The node's name (`node()`): `nonode@nohost` until the host starts
    /// distribution.
    node: RwLock<Atom>,
}

impl TraceCore {
    /// A core with no functions, no processes and only the legacy session.
    pub fn new(config: CoreConfig) -> Arc<TraceCore> {
        let legacy = Arc::new(Session::new(SessionId(0), Atom::new("legacy"), None));
        Arc::new(TraceCore {
            config,
            staged: Mutex::new(Staged::default()),
            generation: ArcSwap::from_pointee(Generation { index: 0 }),
            pins: Pins::default(),
            sessions: RwLock::new(vec![legacy.clone()]),
            next_session: AtomicU32::new(1),
            legacy,
            functions: RwLock::new(FunctionTable::default()),
            processes: RwLock::new(FxHashMap::default()),
            ports: RwLock::new(FxHashMap::default()),
            tracers: RwLock::new(FxHashMap::default()),
            tracer_panics: Arc::new(AtomicU64::new(0)),
            seq_tracer: RwLock::new(None),
            seq_epoch: AtomicU64::new(0),
            system_monitored: AtomicBool::new(false),
            node: RwLock::new(Atom::NONODE),
        })
    }

    /// The node's name: what `node()` returns in a trace match spec, what
    /// `node/1` gives for this node's pids, ports and references, and the
    /// `Node` a receive pattern sees for a message from this node.
    pub fn node_name(&self) -> Atom {
        *self.node.read()
    }

    /// Names the node, as `net_kernel:start/2` does when the host starts
    /// distribution (or `nonode@nohost` again when it stops). This node's
    /// pids stay what they are: their node is whatever the node is called.
    ///
    /// ```
    /// use matchspec::term::Atom;
    /// use matchspec_runtime::{CoreConfig, TraceCore};
    ///
    /// let core = TraceCore::new(CoreConfig::default());
    /// assert_eq!(core.node_name(), Atom::NONODE);
    /// core.set_node_name(Atom::new("a@host"));
    /// assert_eq!(core.node_name(), Atom::new("a@host"));
    /// ```
    pub fn set_node_name(&self, name: Atom) {
        *self.node.write() = name;
    }

    /// The clock timestamps come from.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.config.clock
    }

    /// Where trace specs' `{display, X}` goes.
    pub fn console(&self) -> &Arc<dyn Console> {
        &self.config.console
    }

    /// The engine trace specs run on.
    pub fn engine(&self) -> Engine {
        self.config.engine
    }

    /// The OTP release whose answers the core gives: that of
    /// [`CoreConfig::spec`], which match specs compile for too.
    ///
    /// ```
    /// use matchspec::{Config, Release};
    /// use matchspec_runtime::core::{CoreConfig, TraceCore};
    ///
    /// let spec = Config::default().release(Release::Otp27);
    /// let core = TraceCore::new(CoreConfig { spec, ..CoreConfig::default() });
    /// assert_eq!(core.release(), Release::Otp27);
    /// assert_eq!(TraceCore::new(CoreConfig::default()).release(), Release::Otp29);
    /// ```
    pub fn release(&self) -> Release {
        self.config.spec.get_release()
    }

    // ---- Sessions ---------------------------------------------------------------

    /// The legacy session (`erlang:trace/3` and `erlang:trace_pattern/3`).
    pub fn legacy(&self) -> &SessionRef {
        &self.legacy
    }

    /// `trace:session_create(Name, Tracer, [])`: a new session; `tracer`
    /// `None` is the undocumented `undefined` tracer (given per process,
    /// as in the legacy session).
    pub fn session_create(&self, name: Atom, tracer: Option<TracerRef>) -> SessionRef {
        let tracer = tracer.map(|t| self.contain(t));
        let id = SessionId(self.next_session.fetch_add(1, Ordering::Relaxed));
        let session = Arc::new(Session::new(id, name, tracer));
        self.sessions.write().push(session.clone());
        session
    }

    /// Every live session, the legacy one first.
    pub fn sessions(&self) -> Vec<SessionRef> {
        self.sessions.read().clone()
    }

    /// Every live session, oldest first and the legacy one last: the order
    /// in which ERTS, walking its session list (legacy, then newest first)
    /// and putting each new tracer link in front, leaves the links of a new
    /// process or port; and `trace:session_info/1`'s order.
    pub(crate) fn sessions_legacy_last(&self) -> Vec<SessionRef> {
        let mut sessions = self.sessions();
        sessions.rotate_left(1);
        sessions
    }

    /// The live session named `name` (the newest, if several share it).
    pub fn session_named(&self, name: Atom) -> Option<SessionRef> {
        self.sessions.read().iter().rev().find(|s| s.name() == name).cloned()
    }

    /// `trace:session_destroy/1`: the session stops tracing at once and
    /// all its settings are removed. `false` if it was already destroyed
    /// (the legacy session cannot be).
    pub fn session_destroy(&self, session: &SessionRef) -> Result<bool, TraceError> {
        if session.is_legacy() {
            return Err(TraceError::Session);
        }
        if !session.kill() {
            return Ok(false);
        }
        self.sessions.write().retain(|s| !Arc::ptr_eq(s, session));
        self.stage(|stage| {
            stage.staged.on_load.remove(&session.id());
            for entry in self.all_functions() {
                if entry.slot(stage.index).as_ref().is_some_and(|bp| bp.session(session).is_some())
                {
                    stage.edit(&entry, |bp| {
                        bp.sessions.retain(|s| !Arc::ptr_eq(&s.session, session))
                    });
                }
            }
        })?;
        for tracee in self.tracees().into_iter().chain(self.port_tracees()) {
            tracee.forget_dead_sessions();
        }
        Ok(true)
    }

    // ---- Tracers ----------------------------------------------------------------

    /// Makes `tracer` the tracer that `{tracer, Pid}` (and a bare pid where
    /// a tracer is expected) names.
    pub fn register_tracer(&self, pid: Pid, tracer: TracerRef) {
        let tracer = self.contain(tracer);
        self.tracers.write().insert(pid, tracer);
    }

    /// `tracer` behind the core's panic boundary: a panic in any of its
    /// calls removes it as a dead tracer is removed, counts in
    /// [`tracer_panics`](TraceCore::tracer_panics), and goes no further.
    /// Every tracer given to the core goes through here.
    pub(crate) fn contain(&self, tracer: TracerRef) -> TracerRef {
        Contained::wrap(tracer, &self.tracer_panics)
    }

    /// How many times a tracer panicked (each was removed for it).
    pub fn tracer_panics(&self) -> u64 {
        self.tracer_panics.load(Ordering::Relaxed)
    }

    /// The tracer registered for `pid`.
    pub fn tracer(&self, pid: Pid) -> Option<TracerRef> {
        self.tracers.read().get(&pid).cloned()
    }

    /// The tracer a tracer specification names: a pid, or `{tracer, Pid}`
    /// / `{meta, Pid}`.
    pub fn tracer_from_term(&self, spec: TermRef<'_>) -> Option<TracerRef> {
        let pid = match spec.as_tuple() {
            Some(t) if t.len() == 2 => t.get(1)?,
            Some(_) => return None,
            None => spec,
        };
        self.tracer(Pid::from_term(pid)?)
    }

    // ---- Functions --------------------------------------------------------------

    /// Makes `entries` the functions of `module`, replacing what it had
    /// (whose breakpoints are uninstalled).
    pub(crate) fn replace_module(&self, module: Atom, entries: &[Arc<FunctionEntry>]) {
        let mut table = self.functions.write();
        if let Some(old) = table.modules.remove(&module) {
            for entry in old {
                table.by_mfa.remove(&entry.mfa());
                entry.install(false);
            }
        }
        for entry in entries {
            table.by_mfa.insert(entry.mfa(), entry.clone());
        }
        table.modules.insert(module, entries.to_vec());
    }

    /// The function `mfa`, if declared.
    pub fn function(&self, mfa: Mfa) -> Option<Arc<FunctionEntry>> {
        self.functions.read().by_mfa.get(&mfa).cloned()
    }

    /// Every declared function.
    pub(crate) fn all_functions(&self) -> Vec<Arc<FunctionEntry>> {
        self.functions.read().modules.values().flatten().cloned().collect()
    }

    /// The functions of `module` (empty if it is not declared).
    pub(crate) fn module_functions(&self, module: Atom) -> Vec<Arc<FunctionEntry>> {
        self.functions.read().modules.get(&module).cloned().unwrap_or_default()
    }

    // ---- Processes --------------------------------------------------------------

    /// Registers a new process's tracee.
    pub(crate) fn add_process(&self, pid: Pid, tracee: Arc<Tracee>) {
        self.processes.write().insert(pid, tracee);
    }

    /// The process `pid`, if it is alive.
    pub fn tracee(&self, pid: Pid) -> Option<Arc<Tracee>> {
        self.processes.read().get(&pid).filter(|t| t.is_alive()).cloned()
    }

    /// Every live process, in pid order.
    pub fn tracees(&self) -> Vec<Arc<Tracee>> {
        live_in_order(&self.processes.read())
    }

    pub(crate) fn forget_process(&self, pid: Pid) {
        if let Some(tracee) = self.processes.write().remove(&pid) {
            tracee.exit();
        }
    }

    // ---- Generations ------------------------------------------------------------

    /// The active generation, held for the duration of a breakpoint hit.
    pub(crate) fn active(&self) -> Guard<Arc<Generation>> {
        self.generation.load()
    }

    /// Runs `change` with the staging lock held, then commits what it
    /// staged. Fails if called from inside a trace callback.
    pub(crate) fn stage<R>(
        &self,
        change: impl FnOnce(&mut Stage<'_>) -> R,
    ) -> Result<R, TraceError> {
        if HitGuard::active() {
            return Err(TraceError::Reentrant);
        }
        let mut staged = self.staged.lock();
        let index = 1 - self.generation.load().index;
        let mut stage = Stage { index, touched: Vec::new(), staged: &mut staged };
        let answer = change(&mut stage);
        let touched = std::mem::take(&mut stage.touched);
        self.commit(index, &touched);
        Ok(answer)
    }

    /// Installs, switches generations, waits for readers of the old one,
    /// uninstalls and consolidates (ERTS's `erts_finish_breakpointing`
    /// stages, run one after the other).
    fn commit(&self, staging: usize, touched: &[Arc<FunctionEntry>]) {
        if touched.is_empty() {
            return;
        }
        // Install: a function with new settings must take the slow path
        // before they become active.
        for entry in touched {
            if entry.slot(staging).is_some() {
                entry.install(true);
            }
        }
        // Commit: one store makes every staged change active (one for
        // each kind of reader).
        let old = self.generation.swap(Arc::new(Generation { index: staging }));
        let old_number = self.pins.advance();
        debug_assert_eq!((old_number % 2) as usize, old.index, "numbers and slots agree");
        // Wait for every thread that may still read the old slots. The
        // swap turned their borrowed loads into counted references, so the
        // count says how many there are; hits are short.
        while Arc::strong_count(&old) > 1 {
            std::thread::yield_now();
        }
        self.pins.wait_for_readers_of(old_number);
        // Uninstall functions nobody traces any more, and make the old
        // slots the next staging generation.
        for entry in touched {
            let active = entry.slot_full(staging);
            if active.is_none() {
                entry.install(false);
            }
            entry.set_slot(old.index, active);
        }
    }
}

/// Changes being staged, under the staging lock.
pub(crate) struct Stage<'a> {
    pub(crate) index: usize,
    touched: Vec<Arc<FunctionEntry>>,
    pub(crate) staged: &'a mut Staged,
}

impl Stage<'_> {
    /// Changes `entry`'s staging breakpoint; sessions left without flags
    /// are dropped, and a breakpoint without sessions is removed.
    pub(crate) fn edit(
        &mut self,
        entry: &Arc<FunctionEntry>,
        change: impl FnOnce(&mut Breakpoint),
    ) {
        let mut breakpoint = entry.slot_full(self.index).as_deref().cloned().unwrap_or_default();
        change(&mut breakpoint);
        breakpoint.sessions.retain(|s| !s.flags.is_empty());
        let staged = (!breakpoint.sessions.is_empty()).then(|| Arc::new(breakpoint));
        entry.set_slot(self.index, staged);
        if !self.touched.iter().any(|e| Arc::ptr_eq(e, entry)) {
            self.touched.push(entry.clone());
        }
    }
}

/// The live tracees of a table (processes or ports), in identifier order.
pub(crate) fn live_in_order<K: Copy + Ord>(table: &FxHashMap<K, Arc<Tracee>>) -> Vec<Arc<Tracee>> {
    let mut all: Vec<(K, Arc<Tracee>)> =
        table.iter().filter(|(_, t)| t.is_alive()).map(|(id, t)| (*id, t.clone())).collect();
    all.sort_by_key(|(id, _)| *id);
    all.into_iter().map(|(_, t)| t).collect()
}
