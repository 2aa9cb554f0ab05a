//! `msc_tracer`: an `erl_tracer` module whose callbacks (`enabled/3`,
//! `trace/5`) are these NIFs, with sinks and overload policies that never
//! make the traced process wait.
//!
//! The callbacks run in the traced process. `enabled/3` answers from two
//! flags; `trace/5` applies sampling and the rate, builds the message
//! `erl_tracer` would send (`{trace, Tracee, Tag, Term [, Extra] [,
//! MatchSpecResult]}`, or `trace_ts` with the timestamp last), keeps it
//! only if the optional filter spec matches it, and hands it to the sink:
//! a process (dropping while the watchdog of `msc_tracer.erl` says its
//! queue is over the limit), a file written by its own thread from a
//! bounded queue (dropping when the queue is full), or a ring of the
//! latest messages. Drops are counted, and reported in the stream as
//! `{drop, N}` before the next message delivered.

mod policy;
mod sink;

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use msc::{Heap, Kind, Run, Scratch, Spec, TestHost};
use rustler::types::tuple::make_tuple;
use rustler::{Binary, Encoder, Env, Error, LocalPid, NifResult, OwnedBinary, ResourceArc, Term};

use crate::atoms;
use crate::convert::export;
use crate::spec::{build_spec, export_error};
pub use policy::Limits;
use policy::{Meter, Verdict};
use sink::{DEFAULT_FILE_QUEUE, Entry, FileSink, Ring, Sink};

/// A tracer: the state `{tracer, msc_tracer, State}` names.
pub struct TracerResource {
    sink: Sink,
    filter: Option<Spec>,
    meter: Meter,
}

#[rustler::resource_impl]
impl rustler::Resource for TracerResource {}

impl Drop for TracerResource {
    fn drop(&mut self) {
        // The last reference is gone: nobody is left to hear of a failed
        // final write, so the writer is closed and joined regardless.
        if let Sink::File(file) = &self.sink {
            let _ = file.close(None);
        }
    }
}

thread_local! {
    /// Where the filter spec decodes messages: one per scheduler thread.
    static FILTER_SPACE: RefCell<(Heap, Scratch)> = RefCell::new((Heap::new(), Scratch::new()));
}

fn optional<'a, T: rustler::Decoder<'a>>(term: Term<'a>) -> NifResult<Option<T>> {
    if term.atom_to_string().is_ok_and(|a| a == "undefined") {
        Ok(None)
    } else {
        term.decode().map(Some)
    }
}

/// `msc_tracer:new/2`'s work: `Sink` is `{process, Pid}`, `{file, Path}`
/// or `{ring, Size}`; the rest are `undefined` or a value.
#[rustler::nif(name = "nif_tracer_new", schedule = "DirtyIo")]
#[allow(clippy::too_many_arguments, reason = "one argument per option, named by msc_tracer.erl")]
fn tracer_new<'a>(
    env: Env<'a>,
    sink: Term<'a>,
    filter: Term<'a>,
    sample: Term<'a>,
    max_messages: Term<'a>,
    max_time_ms: Term<'a>,
    rate: Term<'a>,
    max_queue: Term<'a>,
) -> NifResult<Term<'a>> {
    let limits = Limits {
        sample: optional::<u64>(sample)?.unwrap_or(1).max(1),
        max_messages: optional(max_messages)?,
        max_time: optional::<u64>(max_time_ms)?.map(Duration::from_millis),
        rate: optional(rate)?,
        max_queue: optional(max_queue)?,
    };
    let filter = match optional::<Term<'a>>(filter)? {
        None => None,
        Some(spec) => match build_spec(spec, Kind::Table, msc::Engine::Auto)? {
            Ok(spec) => Some(spec),
            Err(e) => return Ok((atoms::error(), crate::error::errors_term(env, &e)).encode(env)),
        },
    };
    let parts = rustler::types::tuple::get_tuple(sink).map_err(|_| Error::BadArg)?;
    let [kind, arg] = parts.as_slice() else { return Err(Error::BadArg) };
    let sink = match kind.atom_to_string().map_err(|_| Error::BadArg)?.as_str() {
        "process" => Sink::Process { pid: arg.decode::<LocalPid>()?, congested: false.into() },
        "file" => {
            let path = Binary::from_term(*arg).map_err(|_| Error::BadArg)?;
            let path = std::str::from_utf8(path.as_slice()).map_err(|_| Error::BadArg)?;
            match FileSink::create(path, limits.max_queue.unwrap_or(DEFAULT_FILE_QUEUE)) {
                Ok(file) => Sink::File(file),
                Err(e) => return Ok((atoms::error(), (atoms::file(), e.to_string())).encode(env)),
            }
        }
        "ring" => Sink::Ring(parking_lot::Mutex::new(Ring::new(arg.decode()?))),
        _ => return Err(Error::BadArg),
    };
    let tracer = TracerResource { sink, filter, meter: Meter::new(limits) };
    Ok((atoms::ok(), ResourceArc::new(tracer)).encode(env))
}

