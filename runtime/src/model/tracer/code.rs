//! Tracer modules whose code can be deleted and loaded again.
//!
//! ERTS looks a tracer module up on every event (`lookup_tracer_nif`).
//! While the module has no current code with the callbacks (after
//! `code:delete/1`), `call_enabled_tracer` answers `remove` to
//! `trace_status` and `discard` to events, and nothing is traced, so the
//! tracer goes from each tracee at its next check; loaded again, the module
//! traces again for the tracees that still have it.
//!
//! [`TracerModules`] is a host's registry of its tracer modules and their
//! code; [`ModuleTracer`] wraps a tracer of one of them with ERTS's answers
//! while the module is not loaded. The check is one load of a flag the
//! module's tracers share, made only where such a tracer is asked: calls
//! traced by other tracers, untraced calls and rejected ones do not see it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use matchspec::term::{Atom, Heap, TermRef, Word};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use super::{Enabled, TraceCategory, TraceOpts, TraceTag, TraceeId, Tracer};

/// Whether a tracer module has current code: shared by its tracers.
#[derive(Debug)]
pub struct ModuleCode {
    name: Atom,
    loaded: AtomicBool,
}

impl ModuleCode {
    /// The module's name.
    pub fn name(&self) -> Atom {
        self.name
    }

    /// Does the module have current code (with its callbacks)?
    #[inline]
    pub fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }
}

/// A code change that `code` refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CodeError {
    /// Not a tracer module of the registry (`code:load_file/1`: `nofile`).
    #[error("no such tracer module")]
    NoFile,
    /// Loading while the module has both current and old code
    /// (`code:load_file/1`: `not_purged`).
    #[error("old code must be purged first")]
    NotPurged,
}

/// A module's code: its current instance (shared with its tracers) and
/// whether old code is left.
#[derive(Debug)]
struct Module {
    code: Arc<ModuleCode>,
    old: bool,
}

/// A host's tracer modules and their code, as `code:delete/1`,
/// `code:purge/1` and `code:load_file/1` change it.
///
/// ```
/// use matchspec::term::Atom;
/// use matchspec_runtime::tracer::TracerModules;
///
/// let modules = TracerModules::default();
/// let code = modules.declare(Atom::new("my_tracer"));
/// assert!(modules.delete(code.name()));
/// assert!(!code.is_loaded());
/// modules.load(code.name())?;
/// assert!(code.is_loaded());
/// # Ok::<(), matchspec_runtime::tracer::CodeError>(())
/// ```
#[derive(Debug, Default)]
pub struct TracerModules {
    modules: Mutex<FxHashMap<Atom, Module>>,
}

impl TracerModules {
    /// Adds module `name` with current code (or finds it) and returns its
    /// code, which the module's tracers check.
    pub fn declare(&self, name: Atom) -> Arc<ModuleCode> {
        let mut modules = self.modules.lock();
        let module = modules.entry(name).or_insert_with(|| Module {
            code: Arc::new(ModuleCode { name, loaded: AtomicBool::new(true) }),
            old: false,
        });
        module.code.clone()
    }

    /// The code of module `name`, if the registry has it.
    pub fn code(&self, name: Atom) -> Option<Arc<ModuleCode>> {
        self.modules.lock().get(&name).map(|m| m.code.clone())
    }

    /// Does module `name` have current code?
    pub fn is_loaded(&self, name: Atom) -> bool {
        self.code(name).is_some_and(|c| c.is_loaded())
    }

    /// `code:delete/1`: the current code becomes old, and the module's
    /// tracers stop tracing. False (nothing done) without current code, or
    /// with old code not purged yet.
    pub fn delete(&self, name: Atom) -> bool {
        let mut modules = self.modules.lock();
        let Some(module) = modules.get_mut(&name) else { return false };
        if module.old || !module.code.is_loaded() {
            return false;
        }
        module.code.loaded.store(false, Ordering::Release);
        module.old = true;
        true
    }

    /// `code:purge/1`: forgets the module's old code. True if there was
    /// some: then ERTS has every process check its code, which schedules
    /// it in (the host's part; see `Process::trace_schedule_in`).
    pub fn purge(&self, name: Atom) -> bool {
        let mut modules = self.modules.lock();
        let Some(module) = modules.get_mut(&name) else { return false };
        std::mem::take(&mut module.old)
    }

    /// `code:load_file/1`: new current code (the current one, if any,
    /// becomes old); the module's tracers trace again.
    pub fn load(&self, name: Atom) -> Result<(), CodeError> {
        let mut modules = self.modules.lock();
        let module = modules.get_mut(&name).ok_or(CodeError::NoFile)?;
        if module.code.is_loaded() {
            if module.old {
                return Err(CodeError::NotPurged);
            }
            module.old = true;
        }
        module.code.loaded.store(true, Ordering::Release);
        Ok(())
    }
}

/// A tracer of a module in [`TracerModules`]: `tracer` while the module is
/// loaded; otherwise what ERTS makes of a module it cannot find (`remove`
/// for `trace_status`, `discard` for events, no trace callbacks).
#[derive(Debug)]
pub struct ModuleTracer<T> {
    code: Arc<ModuleCode>,
    tracer: T,
}

