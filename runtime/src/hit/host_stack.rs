//! [`HostStack`]: a stack kept by the host, as a VM keeps its own, that
//! reports to the core only what a host that keeps its stack must
//! ([`Process::keep_own_stack`]): traced calls and the end of watched
//! frames. Hosts can start from it; the scenario runner's `--stack host`
//! mode and the trace benchmarks run on it.

use matchspec::term::{Atom, Term, TermRef};

use crate::hit::process::{CallStack, CallStyle, Process, Raised, Reach, StackError, Watch};
use crate::model::breakpoint::FunctionEntry;
use crate::model::ids::Mfa;
#[cfg(test)]
use crate::model::ids::Pid;

/// One active function.
#[derive(Clone, Copy, Debug)]
struct HostFrame {
    mfa: Mfa,
    /// Inside a `try` around the call above it.
    catches: bool,
    watch: Watch,
}

/// The stack of one process whose host keeps it.
///
/// ```
/// use matchspec::term::{Atom, Term};
/// use matchspec_runtime::{CallStyle, CoreConfig, Function, HostStack, Mfa, Pid, Reach, TraceCore};
///
/// let core = TraceCore::new(CoreConfig::default());
/// let f = core.declare_module(Atom::new("m"), &[Function::exported("f", 0)])?.remove(0);
/// let mut process = core.spawn(Pid::new(80, 0), None);
/// let mut stack = HostStack::new(&mut process, Some(Mfa::new("m", "main", 0)))?;
/// // `m:f/0` is not traced: the core hears nothing of this call.
/// stack.call(&mut process, &f, &Term::nil().as_ref(), Reach::Remote, CallStyle::Body)?;
/// assert_eq!(stack.functions().next(), Some(Mfa::new("m", "f", 0)));
/// stack.return_value(&mut process, &Term::atom(Atom::OK).as_ref())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct HostStack {
    frames: Vec<HostFrame>,
}

impl CallStack for HostStack {
    fn function(&self, depth: usize) -> Option<Mfa> {
        self.frames.iter().rev().nth(depth).map(|f| f.mfa)
    }
}

impl HostStack {
    /// Takes over `process`'s stack, with `initial` as its first function.
    pub fn new(process: &mut Process, initial: Option<Mfa>) -> Result<HostStack, StackError> {
        process.keep_own_stack()?;
        let frames = initial
            .map(|mfa| HostFrame { mfa, catches: false, watch: Watch::Unwatched })
            .into_iter()
            .collect();
        Ok(HostStack { frames })
    }

