//! Spawning: what a new process inherits from each session and from its
//! parent, and the `spawn`/`spawned` events.

use std::sync::Arc;

use matchspec::term::{Heap, TermRef};

use crate::core::TraceCore;
use crate::hit::process::Process;
use crate::hit::procs::trace_procs;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Mfa, Pid};
use crate::model::tracee::{Tracee, TracerLink};
use crate::model::tracer::{TraceTag, TraceeId};

impl TraceCore {
    /// A new process `pid`, not spawned by a traced process (the first
    /// processes of a system), starting in `initial` (the bottom frame of
    /// its stack). It gets each session's flags for new processes.
    pub fn spawn(self: &Arc<Self>, pid: Pid, initial: Option<Mfa>) -> Process {
        self.spawn_with(Vec::new(), pid, initial)
    }

    /// A new process `pid` spawned by `parent`: in each session, it
    /// inherits the parent's flags and tracer with `set_on_spawn` (all of
    /// them) or `set_on_first_spawn` (all but the two inheritance flags,
    /// which the parent then loses), else gets the session's flags for
    /// new processes.
    ///
    /// With `procs`, the parent's sessions get `{trace, Parent, spawn,
    /// Child, Start}` and the child's `{trace, Child, spawned, Parent,
    /// Start}`, where `start` is `{M, F, Args}`.
    pub fn spawn_from(
        self: &Arc<Self>,
        parent: &Tracee,
        pid: Pid,
        initial: Option<Mfa>,
        start: TermRef<'_>,
    ) -> Process {
        let inherited = passed_on_spawn(parent);
        trace_spawn(parent, pid, start);
        let child = self.spawn_with(inherited, pid, initial);
        trace_spawned(child.tracee(), parent.id(), start);
        child
    }

    /// A new process `pid` spawned and linked in one go by `parent`
    /// (`spawn_link`): the child inherits as from
    /// [`TraceCore::spawn_from`], then as from a link (`set_on_link`,
    /// `set_on_first_link`), and the events come in ERTS's order: the
    /// parent's `spawn` and `link`, the child's `spawned` and
    /// `getting_linked` (there is no link signal to wait for).
    pub fn spawn_link_from(
        self: &Arc<Self>,
        parent: &mut Process,
        pid: Pid,
        initial: Option<Mfa>,
        start: TermRef<'_>,
    ) -> Process {
        let inherited = passed_on_spawn(parent.tracee());
        trace_spawn(parent.tracee(), pid, start);
        let link = parent.link(pid);
        let mut child = self.spawn_with(inherited, pid, initial);
        // The link's inheritance is in place before the child's events.
        let from = child.inherit_from_spawn_link(link);
        trace_spawned(child.tracee(), parent.tracee().id(), start);
        child.getting_linked(from);
        child
    }

    /// A new process's links, as ERTS makes them: first each session's
    /// settings for new processes, then what the parent passes on
    /// (`inherited`, in the parent's order), which replaces a session's
    /// settings where it has them, in their place, and goes in front
    /// where not.
    fn spawn_with(
        self: &Arc<Self>,
        inherited: Vec<TracerLink>,
        pid: Pid,
        initial: Option<Mfa>,
    ) -> Process {
        let mut links = Vec::new();
        for session in self.sessions_legacy_last() {
            let new = session.new_processes();
            if let Some(tracer) = new.tracer {
                links.push(TracerLink { session: session.clone(), tracer, flags: new.flags });
            }
        }
        for link in inherited {
            match links.iter_mut().find(|l| Arc::ptr_eq(&l.session, &link.session)) {
                Some(default) => *default = link,
                None => links.insert(0, link),
            }
        }
        // What `set_on_first_spawn` passes on may be no flags at all: the
        // link stays, with its tracer (`trace:session_info/1` lists it; it
        // traces nothing and is in no other tracer's way).
        let tracee = Arc::new(Tracee::new(TraceeId::Process(pid), links));
        self.add_process(pid, tracee.clone());
        Process::new(self.clone(), pid, tracee, initial)
    }
}

/// What `parent` passes on to a child it spawns, session by session, in
/// its links' order: everything with `set_on_spawn`; everything but the two
/// inheritance flags with `set_on_first_spawn`, which the parent then loses.
fn passed_on_spawn(parent: &Tracee) -> Vec<TracerLink> {
    let inheritance = TraceFlags::SET_ON_SPAWN | TraceFlags::SET_ON_FIRST_SPAWN;
    let mut inherited = Vec::new();
    for link in parent.links().iter().filter(|l| l.session.is_alive()) {
        if link.flags.contains(TraceFlags::SET_ON_FIRST_SPAWN) {
            let flags = link.flags - inheritance;
            inherited.push(TracerLink {
                session: link.session.clone(),
                tracer: link.tracer.clone(),
                flags,
            });
            parent.inherit(&link.session, |l| {
                if let Some(l) = l {
                    l.flags -= inheritance;
                }
            });
        } else if link.flags.contains(TraceFlags::SET_ON_SPAWN) {
            inherited.push(link.clone());
        }
    }
    inherited
}

/// `{trace, Parent, spawn, Child, Start}` to the parent's `procs` sessions.
fn trace_spawn(parent: &Tracee, child: Pid, start: TermRef<'_>) {
    let mut heap = Heap::new();
    let child = child.to_word(&mut heap);
    trace_procs(parent, TraceTag::Spawn, heap.view(child), Some(start));
}

/// `{trace, Child, spawned, Parent, Start}` to the child's `procs` sessions.
fn trace_spawned(child: &Tracee, parent: TraceeId, start: TermRef<'_>) {
    let mut heap = Heap::new();
    let parent = parent.to_word(&mut heap);
    trace_procs(child, TraceTag::Spawned, heap.view(parent), Some(start));
}
