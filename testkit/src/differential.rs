//! The `differential` target's oracle: the interpreter and the JIT give
//! exactly the same answers, and running on ETF bytes (deciding on the
//! wire where the spec allows) gives what decoding first gives.
//!
//! `fuzz/fuzz_targets/differential.rs` and `tests/regression/jit.rs` both
//! call [`differential`], so the target and the regression tests check
//! exactly the same thing.

use std::cell::RefCell;
use std::fmt;
use std::sync::Once;

use arbitrary::Unstructured;
use matchspec::encoded::built::EncodedOutcome;
use matchspec::host::{Effect, Recording};
use matchspec::run::Batch;
use matchspec::term::{Heap, Term, TermRef, Word};
use matchspec::wire::{Layout, RunMatch, Verdict, WireProgram};
use matchspec::{CompiledSpec, Config, EvalError, Flags, Outcome, Run, Scratch, TestHost};
use matchspec_jit::{JitError, JitProgram};

use crate::oracles::{DiffCase, MAX_INPUT, differential_case};

/// Generated specs of every kind, compiled with the default configuration
/// and with `match_spec_test`'s, run on generated inputs by the interpreter
/// and by the JIT, one input at a time and as a batch, give the same
/// outcomes (terms compared with `=:=` and as text), the same flags, the
/// same effects on the host and leave the host in the same state. The JIT
/// compiles every spec the checker takes (it may only refuse one as too
/// large), and neither engine panics.
pub fn differential(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let Ok(case) = differential_case(&mut Unstructured::new(data)) else {
        return false;
    };
    check(&case);
    true
}

/// Runs `case` on both engines and panics (printing the case as Erlang
/// text) if they disagree.
pub fn check(case: &DiffCase) {
    let _current = Current::set(case);
    for config in [Config::default(), matchspec::conformance::test_config()] {
        let Ok(spec) = CompiledSpec::from_term(case.spec.as_ref(), case.kind, &config) else {
            continue;
        };
        let jit = match JitProgram::compile(&spec) {
            Ok(jit) => jit,
            Err(JitError::TooLarge { .. }) => continue,
            Err(err) => panic!("the JIT failed to compile a checked spec: {err}"),
        };
        let config_name = if config.get_fake_destructive() { "test_config()" } else { "default" };
        single_runs(case, &spec, &jit, config_name);
        batch_runs(case, &spec, &jit, config_name);
        encoded_runs(case, &spec, &jit, config_name);
    }
}

/// What one run gave, owned.
#[derive(Debug, PartialEq)]
enum Answer {
    Error(EvalError),
    NoMatch,
    Match { result: Term, text: String, flags: Flags },
}

impl Answer {
    fn of(outcome: Result<&Outcome<'_>, &EvalError>) -> Answer {
        match outcome {
            Err(err) => Answer::Error(err.clone()),
            Ok(Outcome::NoMatch) => Answer::NoMatch,
            Ok(Outcome::Match(m)) => Answer::Match {
                result: m.result.to_owned(),
                text: m.result.to_string(),
                flags: m.flags,
            },
        }
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Error(err) => write!(f, "error: {err}"),
            Answer::NoMatch => f.write_str("nomatch"),
            Answer::Match { text, flags, .. } => write!(f, "match {text} {flags:?}"),
        }
    }
}

/// What a host saw: the effects asked of it and its state.
#[derive(Debug, PartialEq)]
struct Seen {
    effects: Vec<Effect>,
    tcw: u32,
    flags: u32,
    silent: bool,
    displayed: Vec<String>,
}

impl Seen {
    fn of(host: &mut Recording<TestHost>) -> Seen {
        let effects = host.take_effects();
        let inner = host.inner();
        Seen {
            effects,
            tcw: inner.tcw,
            flags: inner.flags,
            silent: inner.silent,
            displayed: inner.displayed.clone(),
        }
    }
}

fn host() -> Recording<TestHost> {
    Recording::new(TestHost::default())
}