impl<T: Tracer> ModuleTracer<T> {
    /// `tracer`, of the module whose code is `code`.
    pub fn new(code: Arc<ModuleCode>, tracer: T) -> ModuleTracer<T> {
        ModuleTracer { code, tracer }
    }

    /// The tracer the module runs while loaded.
    pub fn tracer(&self) -> &T {
        &self.tracer
    }
}

/// ERTS's answer for a tracer module it cannot find.
fn unloaded(tag: TraceTag) -> Enabled {
    if tag == TraceTag::TraceStatus { Enabled::Remove } else { Enabled::Discard }
}

impl<T: Tracer> Tracer for ModuleTracer<T> {
    fn enabled(&self, tag: TraceTag, tracee: TraceeId) -> Enabled {
        if !self.code.is_loaded() {
            return unloaded(tag);
        }
        self.tracer.enabled(tag, tracee)
    }

    fn enabled_kind(&self, category: TraceCategory, tag: TraceTag, tracee: TraceeId) -> Enabled {
        if !self.code.is_loaded() {
            return unloaded(tag);
        }
        self.tracer.enabled_kind(category, tag, tracee)
    }

    fn status_then_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
    ) -> Enabled {
        if !self.code.is_loaded() {
            return Enabled::Remove;
        }
        self.tracer.status_then_kind(category, tag, tracee)
    }

    fn trace(&self, tag: TraceTag, tracee: TraceeId, message: TermRef<'_>, opts: &TraceOpts<'_>) {
        if self.code.is_loaded() {
            self.tracer.trace(tag, tracee, message, opts);
        }
    }

    fn trace_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
        message: TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) {
        if self.code.is_loaded() {
            self.tracer.trace_kind(category, tag, tracee, message, opts);
        }
    }

    fn trace_seq(&self, label: TermRef<'_>, info: TermRef<'_>, opts: &TraceOpts<'_>) {
        if self.code.is_loaded() {
            self.tracer.trace_seq(label, info, opts);
        }
    }

    fn to_term(&self, heap: &mut Heap) -> Word {
        // ERTS shows the tracer as set, loaded or not.
        self.tracer.to_term(heap)
    }

    fn same_as(&self, other: &dyn Tracer) -> bool {
        self.tracer.same_as(other)
    }

    fn never_blocks(&self) -> bool {
        self.tracer.never_blocks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids::Pid;
    use crate::model::tracer::{Delivered, TestTracerModule};
    use matchspec::term::Term;

    const TRACEE: TraceeId = TraceeId::Process(Pid::new(80, 0));

    #[test]
    fn delete_purge_and_load_follow_the_code_server() {
        let modules = TracerModules::default();
        let name = Atom::new("tracer_test");
        assert_eq!(modules.load(Atom::new("nope")), Err(CodeError::NoFile));
        let code = modules.declare(name);
        // No old code: nothing to purge; loading again makes the first old.
        assert!(!modules.purge(name));
        assert_eq!(modules.load(name), Ok(()));
        assert_eq!(modules.load(name), Err(CodeError::NotPurged));
        assert!(!modules.delete(name), "old code is in the way");
        assert!(modules.purge(name));
        assert!(modules.delete(name));
        assert!(!code.is_loaded() && !modules.is_loaded(name));
        assert!(!modules.delete(name), "no current code");
        // Loading without current code leaves the old alone.
        assert_eq!(modules.load(name), Ok(()));
        assert!(code.is_loaded());
        assert!(modules.purge(name));
    }

    #[test]
    fn an_unloaded_module_removes_itself_and_traces_nothing() {
        let modules = TracerModules::default();
        let code = modules.declare(Atom::new("tracer_test"));
        let (tx, rx) = crossbeam_channel::unbounded::<Delivered>();
        let state = Term::parse("{#{call => trace}, <0.90.0>, x}").expect("a state");
        let tracer = ModuleTracer::new(code.clone(), TestTracerModule::new(state.as_ref(), tx));
        let call = (TraceCategory::Call, TraceTag::Call);
        assert_eq!(tracer.status_then_kind(call.0, call.1, TRACEE), Enabled::Trace);
        assert!(modules.delete(code.name()));
        assert_eq!(tracer.enabled(TraceTag::TraceStatus, TRACEE), Enabled::Remove);
        assert_eq!(tracer.enabled_kind(call.0, call.1, TRACEE), Enabled::Discard);
        assert_eq!(tracer.status_then_kind(call.0, call.1, TRACEE), Enabled::Remove);
        let msg = Term::parse("{m,f,[]}").expect("a term");
        tracer.trace_kind(call.0, call.1, TRACEE, msg.as_ref(), &TraceOpts::default());
        assert!(rx.try_recv().is_err());
        // Shown as set all the same.
        let mut heap = Heap::new();
        let term = tracer.to_term(&mut heap);
        assert_eq!(heap.view(term).to_string(), "{tracer_test,{#{call => trace},<0.90.0>,x}}");
        modules.load(code.name()).expect("loads again");
        tracer.trace_kind(call.0, call.1, TRACEE, msg.as_ref(), &TraceOpts::default());
        assert!(rx.try_recv().is_ok());
    }
}
