//! The native filters give the interpreter's answers: on every input of
//! their workloads (and the same number of matches as ERTS gave in
//! `results/erts-otp27.jsonl`), and on edge cases the workloads do not reach.

use matchspec::run::Batch;
use matchspec::term::{Heap, Word};
use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost};
use msc_benches::native::{NATIVE_WORKLOADS, Native, NativeVisitor, with_native};
use msc_benches::{Workload, workload_dir};

/// Runs the interpreter and the native filter on every input and compares
/// their answers (`=:=`); returns how many inputs matched.
struct Compare<'a> {
    name: &'a str,
    spec: &'a CompiledSpec,
    heap: &'a Heap,
    inputs: &'a [Word],
}

impl NativeVisitor for Compare<'_> {
    type Output = u64;

    fn visit<N: Native>(self, native: N) -> u64 {
        let mut scratch = Scratch::new();
        let mut host = TestHost::default();
        let mut out = Heap::new();
        let mut matched = 0;
        self.spec.run_each(
            Batch::new(self.heap, self.inputs),
            &mut scratch,
            &mut host,
            |i, outcome| {
                let input = self.inputs[i];
                let expected = outcome.expect("the interpreter runs").result();
                let got = native.run(self.heap, input, &mut out);
                let show = |r: Option<matchspec::term::TermRef<'_>>| {
                    r.map_or_else(|| "no match".to_owned(), |t| t.to_string())
                };
                let same = match (expected, got) {
                    (None, None) => true,
                    (Some(e), Some(g)) => e.eq_exact(&g),
                    _ => false,
                };
                assert!(
                    same,
                    "{}: input {i} {}: interpreter {}, native {}",
                    self.name,
                    self.heap.view(input),
                    show(expected),
                    show(got)
                );
                matched += u64::from(expected.is_some());
            },
        );
        matched
    }
}

fn compare(name: &str, spec: &CompiledSpec, heap: &Heap, inputs: &[Word]) -> u64 {
    with_native(name, Compare { name, spec, heap, inputs }).expect("a native filter")
}

/// Matches per workload in ERTS (OTP 27), from `results/erts-otp27.jsonl`.
fn erts_matched(name: &str) -> Option<u64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/results/erts-otp27.jsonl");
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.contains(&format!("\"workload\":\"{name}\"")))?;
    let rest = &line[line.find("\"matched\":")? + "\"matched\":".len()..];
    rest[..rest.find(|c: char| !c.is_ascii_digit())?].parse().ok()
}

#[test]
fn native_filters_agree_with_the_interpreter_on_every_workload_input() {
    let dir = workload_dir();
    for name in NATIVE_WORKLOADS {
        let Ok(workload) = Workload::load(&dir, name) else {
            eprintln!("skipped {name}: no workload in {}", dir.display());
            continue;
        };
        let spec = CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
            .expect("the spec compiles");
        let matched = compare(name, &spec, &workload.heap, &workload.inputs);
        assert!(matched > 0, "{name}: nothing matched");
        if let Some(erts) = erts_matched(name) {
            assert_eq!(matched, erts, "{name}: matches here and in ERTS");
        }
    }
}

