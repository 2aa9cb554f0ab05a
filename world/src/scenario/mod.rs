//! Scenario files: tracing commands and host events in Erlang term
//! syntax, run in order against a fresh core (`msc trace`; the format is
//! documented in `docs/scenarios.md`).
//!
//! ```
//! use msc_world::scenario::{run, Options};
//!
//! let text = "
//!     {module, m, [{f, 1}]}.
//!     {session_create, s1, <0.90.0>, []}.
//!     {spawn, <0.70.0>, <0.80.0>}.
//!     {process, s1, <0.80.0>, true, [call]}.
//!     {function, s1, {m, f, 1}, true, [local]}.
//!     {call, <0.80.0>, {m, f, [42]}}.
//! ";
//! let output = run(text, &Options::default())?;
//! assert_eq!(output.lines.last().unwrap(), "{<0.90.0>,{trace,<0.80.0>,call,{m,f,[42]}}}.");
//! # Ok::<(), matchspec::syntax::ParseError>(())
//! ```

mod runner;

use matchspec::Release;
use matchspec::syntax::{ParseError, parse_terms};
use matchspec::term::{Atom, Heap, Kind, Term, TermRef, Word};
use msc::Engine;

pub use matchspec_runtime::StackKeeper;
use matchspec_runtime::ids::Pid;

pub use runner::Runner;

/// How to run a scenario.
#[derive(Clone, Debug)]
pub struct Options {
    /// The engine match specs run on.
    pub engine: Engine,
    /// Replace timestamps by `'$ts'`, and the times and words of
    /// `call_time` and `call_memory` in `info` replies ([`mask_counters`]):
    /// how golden files from OTP store them.
    pub mask_timestamps: bool,
    /// Who keeps the processes' stacks. Both give the same output: the
    /// golden files are run both ways.
    pub stack: StackKeeper,
    /// The OTP release whose answers the core gives (and whose match specs
    /// it compiles): the core's `CoreConfig::spec` is made with it.
    /// Default [`Release::Otp27`].
    pub release: Release,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            engine: Engine::Interp,
            mask_timestamps: false,
            stack: StackKeeper::Core,
            release: Release::default(),
        }
    }
}

/// What a scenario printed, and a few counts.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The lines, each a dot-terminated term.
    pub lines: Vec<String>,
    /// How many terms ran.
    pub terms: usize,
    /// How many of them replied `{error, _}`.
    pub errors: usize,
    /// How many trace messages were delivered.
    pub messages: usize,
    /// What trace specs showed with `{display, X}` (ERTS prints it on the
    /// node's standard output; it is not part of `lines`).
    pub displayed: Vec<String>,
}

/// Runs the scenario `text` on a fresh core.
pub fn run(text: &str, options: &Options) -> Result<Output, ParseError> {
    let terms = parse_terms(text)?;
    let mut runner = Runner::new(options.clone());
    let mut output = Output::default();
    for term in &terms {
        runner.step(term.as_ref(), &mut output);
    }
    Ok(output)
}

/// `term` with every timestamp of a trace message replaced by `'$ts'`:
/// the last element of a `trace_ts` tuple and of a 4-tuple `seq_trace`;
/// and the heap figures of a garbage collection event or a system
/// monitor message (`{Key, N}` in its list) by `'$n'` (the world has no
/// heap to measure).
pub fn mask_timestamps(term: TermRef<'_>) -> Term {
    let term = mask_gc_figures(term);
    let term = term.as_ref();
    let Some(tuple) = term.as_tuple() else { return term.to_owned() };
    let tag = tuple.get(0).and_then(|t| t.as_atom()).map(Atom::name);
    let masked = match tag {
        Some("trace_ts") => true,
        Some("seq_trace") => tuple.len() == 4,
        _ => false,
    };
    if !masked {
        return term.to_owned();
    }
    let mut heap = Heap::new();
    let mut elements: Vec<Word> = tuple.iter().map(|e| e.copy_to(&mut heap)).collect();
    if let Some(last) = elements.last_mut() {
        *last = Word::atom(Atom::new("$ts"));
    }
    let root = heap.tuple(&elements);
    Term::from_parts(heap, root)
}

/// A `{trace | trace_ts, Pid, gc_*, [{Key, N}...] ...}` message (or a
/// tracer module's `gc_*` callback) with every `N` replaced by `'$n'`.
fn mask_gc_figures(term: TermRef<'_>) -> Term {
    // A default tracer's message, or a tracer module's callback
    // `{gc_*, State, Tracee, Info, Opts}`: the info is the fourth element.
    let gc = term.as_tuple().filter(|t| t.len() >= 4).and_then(|t| {
        let tag = t.get(0)?.as_atom()?.name();
        let event = t.get(2).and_then(|e| e.as_atom()).map_or("", Atom::name);
        let default = matches!(tag, "trace" | "trace_ts") && event.starts_with("gc_");
        let module = t.len() == 5 && tag.starts_with("gc_");
        // A system monitor's `{monitor, Pid, large_heap | long_gc |
        // long_schedule, [{Key, N}...]}`.
        let monitor =
            t.len() == 4 && tag == "monitor" && t.get(3).is_some_and(|i| i.proper_list().is_some());
        (default || module || monitor).then_some(t)
    });
    let Some(tuple) = gc else { return term.to_owned() };
    let mut heap = Heap::new();
    let mut elements: Vec<Word> = tuple.iter().map(|e| e.copy_to(&mut heap)).collect();
    let figures: Option<Vec<Word>> = tuple.get(3).and_then(|l| l.proper_list()).map(|items| {
        items
            .iter()
            .map(|item| match item.as_tuple().filter(|p| p.len() == 2).and_then(|p| p.get(0)) {
                Some(key) => {
                    let key = key.copy_to(&mut heap);
                    heap.tuple(&[key, Word::atom(Atom::new("$n"))])
                }
                None => item.copy_to(&mut heap),
            })
            .collect()
    });
    if let Some(figures) = figures {
        elements[3] = heap.list(&figures);
    }
    let root = heap.tuple(&elements);
    Term::from_parts(heap, root)
}

