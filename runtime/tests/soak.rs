//! Soak: a mixed load on several threads for a minute (`MSC_SOAK_SECS`
//! to change it), with resident memory sampled every 100 ms. After a
//! warm-up (the first half), its slope (least squares over the samples)
//! must be near zero:
//! nothing the core keeps per event, per process or per change may pile up.
//!
//! The load: workers that spawn processes, call traced and untraced
//! functions, send and receive, and exit them; a thread that churns
//! patterns (on, off, restart counters, match specs) and sessions (create,
//! trace, destroy); tracers that drain their mailboxes, one slow one (it
//! naps) under a drop policy, and one host tracer that naps in `trace`.
//!
//! A test binary of its own: resident memory is the process's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use matchspec::term::{Atom, Heap, Term, TermRef, Word};
use matchspec_runtime::breakpoint::BpFlags;
use matchspec_runtime::commands::{FlagChange, MessageEvent, ProcessSpec};
use matchspec_runtime::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
use matchspec_runtime::{
    CallStyle, CoreConfig, Enabled, Function, ManualClock, Mfa, Origin, Overload, Pid,
    ProcessTracer, Reach, TraceCore, TraceFlags, TraceOpts, TraceTag, TraceeId, Tracer,
};

const WORKERS: u32 = 3;
/// The steepest growth of resident memory allowed after the warm-up, in
/// bytes per second. Resident memory also moves with the allocator (it
/// grows its heaps in steps, by thread): runs that keep nothing have shown
/// up to 457 KiB/s. A leak of one byte per event is about 1 MiB/s.
const MAX_SLOPE: f64 = 1024.0 * 1024.0;
/// The most the load may keep allocated when it ends: the tracers' queued
/// messages (at most their limits), the last processes and caches.
const MAX_KEPT_BYTES: i64 = 16 << 20;

/// Runs `load`, adding to `net` the bytes it allocated on this thread and
/// did not free (negative where it freed what another thread allocated).
fn counted(net: &AtomicI64, load: impl FnOnce()) {
    let info = allocation_counter::measure(load);
    net.fetch_add(info.bytes_current, Ordering::Relaxed);
}

fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("rss");
    pages * 4096
}

/// A host tracer that naps in `trace` now and then.
#[derive(Debug, Default)]
struct Napper(AtomicU64);

