//! Processes whose host keeps the stack: the host reports only calls of
//! traced functions and the end of the frames the core asked it to
//! watch, and lends the core its stack when a trace needs it (ERTS keeps
//! its trace frames on the process's own stack the same way).
//!
//! The contract is in [`StackKeeper`]'s documentation.

use matchspec::term::{Atom, TermRef};

use super::{Process, Raised, Reach, StackError, Unwinding};
use crate::hit::frames::{CallStack, Frame};
use crate::model::breakpoint::FunctionEntry;
use crate::model::ids::Mfa;

/// Who keeps a process's stack.
///
/// The contract, for a host that has called [`Process::keep_own_stack`]:
///
/// - A body call of `entry`: if `entry.is_traced()`, report it with
///   [`Process::traced_call`] and keep the [`Watch`] it returns in the new
///   frame; otherwise the frame is [`Watch::Unwatched`] and the core hears
///   nothing (one atomic load and a branch).
/// - A tail call: report it with [`Process::traced_tail_call`] if the
///   callee is traced or the frame it replaces is watched; the frame keeps
///   the returned [`Watch`].
/// - A return from a watched frame: [`Process::watched_return`], after the
///   host popped the frame. Unwatched returns are not reported.
/// - An exception: the host unwinds to its catching frame and reports how
///   many watched frames it unwound with [`Process::unwound`].
/// - The process ends: [`Process::exit_with`].
///
/// The stack a host lends ([`CallStack`]) is its active functions below
/// the callee (for a call) or after the frame has gone (for a return).
/// [`HostStack`](crate::HostStack) is a host stack that follows this
/// contract, for hosts and tests to start from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StackKeeper {
    /// The core: the host reports every call, return and raise
    /// ([`Process::call`]), and the core keeps a copy of the stack.
    #[default]
    Core,
    /// The host ([`Process::keep_own_stack`], [`HostStack`](crate::HostStack)):
    /// the core hears of traced calls and watched frames only.
    Host,
}

/// Does the host tell the core when a frame ends?
#[must_use = "a watched frame's end must be reported"]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Watch {
    /// No: its return and unwinding concern no trace.
    #[default]
    Unwatched,
    /// Yes: the core keeps trace frames (`return_trace`, `return_to`,
    /// `call_time` accounting) for it.
    Watched,
}

impl Process {
    /// From now on the host keeps this process's stack and reports only
    /// what [`StackKeeper`]'s contract says. The core forgets the
    /// frames it kept; fails if any of them was a trace frame.
    pub fn keep_own_stack(&mut self) -> Result<(), StackError> {
        if !self.tracee.is_alive() {
            return Err(StackError::Exited);
        }
        if self.stack.iter().any(|f| !matches!(f, Frame::Function { .. })) {
            return Err(StackError::CoreKeepsStack);
        }
        self.stack.clear();
        self.host_keeps_stack = true;
        Ok(())
    }

    /// Does the host keep the stack ([`Process::keep_own_stack`])?
    pub fn host_keeps_stack(&self) -> bool {
        self.host_keeps_stack
    }

    /// The process makes a body call of the traced function `entry` with
    /// `args`, remotely or locally; `stack` is the host's stack below the
    /// callee. Whether the new frame is watched is the answer.
    pub fn traced_call(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        stack: &dyn CallStack,
    ) -> Result<Watch, StackError> {
        self.in_host_mode()?;
        Ok(self.watched_call(entry, args, reach, stack, false))
    }

    /// The process tail-calls `entry` (traced, or `replaced` is watched)
    /// from a frame watched as `replaced`; `stack` is the host's stack
    /// below the replaced frame. The frame's new watch is the answer.
    pub fn traced_tail_call(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        replaced: Watch,
        stack: &dyn CallStack,
    ) -> Result<Watch, StackError> {
        self.in_host_mode()?;
        let keep = replaced == Watch::Watched;
        if keep {
            // Its trace frames stay, under the callee (as after a tail
            // call in ERTS).
            match self.stack.last() {
                Some(Frame::Function { .. }) => {
                    self.stack.pop();
                }
                _ => return Err(StackError::NoWatchedFrame),
            }
        }
        Ok(self.watched_call(entry, args, reach, stack, keep))
    }

    /// Hits `entry`'s breakpoint and watches the callee's frame if that
    /// left trace frames (or `keep`).
    fn watched_call(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        stack: &dyn CallStack,
        keep: bool,
    ) -> Watch {
        let depth = self.stack.len();
        if entry.is_traced() {
            self.hit(entry, args, reach, Some(stack));
        }
        if keep || self.stack.len() > depth {
            self.stack.push(Frame::Function { mfa: entry.mfa(), catches: false });
            Watch::Watched
        } else {
            Watch::Unwatched
        }
    }

    /// A watched frame returned `value`; `stack` is the host's stack after
    /// it (the function returned to on top).
    pub fn watched_return(
        &mut self,
        value: TermRef<'_>,
        stack: &dyn CallStack,
    ) -> Result<(), StackError> {
        self.in_host_mode()?;
        if !matches!(self.stack.last(), Some(Frame::Function { .. })) {
            return Err(StackError::NoWatchedFrame);
        }
        self.stack.pop();
        while let Some(frame) = self.pop_trace_frame() {
            self.on_return_frame(frame, value, Some(stack));
        }
        Ok(())
    }

    /// An exception of `class` with `reason` unwound `watched` watched
    /// frames (the raising one included, if watched) and was caught in
    /// `catcher`, or (`None`) nothing caught it and the process exits.
    pub fn unwound(
        &mut self,
        class: Atom,
        reason: TermRef<'_>,
        watched: usize,
        catcher: Option<Mfa>,
    ) -> Result<Raised, StackError> {
        self.in_host_mode()?;
        let functions = self.stack.iter().filter(|f| matches!(f, Frame::Function { .. }));
        if functions.count() < watched {
            return Err(StackError::NoWatchedFrame);
        }
        let mut unwinding = Unwinding::new(class, reason, catcher.is_some());
        for _ in 0..watched {
            // A watched frame is on top between calls (its trace frames
            // under it), and enough of them were counted above.
            self.stack.pop();
            while let Some(frame) = self.pop_trace_frame() {
                unwinding.trace_frame(self, frame);
            }
        }
        Ok(unwinding.end(self, catcher))
    }

    /// Fails unless the process is alive and its host keeps the stack.
    fn in_host_mode(&self) -> Result<(), StackError> {
        if !self.tracee.is_alive() {
            return Err(StackError::Exited);
        }
        if !self.host_keeps_stack {
            return Err(StackError::CoreKeepsStack);
        }
        Ok(())
    }
}