/// A `trace:info/3` reply with the measured values of `call_time` and
/// `call_memory` masked: each process's `{Pid, Count, Sec, USec}` becomes
/// `{Pid, Count, '$ts', '$ts'}`, each `{Pid, Count, Words}` becomes
/// `{Pid, Count, '$words'}`, and the processes are sorted by pid (OTP lists
/// them in an order that depends on its real pid values), also inside
/// `{all, Items}`. Anything else is kept as it is.
pub fn mask_counters(reply: TermRef<'_>) -> Term {
    let mut heap = Heap::new();
    let root = mask_info_item(reply, &mut heap);
    Term::from_parts(heap, root)
}

fn mask_info_item(item: TermRef<'_>, heap: &mut Heap) -> Word {
    let pair = item.as_tuple().filter(|t| t.len() == 2);
    let key = pair.and_then(|t| t.get(0)).and_then(|k| k.as_atom());
    let list = pair.and_then(|t| t.get(1)).and_then(|v| v.proper_list());
    let (Some(key), Some(mut list)) = (key, list) else { return item.copy_to(heap) };
    let masked = match key.name() {
        "all" => list.iter().map(|i| mask_info_item(*i, heap)).collect::<Vec<Word>>(),
        "call_time" | "call_memory" => {
            let (width, mask) = if key.name() == "call_time" {
                (4, Atom::new("$ts"))
            } else {
                (3, Atom::new("$words"))
            };
            list.sort_by_key(|e| e.as_tuple().and_then(|t| t.get(0)).and_then(Pid::from_term));
            list.iter()
                .map(|entry| match entry.as_tuple().filter(|t| t.len() == width) {
                    Some(t) => {
                        let mut elements: Vec<Word> = t.iter().map(|e| e.copy_to(heap)).collect();
                        for e in &mut elements[2..] {
                            *e = Word::atom(mask);
                        }
                        heap.tuple(&elements)
                    }
                    None => entry.copy_to(heap),
                })
                .collect()
        }
        _ => return item.copy_to(heap),
    };
    let list = heap.list(&masked);
    heap.tuple(&[Word::atom(key), list])
}

/// An output line's term with its timestamps masked: a `{Tracer, Message}`
/// line gets [`mask_timestamps`] on the message, any other line is kept
/// as it is. (Tests compare with golden files through this.)
pub fn mask_output_term(term: TermRef<'_>) -> Term {
    match term.as_tuple() {
        Some(t) if t.len() == 2 && matches!(t.get(0).map(TermRef::kind), Some(Kind::Pid(_))) => {
            let mut heap = Heap::new();
            let tracer = t.get(0).expect("two elements").copy_to(&mut heap);
            let message = mask_timestamps(t.get(1).expect("two elements")).copy_to(&mut heap);
            let root = heap.tuple(&[tracer, message]);
            Term::from_parts(heap, root)
        }
        _ => term.to_owned(),
    }
}

/// A line where a scenario's output and its golden file differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The line's number, from 1.
    pub line: usize,
    /// What the scenario printed there (`None` past its end).
    pub got: Option<String>,
    /// What the golden file has there (`None` past its end).
    pub expected: Option<String>,
}

/// Compares a scenario's output with a golden file's text term by term,
/// timestamps masked on both sides ([`mask_output_term`]) and strings read
/// as the lists of character codes they are (OTP prints `~w`): the lines
/// that differ, none if they agree.
pub fn compare(output: &Output, golden: &str) -> Result<Vec<Difference>, ParseError> {
    Golden::parse(golden)?.compare(output)
}

/// A golden file read once, to compare several runs of its scenario with.
#[derive(Clone, Debug)]
pub struct Golden {
    /// Its lines as they are written (one term each).
    text: Vec<String>,
    /// Its terms, masked and printed without strings.
    lines: Vec<String>,
}

impl Golden {
    /// Reads a golden file's text.
    pub fn parse(text: &str) -> Result<Golden, ParseError> {
        let lines = masked_lines(&parse_terms(text)?);
        let text = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from);
        Ok(Golden { text: text.collect(), lines })
    }

    /// The lines where `output` differs (see [`compare`]).
    pub fn compare(&self, output: &Output) -> Result<Vec<Difference>, ParseError> {
        // msc prints as the golden files are written: the same text is the
        // same terms, with no need to read them.
        if output.lines == self.text {
            return Ok(Vec::new());
        }
        let got = masked_lines(&parse_terms(&output.lines.join("\n"))?);
        let expected = &self.lines;
        Ok((0..got.len().max(expected.len()))
            .filter(|&i| got.get(i) != expected.get(i))
            .map(|i| Difference {
                line: i + 1,
                got: got.get(i).cloned(),
                expected: expected.get(i).cloned(),
            })
            .collect())
    }
}

fn masked_lines(terms: &[Term]) -> Vec<String> {
    terms
        .iter()
        .map(|t| mask_output_term(t.as_ref()).as_ref().without_strings().to_string())
        .collect()
}