/// Each input on its own, in order, each engine keeping its scratch and
/// host from one input to the next; then each matching result (a term
/// spanning several heaps) as an input of its own.
fn single_runs(case: &DiffCase, spec: &CompiledSpec, jit: &JitProgram, config: &str) {
    let (mut interp_scratch, mut jit_scratch) = (Scratch::new(), Scratch::new());
    let (mut interp_host, mut jit_host) = (host(), host());
    for (i, input) in case.inputs.iter().enumerate() {
        let input = input.as_ref();
        let interp = spec.run(input, &mut interp_scratch, &mut interp_host);
        let interp_answer = Answer::of(interp.as_ref());
        let interp_seen = Seen::of(&mut interp_host);
        let jit_answer = Answer::of(jit.run(input, &mut jit_scratch, &mut jit_host).as_ref());
        let jit_seen = Seen::of(&mut jit_host);
        agree(&format!("input {} ({config})", i + 1), input, &interp_answer, &jit_answer);
        assert!(
            interp_seen == jit_seen,
            "input {} ({config}): the hosts differ\ninterp: {interp_seen:?}\njit:    {jit_seen:?}",
            i + 1
        );
        if let Ok(Outcome::Match(m)) = &interp {
            rerun(spec, jit, m.result, &format!("the result of input {} ({config})", i + 1));
        }
    }
}

/// `input` (a result of another run) on both engines, with fresh scratches
/// and hosts.
fn rerun(spec: &CompiledSpec, jit: &JitProgram, input: TermRef<'_>, what: &str) {
    let (mut interp_host, mut jit_host) = (host(), host());
    let interp = Answer::of(spec.run(input, &mut Scratch::new(), &mut interp_host).as_ref());
    let jit_answer = Answer::of(jit.run(input, &mut Scratch::new(), &mut jit_host).as_ref());
    agree(what, input, &interp, &jit_answer);
    let (interp_seen, jit_seen) = (Seen::of(&mut interp_host), Seen::of(&mut jit_host));
    assert!(
        interp_seen == jit_seen,
        "{what}: the hosts differ\ninterp: {interp_seen:?}\njit:    {jit_seen:?}"
    );
}

/// All inputs as one batch from one heap: both engines' batches agree with
/// each other and with the interpreter's single runs.
fn batch_runs(case: &DiffCase, spec: &CompiledSpec, jit: &JitProgram, config: &str) {
    let mut heap = Heap::new();
    let words: Vec<Word> = case.inputs.iter().map(|t| t.copy_to(&mut heap)).collect();

    let mut singles = Vec::with_capacity(words.len());
    let (mut scratch, mut single_host) = (Scratch::new(), host());
    for input in &case.inputs {
        singles.push(Answer::of(spec.run(input.as_ref(), &mut scratch, &mut single_host).as_ref()));
    }
    let single_seen = Seen::of(&mut single_host);

    let (mut interp_host, mut jit_host) = (host(), host());
    let mut interp = Vec::with_capacity(words.len());
    spec.run_each(
        Batch::new(&heap, &words),
        &mut Scratch::new(),
        &mut interp_host,
        |i, outcome| {
            assert_eq!(i, interp.len(), "the interpreter's batch skipped or repeated an input");
            interp.push(Answer::of(outcome));
        },
    );
    let mut jitted = Vec::with_capacity(words.len());
    jit.run_each(Batch::new(&heap, &words), &mut Scratch::new(), &mut jit_host, |i, outcome| {
        assert_eq!(i, jitted.len(), "the JIT's batch skipped or repeated an input");
        jitted.push(Answer::of(outcome));
    });
    assert_eq!(interp.len(), words.len(), "the interpreter's batch left out inputs");
    assert_eq!(jitted.len(), words.len(), "the JIT's batch left out inputs");
    for (i, &word) in words.iter().enumerate() {
        let input = heap.view(word);
        let what = format!("input {} in a batch ({config})", i + 1);
        agree(&what, input, &interp[i], &jitted[i]);
        agree(&format!("{what}, interpreter batch vs single"), input, &singles[i], &interp[i]);
    }
    let (interp_seen, jit_seen) = (Seen::of(&mut interp_host), Seen::of(&mut jit_host));
    assert!(
        interp_seen == jit_seen,
        "batch ({config}): the hosts differ\ninterp: {interp_seen:?}\njit:    {jit_seen:?}"
    );
    assert!(
        single_seen == interp_seen,
        "batch ({config}): the interpreter's batch and single runs leave different hosts\n\
         single: {single_seen:?}\nbatch:  {interp_seen:?}"
    );
}