/// Inputs that reach what the workloads' inputs do not: other types where
/// the spec compares or computes, bignums, floats, failing bodies.
const EDGE_CASES: &[(&str, &str)] = &[
    (
        "tuple_filter",
        "{x, 101, ok}. {x, 100, ok}. {x, 100.5, ok}. {x, 100.0, ok}. {x, foo, ok}.
         {x, \"str\", ok}. {{1, [2]}, 200, ok}. {<<\"k\">>, 200, ok}. {x, 200, error}.
         {x, 200}. {x, 200, ok, y}. foo. [x, 200, ok].
         {x, 1180591620717411303424, ok}. {x, -1180591620717411303424, ok}.",
    ),
    (
        "guard_heavy",
        "{a, 10, get}. {a, 190, delete}. {a, 9, put}. {a, 191, put}. {a, 10.0, get}.
         {1, 50, get}. {a, 1180591620717411303424, get}. {a, 50, 1}. {a, 50, post}.
         {[], 50, put}. {a, 50}. {'EXIT', 100, delete}.",
    ),
    (
        "multi_clause",
        "{req, get, <<\"p\">>, #{}, 1023.5}. {req, get, <<\"p\">>, #{}, 1024}.
         {req, get, <<\"p\">>, x, 2000}. {req, get, <<\"p\">>, x, 2000000}.
         {req, get, {1, 2.5}, #{cache => {a, [b]}}, 5000}.
         {req, get, [1 | 2], #{cache => 1180591620717411303424}, foo}.
         {req, put, <<\"p\">>, #{type => <<\"bulk\">>}, foo}.
         {req, put, \"p\", #{type => <<\"bulk\">>}, 70000.0}.
         {req, put, <<\"p\">>, #{type => <<\"bulk\">>}, 65536}.
         {req, put, <<\"p\">>, #{type => bulk}, 70000}. {req, put, <<\"p\">>, 1, 70000}.
         {req, put, <<1:3>>, #{}, 2000001}. {req, delete, 1, 2, 3}. {req, delete, 1, 2}.
         {req, head, [1, 2], #{}, 0}. {req, options, 1.5, x, y}.
         {req, x, y, z, 1180591620717411303424}. {req, x, y, z, -1180591620717411303424}.
         {reqx, get, y, z, 1}.",
    ),
    (
        "body_build",
        "{1.5, <<\"b\">>, #{a => [1 | 2]}}. {x}. {1180591620717411303424, -1, {}}.
         {\"abc\", [], <<1:5>>}. {{a, {b}}, 2.0, [x, y | z]}.",
    ),
    (
        "deep_head",
        "{a, {b, 1, [c]}, x}. {a, {b, 1, [c | d]}, x}. {a, {b, 1, [c | 2]}, #{k => 3}}.
         {a, {b, {z, 1.0}, [d]}, #{k => 1180591620717411303424, j => 2}}.
         {a, {b, 1, []}, #{k => 2.0}}. {a, {b, 1}, #{k => 3}}. {a, {b, 1, [c, 1]}, #{}}.
         {a, {b, <<\"x\">>, 7}, #{k => -5}}. {b, {b, 1, [c]}, x}.",
    ),
    (
        "arith",
        "{1, 10}. {1.5, 10}. {1, 1180591620717411303424}. {a, 1}. {1, a}.
         {-1180591620717411303424, 1}. {-7, 1.0e300}. {1, 1.0e308}. {-1, 1.0e308}.
         {100000000000000000000000000000000000000000, 1}.
         {-100000000000000000000000000000000000000000, 1}.
         {-100000000000000000000000000000000000000000, 100000000000000000000000000000000000000000}.
         {-100000000000000000000000000000000000000000, 1.0}. {1152921504606846975, 1}.
         {-1152921504606846976, 5}. {33, 0}. {34, 0}. {1, 2, 3}. {2, -1.0e308}. {2, -97.0}.
         {2, -94.0}. {2, -93.5}. {-5, -1180591620717411303424}. {1, -1180591620717411303424}.
         {1, 170141183460469231731687303715884105727}. {1, 1.7976931348623157e308}.
         {1, 340282366920938463463374607431768211455}. {-1152921504606846976, 2.5}.",
    ),
];

#[test]
fn native_filters_agree_with_the_interpreter_on_edge_cases() {
    let dir = workload_dir();
    for (name, text) in EDGE_CASES {
        let Ok(workload) = Workload::load(&dir, name) else {
            eprintln!("skipped {name}: no workload in {}", dir.display());
            continue;
        };
        let spec = CompiledSpec::compile(&workload.spec, workload.kind, &Config::default())
            .expect("the spec compiles");
        let mut heap = Heap::new();
        let inputs = matchspec::syntax::parse_terms_into(text, &mut heap).expect("inputs parse");
        compare(name, &spec, &heap, &inputs);
    }
}
