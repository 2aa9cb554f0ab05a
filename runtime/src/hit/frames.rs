//! The frames of the core's view of a process stack: active functions and
//! the trace frames ERTS pushes (`return_trace`, `exception_trace`,
//! `return_to`, `call_trace_return`), and where the functions below a call
//! are read from: the core's frames or the host's own stack.

use std::sync::Arc;

use crate::model::breakpoint::{BpFlags, FunctionEntry};
use crate::model::ids::Mfa;
use crate::model::session::{SessionId, SessionRef};
use crate::model::tracer::TracerRef;

/// A host's stack as the core reads it while a trace needs it (`{caller}`,
/// `{current_stacktrace}`, `return_to`).
pub trait CallStack {
    /// The active function `depth` frames down from the top (0: the
    /// innermost), or `None` below the bottom.
    fn function(&self, depth: usize) -> Option<Mfa>;
}

/// A frame of the core's view of a process stack.
#[derive(Clone, Debug)]
pub(crate) enum Frame {
    /// An active function; `catches` if it is inside a `try` around the
    /// call above it.
    Function { mfa: Mfa, catches: bool },
    /// Report the return (or exception) of a function to a session (boxed:
    /// it is rare, and function frames, the common kind, stay small).
    ReturnTrace(Box<ReturnTrace>),
    /// Report where execution returns to, to a session.
    ReturnTo { session: SessionRef },
    /// Close a `call_time` / `call_memory` interval of a session on return
    /// (ERTS's `call_trace_return` frame): `flags` are the kinds it was
    /// pushed for, `previous` the function that accumulates again.
    CallAcc { previous: Option<Arc<FunctionEntry>>, session: SessionId, flags: BpFlags },
}

// Function frames are pushed and popped on every call: keep them small.
const _: () = assert!(size_of::<Frame>() <= 24);

/// The active functions of `stack`, innermost first (trace frames skipped).
pub(crate) fn active_functions(stack: &[Frame]) -> impl Iterator<Item = Mfa> + '_ {
    stack.iter().rev().filter_map(|f| match f {
        Frame::Function { mfa, .. } => Some(*mfa),
        Frame::ReturnTrace(_) | Frame::ReturnTo { .. } | Frame::CallAcc { .. } => None,
    })
}

/// Where the functions below a call are read from: innermost first.
#[derive(Clone, Copy)]
pub(crate) enum Callers<'a> {
    /// The core's copy of the stack.
    Core(&'a [Frame]),
    /// The host's own stack.
    Host(&'a dyn CallStack),
}

impl<'a> Callers<'a> {
    /// The active functions, innermost first.
    pub(crate) fn functions(self) -> impl Iterator<Item = Mfa> + 'a {
        let (core, host) = match self {
            Callers::Core(stack) => (Some(active_functions(stack)), None),
            Callers::Host(stack) => (None, Some((0..).map_while(|depth| stack.function(depth)))),
        };
        core.into_iter().flatten().chain(host.into_iter().flatten())
    }
}

/// A `return_trace` or `exception_trace` frame.
#[derive(Clone, Debug)]
pub(crate) struct ReturnTrace {
    pub(crate) mfa: Mfa,
    pub(crate) session: SessionRef,
    pub(crate) tracer: FrameTracer,
    pub(crate) exception: bool,
}

/// Whose tracer a return frame reports to.
#[derive(Clone, Debug)]
pub(crate) enum FrameTracer {
    /// The process's tracer in the frame's session, looked up on return.
    Process,
    /// The meta tracer captured at call time.
    Meta(TracerRef),
}