/// Each input encoded, in other encodings of the same term (Latin-1
/// atoms; all of [`encodings`](crate::encodings)' rewrites at once), and
/// damaged copies of the encoding (cut short, a byte changed), run on bytes
/// by both engines ([`Run::run_encoded`],
/// which decides on the wire where it can) and by decoding first: the
/// answers, or the decoding errors, are the same.
fn encoded_runs(case: &DiffCase, spec: &CompiledSpec, jit: &JitProgram, config: &str) {
    for (i, input) in case.inputs.iter().enumerate() {
        let Ok(bytes) = matchspec::etf::encode(input.as_ref()) else { continue };
        let n = bytes.len();
        let mut variants = crate::encodings::variants_in(&bytes, [2, 15]);
        for cut in [n / 2, n.saturating_sub(1), n * 3 / 4] {
            variants.push(bytes[..cut].to_vec());
        }
        for (k, at) in [1, n / 3, n / 2, n - 1].into_iter().enumerate() {
            let mut changed = bytes.clone();
            if let Some(byte) = changed.get_mut(at) {
                *byte = [0, 255, byte.wrapping_add(1), byte.wrapping_sub(1)][k];
            }
            variants.push(changed);
        }
        for (v, variant) in variants.iter().enumerate() {
            let what = format!("input {} encoded, variant {v} ({config})", i + 1);
            if let (Some(plain), Some(coded)) = (spec.wire(), jit.wire_program()) {
                runs_agree(plain, coded, variant, &bytes, &what);
            }
            let expected = match matchspec::etf::decode(variant) {
                Ok(term) => Ok(Answer::of(
                    spec.run(term.as_ref(), &mut Scratch::new(), &mut host()).as_ref(),
                )),
                Err(err) => Err(err),
            };
            for (engine, run) in [("interp", spec as &dyn RunEncoded), ("jit", jit)] {
                let got = run.encoded(variant);
                assert!(
                    got == expected,
                    "{what}: {engine} on bytes {variant:?} gives {got:?}, decoding first {expected:?}"
                );
                let got = run.built(variant);
                assert!(
                    got == expected,
                    "{what}: {engine} on bytes {variant:?}, the result left in them, gives \
                     {got:?}, decoding first {expected:?}"
                );
                // As a stream reader runs it: measured and indexed first.
                if let Some(got) = run.measured(variant) {
                    // Measuring reports the decoder's error of a prefix,
                    // which may differ in detail: an error is the answer.
                    let both_errors = got.is_err() && expected.is_err();
                    assert!(
                        both_errors || got == expected,
                        "{what}: {engine} on bytes {variant:?} measured first gives {got:?}, \
                         decoding first {expected:?}"
                    );
                }
            }
        }
    }
}

/// Runs of entries passed by the JIT's wire code ([`WireProgram::pass`])
/// over `variant` between whole encodings of the input (`good`), in every
/// layout: each entry passed is one the usual path rejects or matches
/// alone, and the matches written down are those, in order.
fn runs_agree(plain: &WireProgram, coded: &WireProgram, variant: &[u8], good: &[u8], what: &str) {
    let layouts = [
        Layout::ADJACENT,
        Layout::prefixed(2),
        Layout::prefixed(4),
        Layout { lead: Some(0), length_bytes: 4 },
    ];
    for layout in layouts {
        let width = usize::from(layout.length_bytes);
        let frame = |term: &[u8]| {
            let len = (term.len() as u64).to_be_bytes();
            let lead = layout.lead.as_slice();
            [lead, &len[8 - width..], term].concat()
        };
        if width > 0 && (good.len().max(variant.len()) >> (8 * width)) != 0 {
            continue;
        }
        let mut bytes = frame(good);
        bytes.extend(frame(variant));
        for _ in 0..8 {
            bytes.extend(frame(good));
        }
        let mut matches = [RunMatch::default(); 4];
        let run = coded.pass(&bytes, layout, usize::MAX, u64::MAX, &mut matches);
        let (mut at, mut found) = (0, Vec::new());
        let mut scratch = Scratch::new();
        let prefix = layout.prefix_len();
        for before in 0..run.entries {
            let rest = &bytes[at..];
            let (len, verdict) = if width == 0 {
                let decided = plain.decide_first(&rest[prefix..], &mut scratch);
                decided.unwrap_or_else(|| {
                    panic!("{what}: {layout:?} entry {before} passed, not measured")
                })
            } else {
                let field = &rest[prefix - width..prefix];
                let len = field.iter().fold(0, |len, &byte| len << 8 | usize::from(byte));
                let term = &rest[prefix..prefix + len];
                (len, plain.decide(term, &mut scratch))
            };
            let len = prefix + len;
            match verdict {
                Verdict::NoMatch => {}
                Verdict::Match { result } => found.push(RunMatch {
                    before,
                    entry: at as u64,
                    term: (at + prefix) as u64,
                    len: (len - prefix) as u64,
                    result: result as u64,
                }),
                Verdict::Run | Verdict::Decode => {
                    panic!("{what}: {layout:?} entry {before} passed, undecided")
                }
            }
            at += len;
        }
        assert_eq!(run.bytes, at, "{what}: {layout:?} bytes passed");
        assert_eq!(matches[..run.matches], found[..], "{what}: {layout:?} matches");
    }
}