impl Tracer for Napper {
    fn enabled(&self, _tag: TraceTag, _tracee: TraceeId) -> Enabled {
        Enabled::Trace
    }
    fn trace(&self, _tag: TraceTag, _tracee: TraceeId, _msg: TermRef<'_>, _opts: &TraceOpts<'_>) {
        if self.0.fetch_add(1, Ordering::Relaxed).is_multiple_of(5_000) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    fn trace_seq(&self, _label: TermRef<'_>, _info: TermRef<'_>, _opts: &TraceOpts<'_>) {}
    fn to_term(&self, _heap: &mut Heap) -> Word {
        Word::atom(Atom::new("napper"))
    }
}

/// Runs the soak in a child process with glibc's per-thread arenas capped
/// (`MALLOC_ARENA_MAX=2`): uncapped, the allocator adds arenas in steps
/// whenever threads contend, whatever the program keeps, which makes
/// resident memory jump by megabytes at random moments; capped, resident
/// memory measures what the program holds.
#[test]
fn resident_memory_stays_flat_under_a_mixed_load() {
    if std::env::var_os("MSC_SOAK_CHILD").is_some() {
        return soak();
    }
    let exe = std::env::current_exe().expect("the test binary");
    let status = std::process::Command::new(exe)
        .args(["--exact", "resident_memory_stays_flat_under_a_mixed_load", "--nocapture"])
        .env("MSC_SOAK_CHILD", "1")
        .env("MALLOC_ARENA_MAX", "2")
        .status()
        .expect("the soak runs");
    assert!(status.success(), "the soak failed: {status}");
}

fn soak() {
    let seconds: u64 =
        std::env::var("MSC_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let clock = Arc::new(ManualClock::new());
    let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
    let functions = core
        .declare_module(Atom::new("m"), &[Function::exported("f", 1), Function::exported("g", 1)])
        .expect("module");
    let stop = Arc::new(AtomicBool::new(false));
    let events = Arc::new(AtomicU64::new(0));
    // Bytes each thread of the load allocated and did not free, summed:
    // what the load keeps, whatever the allocator does with its pages.
    let net = Arc::new(AtomicI64::new(0));

    // Tracers: a fast one that drains, a slow one that lags, a napping host tracer.
    let (fast_tx, fast_rx) = crossbeam_channel::unbounded();
    // Bounded too: on a small machine the workers can outrun one drainer,
    // and an unbounded mailbox would then grow as ERTS's does.
    let fast = Arc::new(
        ProcessTracer::new(Pid::new(90, 0), fast_tx, clock.clone())
            .with_overload(Overload::Drop { limit: 1_000 }),
    );
    let (slow_tx, slow_rx) = crossbeam_channel::unbounded();
    let slow = Arc::new(
        ProcessTracer::new(Pid::new(91, 0), slow_tx, clock.clone())
            .with_overload(Overload::Drop { limit: 1_000 }),
    );
    let main = core.session_create(Atom::new("main"), Some(fast));
    let lagging = core.session_create(Atom::new("lagging"), Some(slow));
    let napping = core.session_create(Atom::new("napping"), Some(Arc::new(Napper::default())));
    for session in [&main, &lagging, &napping] {
        let flags = TraceFlags::CALL | TraceFlags::SEND | TraceFlags::RECEIVE | TraceFlags::PROCS;
        core.trace_processes(session, ProcessSpec::New, FlagChange::on(flags)).expect("new");
    }
    let drainers = [(fast_rx, 0u64), (slow_rx, 3)].map(|(rx, nap)| {
        let (stop, net) = (stop.clone(), net.clone());
        std::thread::spawn(move || {
            counted(&net, || {
                while !stop.load(Ordering::Relaxed) {
                    for _ in rx.try_iter() {}
                    std::thread::sleep(Duration::from_millis(1 + nap));
                }
                // What is still queued counts as held (by the channel).
                std::mem::forget(rx);
            });
        })
    });

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (core, functions, stop, events, net) =
                (core.clone(), functions.clone(), stop.clone(), events.clone(), net.clone());
            std::thread::spawn(move || {
                counted(&net, || {
                    let args = Term::parse("[42]").expect("args");
                    let msg = Term::parse("{hello, [1, 2, 3]}").expect("msg");
                    let start = Term::parse("{m, f, [1]}").expect("start");
                    let mut round = 0u32;
                    let mut parent =
                        core.spawn(Pid::new(1000 + w, 0), Some(Mfa::new("m", "loop", 0)));
                    while !stop.load(Ordering::Relaxed) {
                        round = round.wrapping_add(1);
                        let pid = Pid::new(10_000 + w * 1_000_000 + round % 1_000_000, 1);
                        let mut p = core.spawn_from(
                            parent.tracee(),
                            pid,
                            Some(Mfa::new("m", "f", 1)),
                            start.as_ref(),
                        );
                        for i in 0..20 {
                            let f = &functions[i % 2];
                            p.call(f, args.as_ref(), Reach::Remote, CallStyle::Body).expect("call");
                            p.return_value(msg.as_ref()).expect("return");
                        }
                        let to = parent.pid();
                        let mut heap = Heap::new();
                        let to_word = to.to_word(&mut heap);
                        let to_term = Term::from_parts(heap, to_word);
                        let _token = p.send(to_term.as_ref(), Some(to), msg.as_ref());
                        parent.message_arrived(Origin::Process(pid), msg.as_ref());
                        p.exit();
                        events.fetch_add(43, Ordering::Relaxed);
                        if round.is_multiple_of(10_000) {
                            parent.exit();
                            parent = core
                                .spawn(Pid::new(1000 + w, round), Some(Mfa::new("m", "loop", 0)));
                        }
                    }
                    parent.exit();
                })
            })
        })
        .collect();

    // The churn: patterns and sessions.
    let churn = {
        let (core, stop, main, net) = (core.clone(), stop.clone(), main.clone(), net.clone());
        std::thread::spawn(move || {
            counted(&net, || {
                let all =
                    MfaPattern::from_term(Term::parse("{m, '_', '_'}").expect("mfa").as_ref())
                        .expect("mfa");
                let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
                let counting = PatternFlags { kinds: BpFlags::COUNT, meta_tracer: None };
                let specs = [
                    "true",
                    "false",
                    "[{['$1'], [{'>', '$1', 10}], [{return_trace}]}]",
                    "[{'_', [], [{message, {caller}}]}]",
                    "restart",
                ];
                let mut n = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let spec = Term::parse(specs[n % specs.len()]).expect("spec");
                    let action = parse_pattern_action(&core, spec.as_ref()).expect("action");
                    let flags =
                        if specs[n % specs.len()] == "restart" { &counting } else { &local };
                    core.set_pattern(&main, all, &action, flags).expect("pattern");
                    let send = Term::parse(if n.is_multiple_of(2) {
                        "true"
                    } else {
                        "[{['_', '$1'], [], []}]"
                    })
                    .expect("send");
                    core.set_message_pattern(&main, MessageEvent::Send, send.as_ref())
                        .expect("send pattern");
                    let (tx, rx) = crossbeam_channel::unbounded();
                    let tracer = Arc::new(ProcessTracer::new(
                        Pid::new(92, 0),
                        tx,
                        Arc::new(ManualClock::new()),
                    ));
                    let passing = core.session_create(Atom::new("passing"), Some(tracer));
                    core.trace_processes(
                        &passing,
                        ProcessSpec::All,
                        FlagChange::on(TraceFlags::CALL),
                    )
                    .expect("all");
                    core.set_pattern(&passing, all, &action, &local).ok();
                    std::thread::sleep(Duration::from_millis(2));
                    core.session_destroy(&passing).expect("destroy");
                    drop(rx);
                }
            })
        })
    };