    /// The active functions, innermost first.
    pub fn functions(&self) -> impl Iterator<Item = Mfa> + '_ {
        self.frames.iter().rev().map(|f| f.mfa)
    }

    /// How many frames it holds.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// `process` calls `entry` with `args` (a list), remotely or locally.
    /// (`args` and the value of [`HostStack::return_value`] are borrowed:
    /// an untraced call never reads them, and a view passed by value
    /// would be copied on every call.)
    #[inline]
    pub fn call(
        &mut self,
        process: &mut Process,
        entry: &FunctionEntry,
        args: &TermRef<'_>,
        reach: Reach,
        style: CallStyle,
    ) -> Result<(), StackError> {
        let watch = match style {
            CallStyle::Body | CallStyle::Try => {
                if style == CallStyle::Try {
                    let top = self.frames.last_mut().ok_or(StackError::NoActiveFunction)?;
                    top.catches = true;
                }
                if entry.is_traced() {
                    self.traced_call(process, entry, args, reach)?
                } else {
                    Watch::Unwatched
                }
            }
            CallStyle::Tail => {
                let replaced = self.frames.pop().ok_or(StackError::NoActiveFunction)?;
                if entry.is_traced() || replaced.watch == Watch::Watched {
                    match self.tail_call(process, entry, args, reach, replaced.watch) {
                        Ok(watch) => watch,
                        Err(e) => {
                            self.frames.push(replaced);
                            return Err(e);
                        }
                    }
                } else {
                    Watch::Unwatched
                }
            }
        };
        self.frames.push(HostFrame { mfa: entry.mfa(), catches: false, watch });
        Ok(())
    }

    // The traced paths stay out of line, so that inlining `call` and
    // `return_value` into a host's loop copies nothing on the untraced one.

    #[inline(never)]
    fn traced_call(
        &self,
        process: &mut Process,
        entry: &FunctionEntry,
        args: &TermRef<'_>,
        reach: Reach,
    ) -> Result<Watch, StackError> {
        process.traced_call(entry, *args, reach, self)
    }

    #[inline(never)]
    fn tail_call(
        &self,
        process: &mut Process,
        entry: &FunctionEntry,
        args: &TermRef<'_>,
        reach: Reach,
        replaced: Watch,
    ) -> Result<Watch, StackError> {
        process.traced_tail_call(entry, *args, reach, replaced, self)
    }

    /// The innermost function returns `value`; the process exits
    /// (`normal`) when it was the last.
    #[inline]
    pub fn return_value(
        &mut self,
        process: &mut Process,
        value: &TermRef<'_>,
    ) -> Result<(), StackError> {
        let top = self.frames.pop().ok_or(StackError::NoActiveFunction)?;
        if let Some(caller) = self.frames.last_mut() {
            // A `try` around the call is over.
            caller.catches = false;
        }
        if top.watch == Watch::Watched {
            self.watched_return(process, value)?;
        }
        if self.frames.is_empty() {
            process.exit_with(Term::atom(Atom::new("normal")).as_ref());
        }
        Ok(())
    }

    #[inline(never)]
    fn watched_return(&self, process: &mut Process, value: &TermRef<'_>) -> Result<(), StackError> {
        process.watched_return(*value, self)
    }

    /// The innermost function raises `reason` of `class` (`error`, `exit`
    /// or `throw`): frames unwind to the nearest `try`.
    pub fn raise(
        &mut self,
        process: &mut Process,
        class: Atom,
        reason: TermRef<'_>,
    ) -> Result<Raised, StackError> {
        if self.frames.is_empty() {
            return Err(StackError::NoActiveFunction);
        }
        let mut watched = 0;
        let catcher = loop {
            let top = self.frames.pop().expect("a frame until a catch or the bottom");
            watched += usize::from(top.watch == Watch::Watched);
            match self.frames.last_mut() {
                None => break None,
                Some(frame) if frame.catches => {
                    frame.catches = false;
                    break Some(frame.mfa);
                }
                Some(_) => {}
            }
        };
        process.unwound(class, reason, watched, catcher)
    }
}

#[cfg(test)]
mod tests {
    use matchspec::term::{Atom, Term};

    use std::sync::Arc;

    use super::*;
    use crate::control::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
    use crate::model::breakpoint::BpFlags;
    use crate::model::breakpoint::Function;
    use crate::model::flags::TraceFlags;
    use crate::test_support::{Traced, traced};

    /// `Traced` with `m:f/0`, `m:g/0` and `m:h/0` declared and `spec` as
    /// the local trace pattern of `m:g/0`; the process's stack is a
    /// [`HostStack`].
    fn host_traced(flags: TraceFlags, spec: &str) -> (Traced, [Arc<FunctionEntry>; 3], HostStack) {
        let mut t = traced(flags);
        let functions = ["f", "g", "h"].map(|name| Function::exported(name, 0));
        let mut entries = t.core.declare_module(Atom::new("m"), &functions).expect("declared");
        entries.truncate(3); // module_info/0,1 follow
        let action = parse_pattern_action(&t.core, Term::parse(spec).expect("spec").as_ref())
            .expect("the spec compiles");
        let pattern = MfaPattern::from_term(Term::parse("{m,g,0}").expect("mfa").as_ref())
            .expect("an exact MFA");
        let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
        t.core.set_pattern(&t.session, pattern, &action, &local).expect("applied");
        let stack = HostStack::new(&mut t.process, Some(Mfa::new("m", "loop", 0))).expect("fresh");
        let [f, g, h] = <[Arc<FunctionEntry>; 3]>::try_from(entries).expect("three functions");
        (t, [f, g, h], stack)
    }

    fn messages(t: &Traced) -> Vec<String> {
        t.rx.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect()
    }