/// [`Run::run_encoded`] with fresh state, as an object (the trait is not).
trait RunEncoded {
    fn encoded(&self, bytes: &[u8]) -> Result<Answer, matchspec::etf::DecodeError>;
    /// As a stream reader runs it: measured (`term_len_indexed`), then
    /// decided through that index; `None` if the bytes are not one whole
    /// term by that measure.
    fn measured(&self, bytes: &[u8]) -> Option<Result<Answer, matchspec::etf::DecodeError>>;
    /// As a stream writing results out runs it: a result left in the bytes
    /// ([`Run::run_verdict_built`]) taken as a term and printed, its
    /// encoding checked to decode to that term.
    fn built(&self, bytes: &[u8]) -> Result<Answer, matchspec::etf::DecodeError>;
}

impl<R: Run> RunEncoded for R {
    fn encoded(&self, bytes: &[u8]) -> Result<Answer, matchspec::etf::DecodeError> {
        let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
        let outcome = self.run_encoded(bytes, &mut heap, &mut scratch, &mut host())?;
        Ok(Answer::of(outcome.as_ref()))
    }

    fn measured(&self, bytes: &[u8]) -> Option<Result<Answer, matchspec::etf::DecodeError>> {
        let mut index = matchspec::etf::PlainIndex::new();
        match matchspec::etf::term_len_indexed(bytes, &mut index) {
            Ok(len) if len == bytes.len() => {}
            Ok(_) => return None,
            Err(err) => return Some(Err(err)),
        }
        let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
        let verdict = match self.wire_program() {
            Some(wire) => wire.decide_indexed(bytes, &index, &mut scratch),
            None => Verdict::Decode,
        };
        let outcome = self.run_verdict(bytes, verdict, &mut heap, &mut scratch, &mut host());
        Some(outcome.map(|outcome| Answer::of(outcome.as_ref())))
    }

    fn built(&self, bytes: &[u8]) -> Result<Answer, matchspec::etf::DecodeError> {
        let (mut heap, mut scratch) = (Heap::new(), Scratch::new());
        let verdict = match self.wire_program() {
            Some(wire) => wire.decide(bytes, &mut scratch),
            None => Verdict::Decode,
        };
        let built =
            match self.run_verdict_built(bytes, verdict, &mut heap, &mut scratch, &mut host())? {
                Ok(EncodedOutcome::Built(built)) => built,
                Ok(EncodedOutcome::Outcome(outcome)) => return Ok(Answer::of(Ok(&outcome))),
                Err(err) => return Ok(Answer::Error(err)),
            };
        let result = built.to_term()?;
        let mut text = String::new();
        built.write_text(&mut text).expect("a result left in plain bytes prints");
        let mut encoded = Vec::new();
        built.write_etf(&mut encoded).expect("a result left in plain bytes encodes");
        let decoded = matchspec::etf::decode(&encoded).expect("a result's encoding decodes");
        assert!(
            decoded == result,
            "a result encoded from the bytes decodes to {decoded}, not {result}"
        );
        Ok(Answer::Match { result, text, flags: Flags::default() })
    }
}

#[track_caller]
fn agree(what: &str, input: TermRef<'_>, a: &Answer, b: &Answer) {
    assert!(a == b, "{what}: the engines disagree on {input}\ninterp: {a}\njit:    {b}");
}

thread_local! {
    /// The case being checked on this thread, for the panic hook to print.
    static CURRENT: RefCell<Option<DiffCase>> = const { RefCell::new(None) };
}

/// Marks a case as being checked: a panic until this is dropped prints the
/// case first, as Erlang text ready for a regression case.
struct Current;

impl Current {
    fn set(case: &DiffCase) -> Current {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let _ = CURRENT.try_with(|current| {
                    if let Ok(current) = current.try_borrow()
                        && let Some(case) = current.as_ref()
                    {
                        eprintln!("differential case ({{Kind, MatchSpec, Input}}):\n{case}");
                    }
                });
                previous(info);
            }));
        });
        CURRENT.with(|current| *current.borrow_mut() = Some(case.clone()));
        Current
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|current| current.borrow_mut().take());
    }
}