    // Samples: (seconds since start, bytes).
    let started = Instant::now();
    let mut samples = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_millis(100));
        samples.push((started.elapsed().as_secs_f64(), resident() as f64));
    }
    stop.store(true, Ordering::Relaxed);
    for t in workers.into_iter().chain([churn]).chain(drainers) {
        t.join().expect("a thread of the load");
    }
    // The first half warms up (allocator pools, tables, caches, mailboxes
    // filling to their limits).
    let steady: Vec<(f64, f64)> = samples.iter().copied().skip(samples.len() / 2).collect();
    let n = steady.len() as f64;
    let (mx, my) = steady.iter().fold((0.0, 0.0), |(x, y), s| (x + s.0 / n, y + s.1 / n));
    let sxy: f64 = steady.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
    let sxx: f64 = steady.iter().map(|s| (s.0 - mx) * (s.0 - mx)).sum();
    let slope = sxy / sxx;
    let first = samples.first().map_or(0.0, |s| s.1) / 1048576.0;
    let last = samples.last().map_or(0.0, |s| s.1) / 1048576.0;
    eprintln!(
        "soak: {seconds} s, {} events, resident {first:.1} -> {last:.1} MiB, slope after warm-up {:.1} KiB/s",
        events.load(Ordering::Relaxed),
        slope / 1024.0
    );
    let kept = net.load(Ordering::Relaxed);
    eprintln!("soak: the load keeps {kept} bytes allocated at the end");
    assert!(kept < MAX_KEPT_BYTES, "the load keeps {kept} bytes allocated");
    assert!(slope < MAX_SLOPE, "resident memory grows {:.1} KiB/s", slope / 1024.0);
}
