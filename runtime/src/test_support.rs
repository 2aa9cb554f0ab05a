//! Set-up shared by the unit tests.

use std::sync::Arc;

use crossbeam_channel::Receiver;
use matchspec::term::Atom;

use crate::control::commands::{FlagChange, ProcessSpec};
use crate::hit::process::Process;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Mfa, Pid};
use crate::model::session::SessionRef;
use crate::model::tracer::Delivered;
use crate::{CoreConfig, ManualClock, ProcessTracer, TraceCore};

/// A core with session `s1` (tracer `<0.90.0>`, whose messages come out of
/// `rx`) tracing `flags` on process `<0.80.0>`, started in `m:loop/0`.
pub(crate) struct Traced {
    pub(crate) core: Arc<TraceCore>,
    pub(crate) session: SessionRef,
    pub(crate) process: Process,
    pub(crate) rx: Receiver<Delivered>,
}

/// See [`Traced`].
pub(crate) fn traced(flags: TraceFlags) -> Traced {
    let clock = Arc::new(ManualClock::new());
    let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
    let (tx, rx) = crossbeam_channel::unbounded();
    let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), tx, clock));
    let session = core.session_create(Atom::new("s1"), Some(tracer));
    let process = core.spawn(Pid::new(80, 0), Some(Mfa::new("m", "loop", 0)));
    core.trace_processes(&session, ProcessSpec::Pid(process.pid()), FlagChange::on(flags))
        .expect("traced");
    Traced { core, session, process, rx }
}
