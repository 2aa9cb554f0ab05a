//! Batch runs (`run_each`) on every engine give, input by input, what
//! single runs give, on the six shared benchmark workloads.

use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::{Heap, Word};
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use msc::{Engine, Spec};

/// A workload: its spec and its inputs.
fn workload(name: &str) -> (CompiledSpec, Heap, Vec<Word>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bench");
    let spec_text = std::fs::read_to_string(format!("{dir}/{name}.ms")).expect("spec file");
    let spec_term = matchspec::term::Term::parse(&spec_text).expect("spec parses");
    let tuple = spec_term.as_ref().as_tuple().expect("{Kind, Spec}");
    let kind = Kind::from_name(tuple.get(0).and_then(|k| k.as_atom()).expect("kind").name())
        .expect("a kind");
    let spec = tuple.get(1).expect("spec").to_string();
    let spec = CompiledSpec::compile(&spec, kind, &Config::default()).expect("compiles");
    let text = std::fs::read_to_string(format!("{dir}/{name}.terms")).expect("inputs");
    let mut heap = Heap::new();
    let inputs = matchspec::syntax::parse_terms_into(&text, &mut heap).expect("inputs parse");
    (spec, heap, inputs)
}

fn show(outcome: &Outcome<'_>) -> String {
    match outcome {
        Outcome::NoMatch => "nomatch".to_owned(),
        Outcome::Match(m) => format!("{} {:?}", m.result, m.flags),
    }
}

#[test]
fn batches_agree_with_single_runs_on_every_engine() {
    for name in ["tuple_filter", "guard_heavy", "multi_clause", "body_build", "deep_head", "arith"]
    {
        let (spec, heap, inputs) = workload(name);
        let mut scratch = Scratch::new();
        let mut host = TestHost::default();
        let expected: Vec<String> = inputs
            .iter()
            .map(|&w| show(&spec.run(heap.view(w), &mut scratch, &mut host).expect("runs")))
            .collect();
        for engine in [Engine::Interp, Engine::Jit, Engine::Auto] {
            let engine_spec = Spec::new(spec.clone(), engine);
            let mut got = Vec::with_capacity(inputs.len());
            engine_spec.run_each(
                Batch::new(&heap, &inputs),
                &mut scratch,
                &mut host,
                |i, outcome| {
                    assert_eq!(i, got.len());
                    got.push(show(outcome.expect("runs")));
                },
            );
            assert!(got == expected, "{name} on {}: batch answers differ", engine.name());
            // Only the matches, with their indices.
            let mut matching = Vec::new();
            engine_spec.run_matching(
                Batch::new(&heap, &inputs),
                &mut scratch,
                &mut host,
                |i, outcome| {
                    matching.push((i, show(outcome.expect("runs"))));
                },
            );
            let expected_matches: Vec<(usize, String)> = expected
                .iter()
                .enumerate()
                .filter(|(_, answer)| *answer != "nomatch")
                .map(|(i, answer)| (i, answer.clone()))
                .collect();
            assert!(matching == expected_matches, "{name} on {}: matches differ", engine.name());
            if engine == Engine::Jit {
                assert!(engine_spec.is_compiled(), "{name}: {:?}", engine_spec.jit_error());
            }
        }
    }
}

/// Trace programs in a batch: arguments loaded per input, inputs that are
/// not argument lists reported as errors, flags and messages per input.
#[test]
fn trace_batches_agree_with_the_interpreter() {
    let text = "[{['$1', '_'], [{is_integer, '$1'}], [{message, {{'$1'}}}, {return_trace}]},
                 {['$1'], [], [{message, '$1'}]}]";
    let spec = CompiledSpec::compile(text, Kind::Call, &Config::default()).expect("compiles");
    let mut heap = Heap::new();
    let inputs = matchspec::syntax::parse_terms_into(
        "[1, a]. [b]. not_a_list. [x, y, z]. [2 | improper]. []. [7, 8].",
        &mut heap,
    )
    .expect("inputs parse");
    let answers = |engine: Engine, every: bool| {
        let engine_spec = Spec::new(spec.clone(), engine);
        let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
        let mut got = Vec::new();
        let mut record = |i: usize, outcome: Result<&Outcome<'_>, &matchspec::EvalError>| {
            got.push(format!("{i}: {}", outcome.map_or_else(|e| e.to_string(), show)));
        };
        if every {
            engine_spec.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, &mut record);
        } else {
            engine_spec.run_matching(
                Batch::new(&heap, &inputs),
                &mut scratch,
                &mut host,
                &mut record,
            );
        }
        got
    };
    for every in [true, false] {
        let expected = answers(Engine::Interp, every);
        assert!(expected.iter().any(|a| a.contains("argument list")), "{expected:?}");
        assert_eq!(answers(Engine::Jit, every), expected, "every: {every}");
    }
}

