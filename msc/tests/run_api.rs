//! The facade's run API: every engine, one input or a batch, gives the
//! same outcomes; `auto` compiles once the spec has run often enough.

use msc::{AUTO_THRESHOLD, Batch, Config, Engine, Heap, Kind, Run, Scratch, Spec, TestHost};

const SPEC: &str = "[{{'$1', '$2'}, [{'>', '$2', 10}], [{{'$1', {'+', '$2', 1}}}]}, \
                    {{'$1', '_'}, [{is_atom, '$1'}], [false]}]";
const ROWS: &str = "{a, 11}. {b, 3}. {7, 0}. {c, 100}. nope. {d, 1.5e3}.";

/// Each input's outcome, as text (`-` for no match), by run and by batch.
fn outcomes(spec: &Spec) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut heap = Heap::new();
    let rows = msc::parse_terms_into(ROWS, &mut heap).expect("rows parse");
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    let show = |outcome: Result<&msc::Outcome<'_>, &msc::EvalError>| match outcome {
        Ok(outcome) => outcome.result().map_or("-".to_string(), |r| r.to_string()),
        Err(err) => format!("error: {err}"),
    };
    let single = rows
        .iter()
        .map(|&row| show(spec.run(heap.view(row), &mut scratch, &mut host).as_ref()))
        .collect();
    let mut each = Vec::new();
    spec.run_each(Batch::new(&heap, &rows), &mut scratch, &mut host, |i, outcome| {
        assert_eq!(i, each.len(), "run_each hands over every input in order");
        each.push(show(outcome));
    });
    let mut matching = Vec::new();
    spec.run_matching(Batch::new(&heap, &rows), &mut scratch, &mut host, |i, outcome| {
        matching.push(format!("{i}:{}", show(outcome)));
    });
    (single, each, matching)
}

#[test]
fn every_engine_gives_the_same_outcomes() {
    let expected = (
        ["{a,12}", "false", "-", "{c,101}", "-", "{d,1501.0}"].map(String::from).to_vec(),
        ["{a,12}", "false", "-", "{c,101}", "-", "{d,1501.0}"].map(String::from).to_vec(),
        ["0:{a,12}", "1:false", "3:{c,101}", "5:{d,1501.0}"].map(String::from).to_vec(),
    );
    for engine in Engine::ALL {
        let spec = Spec::builder().engine(engine).build(SPEC, Kind::Table).expect("compiles");
        assert_eq!(spec.engine(), engine);
        assert_eq!(spec.is_compiled(), engine == Engine::Jit, "{engine}");
        assert!(spec.jit_error().is_none());
        assert_eq!(outcomes(&spec), expected, "{engine}");
    }
}

#[test]
fn auto_compiles_once_the_spec_is_hot() {
    let spec = Spec::compile(SPEC, Kind::Table).expect("compiles");
    assert_eq!(spec.engine(), Engine::Auto, "the builder's default");
    let mut heap = Heap::new();
    let rows = msc::parse_terms_into("{a, 11}.", &mut heap).expect("rows parse");
    let inputs = vec![rows[0]; (AUTO_THRESHOLD - 1) as usize];
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    let mut matched = 0;
    spec.run_matching(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, _| matched += 1);
    assert_eq!(matched, inputs.len());
    assert!(!spec.is_compiled(), "one run short of the threshold");
    let outcome = spec.run(heap.view(rows[0]), &mut scratch, &mut host).expect("runs");
    assert_eq!(outcome.result().map(|r| r.to_string()).as_deref(), Some("{a,12}"));
    assert!(spec.is_compiled(), "the run at the threshold compiles");
}

#[test]
fn the_builder_passes_its_config_on() {
    let text = "[{{'$30'}, [], [{const, '$30'}]}]";
    let mut heap = Heap::new();
    let rows = msc::parse_terms_into("{1}.", &mut heap).expect("rows parse");
    for (renumber, expected) in [(true, "'$0'"), (false, "'$30'")] {
        let config = Config::default().renumber_constants(renumber);
        let spec = Spec::builder().config(config).build(text, Kind::Table).expect("compiles");
        let mut scratch = Scratch::new();
        let outcome = spec.run(heap.view(rows[0]), &mut scratch, &mut TestHost::default()).unwrap();
        assert_eq!(outcome.result().unwrap().to_string(), expected);
    }
}

#[test]
fn engines_have_names() {
    for engine in Engine::ALL {
        assert_eq!(engine.name().parse::<Engine>(), Ok(engine));
    }
    let err = "cranelift".parse::<Engine>().unwrap_err();
    assert_eq!(err.to_string(), "unknown engine `cranelift` (expected interp, jit or auto)");
}

#[test]
fn errors_name_the_place() {
    let err = Spec::compile("[{'$1', [{'>', '$2', 0}], ['$1']}]", Kind::Table).unwrap_err();
    assert!(err.to_string().contains("Variable $2 is unbound."), "{err}");
}
