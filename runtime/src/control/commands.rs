//! `trace:process/4`, `trace:port/4`, `trace:send/3` and `trace:recv/3`:
//! the commands that are not about breakpoints, as methods of the core.
//! Their questions (`trace:info/3`) are in `info.rs`.

use std::sync::Arc;

use matchspec::spec::Kind as SpecKind;
use matchspec::term::{Atom, TermRef};

use crate::control::pattern::compile_trace_spec;
use crate::core::TraceCore;
use crate::model::error::TraceError;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Pid, PortId};
use crate::model::session::{EventPattern, SessionRef};
use crate::model::tracee::{Tracee, TracerLink};
use crate::model::tracer::{Enabled, TraceTag, TracerRef};

/// What `trace:process/4` or `trace:port/4` does with its flags (its
/// `How` and `Flags`).
#[derive(Clone, Debug)]
pub enum FlagChange {
    /// `true`: turn `flags` on, reporting to `tracer` (the command's
    /// `{tracer, T}`; `None`: the session's, and `badarg` without one).
    On {
        /// The flags to set.
        flags: TraceFlags,
        /// The tracer they report to.
        tracer: Option<TracerRef>,
    },
    /// `false`: turn `flags` off.
    Off {
        /// The flags to clear.
        flags: TraceFlags,
    },
}

impl FlagChange {
    /// Turns `flags` on, reporting to the session's tracer.
    pub fn on(flags: TraceFlags) -> FlagChange {
        FlagChange::On { flags, tracer: None }
    }

    /// Turns `flags` off.
    pub fn off(flags: TraceFlags) -> FlagChange {
        FlagChange::Off { flags }
    }

    fn parts(self) -> (bool, TraceFlags, Option<TracerRef>) {
        match self {
            FlagChange::On { flags, tracer } => (true, flags, tracer),
            FlagChange::Off { flags } => (false, flags, None),
        }
    }
}

/// Which processes `trace:process/4` changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessSpec {
    /// One process.
    Pid(Pid),
    /// Every process now and every process spawned later.
    All,
    /// Every process now.
    Existing,
    /// Every process spawned from now on.
    New,
}

impl TraceCore {
    /// `trace:process(Session, Spec, How, Flags)`: how many processes it
    /// changed.
    pub fn trace_processes(
        &self,
        session: &SessionRef,
        spec: ProcessSpec,
        change: FlagChange,
    ) -> Result<usize, TraceError> {
        let (on, flags, tracer) = change.parts();
        let tracer = tracer.map(|t| self.contain(t));
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        // Port events are not a process's.
        let flags = flags - TraceFlags::PORT_ONLY;
        let tracer = tracer_to_use(session, on, tracer)?;
        // ERTS changes the settings for new processes only for a list with
        // a process flag in it (its tracer too).
        if matches!(spec, ProcessSpec::All | ProcessSpec::New) && !flags.is_empty() {
            session.change_new_processes(on, flags, tracer.clone());
        }
        match spec {
            ProcessSpec::Pid(pid) => {
                let tracee = self.tracee(pid).ok_or(TraceError::BadTarget)?;
                change_one(&tracee, session, on, flags, tracer.as_ref())?;
                Ok(1)
            }
            ProcessSpec::All | ProcessSpec::Existing => {
                let mut changed = 0;
                for tracee in self.tracees() {
                    if change_one(&tracee, session, on, flags, tracer.as_ref()).is_ok() {
                        changed += 1;
                    }
                }
                Ok(changed)
            }
            ProcessSpec::New => Ok(0),
        }
    }
}

/// The tracer that turning flags on uses: the command's, else the
/// session's; `badarg` if there is none. (Turning flags off needs none.)
fn tracer_to_use(
    session: &SessionRef,
    on: bool,
    tracer: Option<TracerRef>,
) -> Result<Option<TracerRef>, TraceError> {
    match (on, tracer.or_else(|| session.tracer().cloned())) {
        (true, None) => Err(TraceError::BadOpt),
        (_, tracer) => Ok(tracer),
    }
}