/// Results built in the machine code, buffered past the buffer's size,
/// between results Rust must see at once (a helper built or set flags):
/// every engine hands over the same outcomes, in order.
#[test]
fn buffered_and_immediate_results_interleave() {
    let specs = [
        // Built inline; `element/2` goes through a helper.
        "[{{'$1','$2'}, [{is_integer,'$1'}], [{{'$1', ['$2' | '$1']}}]},
          {{'$1','$2'}, [], [{{{element, 1, '$2'}, '$1'}}]}]",
        // Float and bignum results in the op's heap slots.
        "[{{'$1','$2'}, [], [{{{'+', '$1', '$2'}, {'*', '$2', 2}}}]}]",
        // A clause that builds more than a region, and one that builds nothing.
        "[{{'$1', small}, [], ['$1']},
          {{'$1','$2'}, [], [{{'$1','$2','$1','$2','$1','$2','$1','$2','$1','$2','$1','$2'}}]}]",
    ];
    let mut text = String::new();
    for i in 0..700 {
        let x = match i % 5 {
            0 => format!("{i}"),
            1 => format!("{i}.5"),
            2 => "1180591620717411303424".to_owned(),
            3 => "a".to_owned(),
            _ => format!("{}", i * 3),
        };
        let y = match i % 7 {
            0 => "{t, 1}".to_owned(),
            1 => "small".to_owned(),
            2 => "2.25".to_owned(),
            3 => "36893488147419103232".to_owned(),
            _ => format!("{i}"),
        };
        text.push_str(&format!("{{{x}, {y}}}. "));
    }
    let mut heap = Heap::new();
    let inputs = matchspec::syntax::parse_terms_into(&text, &mut heap).expect("inputs parse");
    for spec in specs {
        let spec = CompiledSpec::compile(spec, Kind::Table, &Config::default()).expect("compiles");
        let answers = |engine: Engine, every: bool| {
            let engine_spec = Spec::new(spec.clone(), engine);
            let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
            let mut got = Vec::new();
            let mut record = |i: usize, outcome: Result<&Outcome<'_>, &matchspec::EvalError>| {
                got.push(format!("{i}: {}", show(outcome.expect("runs"))));
            };
            if every {
                engine_spec.run_each(
                    Batch::new(&heap, &inputs),
                    &mut scratch,
                    &mut host,
                    &mut record,
                );
            } else {
                engine_spec.run_matching(
                    Batch::new(&heap, &inputs),
                    &mut scratch,
                    &mut host,
                    &mut record,
                );
            }
            got
        };
        for every in [true, false] {
            let expected = answers(Engine::Interp, every);
            assert!(expected.len() > 100, "{expected:?}");
            assert_eq!(answers(Engine::Jit, every), expected, "every: {every}");
        }
    }
}

/// A host that writes what the spec displays into a log the caller's
/// callback writes outcomes into too.
struct Logging {
    log: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    inner: TestHost,
}

impl matchspec::Host for Logging {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.inner.self_pid(heap)
    }
    fn trace_control_word(&self) -> u32 {
        self.inner.trace_control_word()
    }
    fn set_trace_control_word(&mut self, value: u32) {
        self.inner.set_trace_control_word(value);
    }
    fn is_seq_trace(&mut self) -> bool {
        self.inner.is_seq_trace()
    }
    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.inner.seq_token(heap)
    }
    fn set_seq_token(
        &mut self,
        key: matchspec::term::TermRef<'_>,
        value: matchspec::term::TermRef<'_>,
    ) -> bool {
        self.inner.set_seq_token(key, value)
    }
    fn seq_trace_info(
        &mut self,
        key: Option<matchspec::term::Atom>,
        heap: &mut Heap,
    ) -> Option<Word> {
        self.inner.seq_trace_info(key, heap)
    }
    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        self.inner.process_dump(heap)
    }
    fn display(&mut self, term: matchspec::term::TermRef<'_>) {
        self.log.borrow_mut().push(format!("display {term}"));
    }
    fn change_trace(
        &mut self,
        how: matchspec::ir::ChangeTrace,
        target: Option<matchspec::term::TermRef<'_>>,
        a: matchspec::term::TermRef<'_>,
        b: Option<matchspec::term::TermRef<'_>>,
    ) -> Option<bool> {
        self.inner.change_trace(how, target, a, b)
    }
    fn caller(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller(heap)
    }
    fn caller_line(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller_line(heap)
    }
    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word {
        self.inner.current_stacktrace(depth, heap)
    }
    fn set_silent(&mut self, on: bool) {
        self.inner.set_silent(on);
    }
}

/// Each outcome reaches the callback before the next input's effects on
/// the host, on every engine, whether the caller wants every outcome or
/// only the matches.
#[test]
fn outcomes_come_before_the_next_inputs_host_effects() {
    let text = "[{['$1'], [{'<', '$1', 10}], [small]},
                 {['$1'], [{'<', '$1', 100}], [{display, '$1'}]},
                 {['$1', '_'], [], [{display, two}]}]";
    let spec = CompiledSpec::compile(text, Kind::Call, &Config::default()).expect("compiles");
    let mut heap = Heap::new();
    let inputs = matchspec::syntax::parse_terms_into(
        "[1]. [2]. [50]. [500]. [3]. [60]. [a, b]. [600]. [4]. [700]. [800]. [5].",
        &mut heap,
    )
    .expect("inputs parse");
    let answers = |engine: Engine, every: bool| {
        let engine_spec = Spec::new(spec.clone(), engine);
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut host = Logging { log: log.clone(), inner: TestHost::default() };
        let mut scratch = Scratch::new();
        let record = |i: usize, outcome: Result<&Outcome<'_>, &matchspec::EvalError>| {
            log.borrow_mut().push(format!("{i}: {}", show(outcome.expect("runs"))));
        };
        if every {
            engine_spec.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, record);
        } else {
            engine_spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, record);
        }
        log.take()
    };
    for every in [true, false] {
        let expected = answers(Engine::Interp, every);
        assert!(expected.iter().any(|l| l.starts_with("display")), "{expected:?}");
        assert_eq!(answers(Engine::Jit, every), expected, "every: {every}");
    }
}