/// `erl_tracer:enabled/3`: `trace` while the tracer runs, then `remove`.
#[rustler::nif(name = "enabled")]
fn enabled<'a>(env: Env<'a>, _tag: Term<'a>, state: Term<'a>, _tracee: Term<'a>) -> Term<'a> {
    match state.decode::<ResourceArc<TracerResource>>() {
        Ok(tracer) if !tracer.meter.is_stopped() => atoms::trace().encode(env),
        _ => atoms::remove().encode(env),
    }
}

/// `erl_tracer:trace/5`.
#[rustler::nif(name = "trace")]
fn trace<'a>(
    env: Env<'a>,
    tag: Term<'a>,
    state: Term<'a>,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
) -> Term<'a> {
    let ok = atoms::ok().encode(env);
    let Ok(tracer) = state.decode::<ResourceArc<TracerResource>>() else { return ok };
    let meter = &tracer.meter;
    if meter.is_stopped() || !meter.room_for_one() {
        return ok;
    }
    match meter.admit() {
        Verdict::Keep => {}
        Verdict::Skip | Verdict::Drop => return ok,
    }
    let message = build_message(env, tag, tracee, term, opts);
    let mut encoded = None;
    if let Some(spec) = &tracer.filter {
        let etf = message.to_binary();
        if !keeps(spec, etf.as_slice()) {
            meter.filtered.fetch_add(1, Ordering::Relaxed);
            return ok;
        }
        encoded = Some(etf);
    }
    deliver(env, &tracer, message, encoded);
    ok
}

/// The message `erl_tracer` sends for these callback arguments.
fn build_message<'a>(
    env: Env<'a>,
    tag: Term<'a>,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
) -> Term<'a> {
    let get = |key: rustler::Atom| opts.map_get(key.encode(env)).ok();
    let timestamp = get(atoms::timestamp());
    let head = if timestamp.is_some() { atoms::trace_ts() } else { atoms::trace() };
    // At most seven elements: no allocation per event.
    let mut elements = [head.encode(env), tracee, tag, term, term, term, term];
    let mut len = 4;
    let optional = [
        get(atoms::extra()),
        get(atoms::match_spec_result()),
        timestamp.map(|kind| timestamp_of(env, kind)),
    ];
    for element in optional.into_iter().flatten() {
        elements[len] = element;
        len += 1;
    }
    make_tuple(env, &elements[..len])
}

/// The time stamp of the kind `kind` names, now.
fn timestamp_of<'a>(env: Env<'a>, kind: Term<'a>) -> Term<'a> {
    // SAFETY: enif_monotonic_time reads a clock; it has no preconditions.
    let monotonic =
        || unsafe { rustler::sys::enif_monotonic_time(rustler::sys::ErlNifTimeUnit::ERL_NIF_NSEC) };
    // Atom terms compare as words: no name is read per event.
    if atoms::monotonic() == kind {
        monotonic().encode(env)
    } else if atoms::strict_monotonic() == kind {
        static UNIQUE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        (monotonic(), UNIQUE.fetch_add(1, Ordering::Relaxed)).encode(env)
    } else {
        // `timestamp` and `cpu_timestamp`: {MegaSecs, Secs, MicroSecs}.
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = now.as_secs();
        (secs / 1_000_000, secs % 1_000_000, now.subsec_micros()).encode(env)
    }
}

/// Does the filter spec match the message encoded as `etf`? It runs on the
/// bytes (`run_encoded`): a message every clause's head rejects is never
/// decoded, and a kept one goes to a file or ring sink as it is.
fn keeps(spec: &Spec, etf: &[u8]) -> bool {
    FILTER_SPACE.with_borrow_mut(|(heap, scratch)| {
        heap.clear();
        match spec.run_encoded(etf, heap, scratch, &mut TestHost::default()) {
            Ok(Ok(outcome)) => outcome.result().is_some(),
            // A message msc cannot decode is kept: the filter only drops
            // what it has read.
            _ => true,
        }
    })
}

/// Hands `message` (and its encoding, if the filter made it) to the sink,
/// after a `{drop, N}` for what was lost.
fn deliver<'a>(
    env: Env<'a>,
    tracer: &TracerResource,
    message: Term<'a>,
    encoded: Option<OwnedBinary>,
) {
    let meter = &tracer.meter;
    match &tracer.sink {
        Sink::Process { pid, congested } => {
            if congested.load(Ordering::Relaxed) {
                meter.count_drop();
                return;
            }
            let lost = meter.unreported.swap(0, Ordering::Relaxed);
            if lost > 0 && env.send(pid, (atoms::drop(), lost)).is_err() {
                meter.stop();
                return;
            }
            if env.send(pid, message).is_err() {
                meter.stop();
                return;
            }
            meter.count_kept();
        }
        Sink::File(file) => {
            let lost = meter.unreported.load(Ordering::Relaxed);
            if lost > 0 {
                if !file.offer(Entry::Drop(lost)) {
                    meter.count_drop();
                    return;
                }
                meter.unreported.fetch_sub(lost, Ordering::Relaxed);
            }
            if file.offer(Entry::Message(encoded.unwrap_or_else(|| message.to_binary()))) {
                meter.count_kept();
            } else {
                meter.count_drop();
            }
        }
        Sink::Ring(ring) => {
            ring.lock().push(encoded.unwrap_or_else(|| message.to_binary()));
            meter.count_kept();
        }
    }
}

