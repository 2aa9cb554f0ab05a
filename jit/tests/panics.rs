//! A panic in a host (user code called from the machine code) reaches the
//! caller exactly as it does from the interpreter, and nothing the spec
//! asks after it reaches the host.

use std::panic::{AssertUnwindSafe, catch_unwind};

use matchspec::host::{Effect, Host, Recording};
use matchspec::ir::ChangeTrace;
use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};
use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost};
use matchspec_jit::JitProgram;

/// A host whose `display` panics; everything else is recorded.
struct Panicky(Recording<TestHost>);

impl Host for Panicky {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.0.self_pid(heap)
    }
    fn trace_control_word(&self) -> u32 {
        self.0.trace_control_word()
    }
    fn set_trace_control_word(&mut self, value: u32) {
        self.0.set_trace_control_word(value);
    }
    fn is_seq_trace(&mut self) -> bool {
        self.0.is_seq_trace()
    }
    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.0.seq_token(heap)
    }
    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool {
        self.0.set_seq_token(key, value)
    }
    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        self.0.seq_trace_info(key, heap)
    }
    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        self.0.process_dump(heap)
    }
    fn display(&mut self, term: TermRef<'_>) {
        panic!("display of {term}");
    }
    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        self.0.change_trace(how, target, a, b)
    }
    fn caller(&mut self, heap: &mut Heap) -> Word {
        self.0.caller(heap)
    }
    fn caller_line(&mut self, heap: &mut Heap) -> Word {
        self.0.caller_line(heap)
    }
    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word {
        self.0.current_stacktrace(depth, heap)
    }
    fn set_silent(&mut self, on: bool) {
        self.0.set_silent(on);
    }
}

/// The panic message and the effects the host saw, running with the
/// interpreter (`jit: None`) or the machine code.
fn run(spec: &CompiledSpec, jit: Option<&JitProgram>) -> (String, Vec<Effect>) {
    let args = Term::parse("[7]").expect("parses");
    let mut host = Panicky(Recording::new(TestHost::default()));
    let mut scratch = Scratch::new();
    let result = catch_unwind(AssertUnwindSafe(|| match jit {
        None => spec.run(args.as_ref(), &mut scratch, &mut host).map(|_| ()),
        Some(jit) => jit.run(args.as_ref(), &mut scratch, &mut host).map(|_| ()),
    }));
    let payload = result.expect_err("the host's panic comes through");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    (message, host.0.take_effects())
}

#[test]
fn host_panics_come_through_the_machine_code() {
    let text =
        "[{['$1'], [], [{silent, true}, {display, {{'$1'}}}, {silent, false}, {message, ok}]}]";
    let spec = CompiledSpec::compile(text, Kind::Call, &Config::default()).expect("compiles");
    let jit = JitProgram::compile(&spec).expect("compiles to machine code");
    let interpreted = run(&spec, None);
    let compiled = run(&spec, Some(&jit));
    assert_eq!(interpreted.0, "display of {7}");
    assert_eq!(compiled, interpreted);
    // The effect before the panic happened, the one after did not.
    assert_eq!(compiled.1, [Effect::Silent(true)]);
}

/// The indices a batch handed over before the host's panic came through.
fn batch(spec: &CompiledSpec, jit: Option<&JitProgram>, every: bool) -> (Vec<usize>, Vec<Effect>) {
    let mut heap = Heap::new();
    let inputs =
        matchspec::syntax::parse_terms_into("[1]. [2]. [30]. [4]. [50]. [6].", &mut heap).unwrap();
    let mut host = Panicky(Recording::new(TestHost::default()));
    let mut scratch = Scratch::new();
    let mut seen = Vec::new();
    let mut each =
        |i: usize, _: Result<&matchspec::Outcome<'_>, &matchspec::EvalError>| seen.push(i);
    let result = catch_unwind(AssertUnwindSafe(|| match (jit, every) {
        (None, false) => {
            spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, &mut each)
        }
        (None, true) => {
            spec.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, &mut each)
        }
        (Some(jit), false) => {
            jit.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, &mut each)
        }
        (Some(jit), true) => {
            jit.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, &mut each)
        }
    }));
    assert!(result.is_err(), "the host's panic comes through");
    (seen, host.0.take_effects())
}

#[test]
fn a_batch_hands_over_the_matches_before_a_panic() {
    // Small arguments match in the machine code alone (buffered); a large
    // one is displayed, and the host panics.
    let text = "[{['$1'], [{'<', '$1', 10}], [small]},
                 {['$1'], [], [{silent, true}, {display, '$1'}, {silent, false}]}]";
    let spec = CompiledSpec::compile(text, Kind::Call, &Config::default()).expect("compiles");
    let jit = JitProgram::compile(&spec).expect("compiles to machine code");
    for every in [false, true] {
        let interpreted = batch(&spec, None, every);
        assert_eq!(interpreted.0, [0, 1]);
        assert_eq!(batch(&spec, Some(&jit), every), interpreted);
    }
}