/// Sets or clears `flags` of one process (ERTS's `start_trace`).
fn change_one(
    tracee: &Tracee,
    session: &SessionRef,
    on: bool,
    flags: TraceFlags,
    tracer: Option<&TracerRef>,
) -> Result<(), TraceError> {
    let id = tracee.id();
    tracee.update(session, |link| {
        if !on {
            if let Some(l) = link {
                l.flags -= flags;
            }
            return Ok(());
        }
        let tracer = tracer.expect("turning flags on always has a tracer");
        match link {
            Some(l) => {
                // One tracer per process and session, unless the old one is
                // gone (or traces nothing: set_on_first_spawn may pass on a
                // link without flags).
                let busy = !l.flags.is_empty()
                    && !l.tracer.same_as(&**tracer)
                    && l.tracer.enabled(TraceTag::TraceStatus, id) != Enabled::Remove;
                if busy {
                    return Err(TraceError::AlreadyTraced);
                }
                l.flags |= flags;
                l.tracer = tracer.clone();
            }
            None => {
                *link =
                    Some(TracerLink { session: session.clone(), tracer: tracer.clone(), flags });
            }
        }
        Ok(())
    })
}

/// Which message event a pattern is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageEvent {
    /// `send`: specs run on `[Receiver, Msg]`.
    Send,
    /// `'receive'`: specs run on `[Node, Sender, Msg]`.
    Receive,
}

impl TraceCore {
    /// `trace:send(S, Pattern, [])` and `trace:recv(S, Pattern, [])`: sets the
    /// session's pattern for the event (always 1). `restart` and `pause` are
    /// refused, as in ERTS. (Sending and receiving are traced by issue 6's
    /// message events; this sets what they will use.)
    pub fn set_message_pattern(
        &self,
        session: &SessionRef,
        event: MessageEvent,
        pattern: TermRef<'_>,
    ) -> Result<usize, TraceError> {
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        let new = match pattern.as_atom().map(Atom::name) {
            Some("true") => EventPattern::On,
            Some("false") => EventPattern::Off,
            Some("restart" | "pause") => return Err(TraceError::BadOpt),
            _ if pattern.is_nil() => EventPattern::On,
            _ => {
                let kind = match event {
                    MessageEvent::Send => SpecKind::Send,
                    MessageEvent::Receive => SpecKind::Receive,
                };
                EventPattern::Spec(compile_trace_spec(self, pattern, kind)?)
            }
        };
        let slot = match event {
            MessageEvent::Send => &session.send_pattern,
            MessageEvent::Receive => &session.receive_pattern,
        };
        slot.store(Arc::new(new));
        Ok(1)
    }
}

/// Which ports `trace:port/4` changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortSpec {
    /// One port.
    Port(PortId),
    /// Every port now and every port opened later.
    All,
    /// Every port now.
    Existing,
    /// Every port opened from now on.
    New,
}

impl TraceCore {
    /// `trace:port(Session, Spec, How, Flags)`: how many ports it changed.
    ///
    /// As in ERTS, a single port (and every port, for `all` and `existing`)
    /// takes the whole flag list, process flags included, while the settings
    /// for new ports keep only the port flags; `all` and `existing` visit the
    /// ports only when the list has a port flag or a modifier.
    pub fn trace_ports(
        &self,
        session: &SessionRef,
        spec: PortSpec,
        change: FlagChange,
    ) -> Result<usize, TraceError> {
        let (on, flags, tracer) = change.parts();
        let tracer = tracer.map(|t| self.contain(t));
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        let tracer = tracer_to_use(session, on, tracer)?;
        // The same for new ports, with a port flag (or a modifier).
        if matches!(spec, PortSpec::All | PortSpec::New)
            && flags.intersects(TraceFlags::PORT_TRACEE)
        {
            session.change_new_ports(on, flags & TraceFlags::PORT_TRACEE, tracer.clone());
        }
        match spec {
            PortSpec::Port(id) => {
                let tracee = self.port_tracee(id).ok_or(TraceError::BadTarget)?;
                change_one(&tracee, session, on, flags, tracer.as_ref())?;
                Ok(1)
            }
            PortSpec::All | PortSpec::Existing if flags.intersects(TraceFlags::PORT_TRACEE) => {
                let mut changed = 0;
                for tracee in self.port_tracees() {
                    if change_one(&tracee, session, on, flags, tracer.as_ref()).is_ok() {
                        changed += 1;
                    }
                }
                Ok(changed)
            }
            PortSpec::All | PortSpec::Existing | PortSpec::New => Ok(0),
        }
    }
}