/// The watchdog's report: is the receiving process's queue over the limit?
#[rustler::nif(name = "nif_tracer_congested")]
fn tracer_congested(tracer: ResourceArc<TracerResource>, congested: bool) -> bool {
    if let Sink::Process { congested: flag, .. } = &tracer.sink {
        flag.store(congested, Ordering::Relaxed);
    }
    true
}

/// Stops the tracer; a file sink writes what it holds and closes.
#[rustler::nif(name = "nif_tracer_stop", schedule = "DirtyIo")]
fn tracer_stop<'a>(env: Env<'a>, tracer: ResourceArc<TracerResource>) -> Term<'a> {
    tracer.meter.stop();
    // What was dropped since the last message delivered is reported too.
    let lost = tracer.meter.unreported.swap(0, Ordering::Relaxed);
    if let Sink::File(file) = &tracer.sink
        && let Err(e) = file.close((lost > 0).then_some(Entry::Drop(lost)))
    {
        return (atoms::error(), (atoms::file(), e.to_string())).encode(env);
    }
    atoms::ok().encode(env)
}

/// The counters, as a map.
#[rustler::nif(name = "nif_tracer_stats")]
fn tracer_stats<'a>(env: Env<'a>, tracer: ResourceArc<TracerResource>) -> NifResult<Term<'a>> {
    let m = &tracer.meter;
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed).encode(env);
    let mut pairs = vec![
        (atoms::seen().encode(env), load(&m.seen)),
        (atoms::kept().encode(env), load(&m.kept)),
        (atoms::filtered().encode(env), load(&m.filtered)),
        (atoms::sampled_out().encode(env), load(&m.sampled_out)),
        (atoms::dropped().encode(env), load(&m.dropped)),
        (atoms::stopped().encode(env), m.is_stopped().encode(env)),
    ];
    match &tracer.sink {
        Sink::Ring(ring) => {
            let ring = ring.lock();
            pairs.push((atoms::overwritten().encode(env), ring.overwritten.encode(env)));
            pairs.push((atoms::size().encode(env), ring.messages.len().encode(env)));
        }
        Sink::File(file) => pairs.push((atoms::bytes().encode(env), load(&file.written))),
        Sink::Process { .. } => {}
    }
    Term::map_from_pairs(env, &pairs).map_err(|_| Error::BadArg)
}

/// The ring's messages, oldest first.
#[rustler::nif(name = "nif_tracer_ring", schedule = "DirtyCpu")]
fn tracer_ring<'a>(env: Env<'a>, tracer: ResourceArc<TracerResource>) -> NifResult<Term<'a>> {
    let Sink::Ring(ring) = &tracer.sink else { return Err(Error::BadArg) };
    let ring = ring.lock();
    let mut out = Vec::with_capacity(ring.messages.len());
    for etf in &ring.messages {
        // SAFETY: the bytes are the VM's own term_to_binary output.
        let (term, _) =
            unsafe { env.binary_to_term_trusted(etf.as_slice()) }.ok_or(Error::BadArg)?;
        out.push(term);
    }
    Ok(out.encode(env))
}

/// The result of each ring message a clause of `spec` (table dialect)
/// matches, oldest first; messages every head rejects are never decoded.
#[rustler::nif(name = "nif_tracer_ring_select", schedule = "DirtyCpu")]
fn tracer_ring_select<'a>(
    env: Env<'a>,
    tracer: ResourceArc<TracerResource>,
    spec: Term<'a>,
) -> NifResult<Term<'a>> {
    let Sink::Ring(ring) = &tracer.sink else { return Err(Error::BadArg) };
    let spec = match build_spec(spec, Kind::Table, msc::Engine::Auto)? {
        Ok(spec) => spec,
        Err(_) => return Err(Error::BadArg),
    };
    let messages: Vec<Vec<u8>> =
        ring.lock().messages.iter().map(|m| m.as_slice().to_vec()).collect();
    let (mut heap, mut scratch, mut host) = (Heap::new(), Scratch::new(), TestHost::default());
    let mut out = Vec::new();
    for etf in &messages {
        heap.clear();
        let Ok(Ok(outcome)) = spec.run_encoded(etf, &mut heap, &mut scratch, &mut host) else {
            continue;
        };
        if let Some(result) = outcome.result() {
            out.push(export(env, result).map_err(export_error)?);
        }
    }
    Ok(out.encode(env))
}
