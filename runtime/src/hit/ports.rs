//! Ports: the open ports of the host and the events it reports about them
//! (`ports`, `running_ports`, and a port's own `send` and `'receive'`), as
//! ERTS's `trace_port*` functions report them.
//!
//! A port is traced like a process, per session with one tracer and a set
//! of flags, but only the port flags apply (`ports`, `running_ports`,
//! `send`, `'receive'` and the modifiers). A port's message events run no
//! match spec: ERTS reports a port's `send` while the session's send
//! pattern is not `false`, and its `'receive'` whatever the pattern.

use std::sync::Arc;

use matchspec::term::{Atom, Heap, Term, TermRef, Word};

use crate::core::{TraceCore, live_in_order};
use crate::model::flags::TraceFlags;
use crate::model::ids::{Pid, PortId};
use crate::model::session::EventPattern;
use crate::model::tracee::{Tracee, TracerLink};
use crate::model::tracer::{TraceCategory, TraceOpts, TraceTag, TraceeId};

/// An open port, as the host thread running its tasks sees it.
#[derive(Debug)]
pub struct Port {
    core: Arc<TraceCore>,
    id: PortId,
    tracee: Arc<Tracee>,
    scheduler_id: u32,
}

impl TraceCore {
    /// Process `opener` opens port `id` running `driver`. The port gets
    /// each session's flags for new ports; with `ports` a session reports
    /// `{trace, Port, open, Opener, Driver}`.
    pub fn open_port(self: &Arc<Self>, id: PortId, opener: Pid, driver: Atom) -> Port {
        let mut links = Vec::new();
        for session in self.sessions_legacy_last() {
            let new = session.new_ports();
            if let Some(tracer) = new.tracer {
                links.push(TracerLink { session, tracer, flags: new.flags });
            }
        }
        let tracee = Arc::new(Tracee::new(TraceeId::Port(id), links));
        self.ports.write().insert(id, tracee.clone());
        let port = Port { core: self.clone(), id, tracee, scheduler_id: 1 };
        if port.tracee.traces_any(TraceFlags::PORTS) {
            let mut heap = Heap::new();
            let opener = opener.to_word(&mut heap);
            let driver = Term::atom(driver);
            port.emit(
                TraceFlags::PORTS,
                TraceCategory::Ports,
                TraceTag::Open,
                heap.view(opener),
                Some(driver.as_ref()),
            );
        }
        port
    }

    /// The port `id`, if it is open.
    pub fn port_tracee(&self, id: PortId) -> Option<Arc<Tracee>> {
        self.ports.read().get(&id).filter(|t| t.is_alive()).cloned()
    }

    /// Every open port, in port order.
    pub fn port_tracees(&self) -> Vec<Arc<Tracee>> {
        live_in_order(&self.ports.read())
    }
}

impl Port {
    /// The port's identifier.
    pub fn id(&self) -> PortId {
        self.id
    }

    /// Its shared trace settings.
    pub fn tracee(&self) -> &Arc<Tracee> {
        &self.tracee
    }

    /// Which scheduler runs its tasks (what `scheduler_id` reports).
    pub fn set_scheduler_id(&mut self, id: u32) {
        self.scheduler_id = id;
    }

    /// The port starts a task: `{trace, Port, in, What}`, `What` the
    /// operation it runs (`command`, `close`, `link`, ...) or `0` when
    /// there is none to name (an I/O task).
    pub fn trace_schedule_in(&self, what: Option<Atom>) {
        self.trace_sched(TraceTag::In, what);
    }

    /// The port ends a task: `{trace, Port, out, What}`.
    pub fn trace_schedule_out(&self, what: Option<Atom>) {
        self.trace_sched(TraceTag::Out, what);
    }

    /// The port handles a link from `pid`: `{trace, Port, getting_linked,
    /// Pid}`.
    pub fn linked_by(&self, pid: Pid) {
        self.pid_event(TraceTag::GettingLinked, pid);
    }

    /// The port handles an unlink from `pid`: `{trace, Port,
    /// getting_unlinked, Pid}`.
    pub fn unlinked_by(&self, pid: Pid) {
        self.pid_event(TraceTag::GettingUnlinked, pid);
    }

    /// The port gets the name `name`: `{trace, Port, register, Name}`.
    pub fn register(&self, name: Atom) {
        self.ports_event(TraceTag::Register, Term::atom(name).as_ref());
    }