    #[test]
    fn untraced_calls_leave_the_core_nothing_to_keep() {
        let (mut t, [f, _, h], mut stack) =
            host_traced(TraceFlags::CALL, "[{'_', [], [{return_trace}]}]");
        let nil = Term::nil();
        for _ in 0..3 {
            stack
                .call(&mut t.process, &f, &nil.as_ref(), Reach::Remote, CallStyle::Body)
                .expect("call");
        }
        stack
            .call(&mut t.process, &h, &nil.as_ref(), Reach::Remote, CallStyle::Tail)
            .expect("tail");
        assert_eq!(t.process.stack_depth(), 0);
        assert_eq!(stack.depth(), 4);
        assert_eq!(stack.functions().next(), Some(Mfa::new("m", "h", 0)));
        assert!(messages(&t).is_empty());
    }

    #[test]
    fn a_traced_call_is_watched_and_reads_the_callers_from_the_host() {
        let spec = "[{'_', [], [{message, {caller}}, {return_trace}]}]";
        let (mut t, [f, g, _], mut stack) = host_traced(TraceFlags::CALL, spec);
        let nil = Term::nil();
        stack.call(&mut t.process, &f, &nil.as_ref(), Reach::Remote, CallStyle::Body).expect("f");
        stack.call(&mut t.process, &g, &nil.as_ref(), Reach::Local, CallStyle::Body).expect("g");
        // The core keeps g's frame and its return_trace frame only.
        assert_eq!(t.process.stack_depth(), 2);
        stack.return_value(&mut t.process, &Term::atom(Atom::OK).as_ref()).expect("g returns");
        assert_eq!(t.process.stack_depth(), 0);
        assert_eq!(
            messages(&t),
            ["{trace,<0.80.0>,call,{m,g,[]},{m,f,0}}", "{trace,<0.80.0>,return_from,{m,g,0},ok}"]
        );
    }

    #[test]
    fn an_exception_reports_the_watched_frames_it_unwound() {
        let spec = "[{'_', [], [{exception_trace}]}]";
        let (mut t, [f, g, h], mut stack) =
            host_traced(TraceFlags::CALL | TraceFlags::RETURN_TO, spec);
        let nil = Term::nil();
        stack.call(&mut t.process, &f, &nil.as_ref(), Reach::Remote, CallStyle::Try).expect("f");
        stack.call(&mut t.process, &g, &nil.as_ref(), Reach::Local, CallStyle::Body).expect("g");
        stack.call(&mut t.process, &h, &nil.as_ref(), Reach::Remote, CallStyle::Body).expect("h");
        let raised = stack
            .raise(&mut t.process, Atom::new("throw"), Term::atom(Atom::new("oops")).as_ref())
            .expect("raised");
        assert!(matches!(raised, Raised::Caught(mfa) if mfa == Mfa::new("m", "loop", 0)));
        assert_eq!(
            messages(&t),
            [
                "{trace,<0.80.0>,call,{m,g,[]}}",
                "{trace,<0.80.0>,exception_from,{m,g,0},{throw,oops}}",
                "{trace,<0.80.0>,return_to,{m,loop,0}}",
            ]
        );
        assert_eq!(t.process.stack_depth(), 0);
        assert_eq!(stack.functions().collect::<Vec<_>>(), [Mfa::new("m", "loop", 0)]);
    }

    #[test]
    fn each_keeper_refuses_the_others_reports() {
        let (mut t, [f, g, _], mut stack) = host_traced(TraceFlags::CALL, "true");
        let (nil, ok) = (Term::nil(), Term::atom(Atom::OK));
        assert_eq!(
            t.process.call(&f, nil.as_ref(), Reach::Remote, CallStyle::Body),
            Err(StackError::HostKeepsStack)
        );
        assert_eq!(t.process.return_value(ok.as_ref()), Err(StackError::HostKeepsStack));
        assert_eq!(t.process.watched_return(ok.as_ref(), &stack), Err(StackError::NoWatchedFrame));
        let oops = Term::atom(Atom::new("oops"));
        assert_eq!(
            t.process.unwound(Atom::ERROR, oops.as_ref(), 1, None).err(),
            Some(StackError::NoWatchedFrame)
        );
        stack.call(&mut t.process, &g, &nil.as_ref(), Reach::Local, CallStyle::Body).expect("g");
        let mut core_kept = t.core.spawn(Pid::new(81, 0), Some(Mfa::new("m", "loop", 0)));
        assert_eq!(
            core_kept.traced_call(&g, nil.as_ref(), Reach::Remote, &stack),
            Err(StackError::CoreKeepsStack)
        );
        assert_eq!(core_kept.watched_return(ok.as_ref(), &stack), Err(StackError::CoreKeepsStack));
    }
}