    /// The port loses the name `name`: `{trace, Port, unregister, Name}`.
    pub fn unregister(&self, name: Atom) {
        self.ports_event(TraceTag::Unregister, Term::atom(name).as_ref());
    }

    /// The port takes `what` from process `from` (`{command, Data}`,
    /// `close`, `{connect, Pid}`, ...): `{trace, Port, 'receive', {From,
    /// What}}`.
    pub fn received(&self, from: Pid, what: TermRef<'_>) {
        if !self.tracee.traces_any(TraceFlags::RECEIVE) {
            return;
        }
        let mut heap = Heap::with_capacity(16);
        let from = from.to_word(&mut heap);
        let what = what.copy_to(&mut heap);
        let message = heap.tuple(&[from, what]);
        let category = TraceCategory::Receive;
        self.emit(TraceFlags::RECEIVE, category, TraceTag::Receive, heap.view(message), None);
    }

    /// The port sends `message` to `to` (`exists`: whether the receiver
    /// exists): `{trace, Port, send, Msg, To}` or
    /// `send_to_non_existing_process`, in every session whose send pattern
    /// is not `false`.
    pub fn sent(&self, to: TermRef<'_>, message: TermRef<'_>, exists: bool) {
        if !self.tracee.traces_any(TraceFlags::SEND) {
            return;
        }
        let tag = if exists { TraceTag::Send } else { TraceTag::SendToNonExistingProcess };
        for link in self.tracee.links().iter() {
            if matches!(*link.session.send_pattern(), EventPattern::Off) {
                continue;
            }
            self.emit_to(link, TraceFlags::SEND, TraceCategory::Send, tag, message, Some(to));
        }
    }

    /// The port closes with `reason`: `{trace, Port, closed, Reason}`,
    /// then, if it had the registered name `name`, `{trace, Port,
    /// unregister, Name}`; it is traced no more.
    pub fn close(self, reason: TermRef<'_>, name: Option<Atom>) {
        self.ports_event(TraceTag::Closed, reason);
        if let Some(name) = name {
            self.unregister(name);
        }
        if let Some(tracee) = self.core.ports.write().remove(&self.id) {
            tracee.exit();
        }
    }

    fn trace_sched(&self, tag: TraceTag, what: Option<Atom>) {
        if !self.tracee.traces_any(TraceFlags::RUNNING_PORTS) {
            return;
        }
        let what = what.map_or(Word::small(0).expect("0 is small"), Word::atom);
        let message = Term::from_parts(Heap::new(), what);
        let category = TraceCategory::RunningPorts;
        self.emit(TraceFlags::RUNNING_PORTS, category, tag, message.as_ref(), None);
    }

    fn pid_event(&self, tag: TraceTag, pid: Pid) {
        if !self.tracee.traces_any(TraceFlags::PORTS) {
            return;
        }
        let mut heap = Heap::new();
        let pid = pid.to_word(&mut heap);
        self.ports_event(tag, heap.view(pid));
    }

    fn ports_event(&self, tag: TraceTag, message: TermRef<'_>) {
        if self.tracee.traces_any(TraceFlags::PORTS) {
            self.emit(TraceFlags::PORTS, TraceCategory::Ports, tag, message, None);
        }
    }

    /// `message` as event `tag` to every session tracing the port with
    /// `flag` whose tracer wants it.
    fn emit(
        &self,
        flag: TraceFlags,
        category: TraceCategory,
        tag: TraceTag,
        message: TermRef<'_>,
        extra: Option<TermRef<'_>>,
    ) {
        for link in self.tracee.links().iter() {
            self.emit_to(link, flag, category, tag, message, extra);
        }
    }

    fn emit_to(
        &self,
        link: &TracerLink,
        flag: TraceFlags,
        category: TraceCategory,
        tag: TraceTag,
        message: TermRef<'_>,
        extra: Option<TermRef<'_>>,
    ) {
        if !link.session.is_alive()
            || !link.flags.contains(flag)
            || !self.tracee.tracer_enabled(link, category, tag)
        {
            return;
        }
        let opts = TraceOpts { extra, ..TraceOpts::for_flags(link.flags, self.scheduler_id) };
        link.tracer.trace_kind(category, tag, TraceeId::Port(self.id), message, &opts);
    }
}
