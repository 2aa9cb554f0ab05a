//! Every op the JIT lowers inline, on the values at the edges of its fast
//! paths, answers as the interpreter does (and as `run_each` does).

use matchspec::spec::Kind;
use matchspec::term::Heap;
use matchspec::{CompiledSpec, Config, Outcome, Scratch, TestHost};
use matchspec_jit::JitProgram;

/// Terms of every kind, and numbers at the small-integer boundaries.
const VALUES: &str = "0. 1. -1. 7. -7. 3. 1152921504606846975. -1152921504606846976. \
    1152921504606846976. -1152921504606846977. 36893488147419103232. 2.5. -0.0. 0.0. 1.0. \
    a. true. false. []. [1]. [1|2]. {}. {a,b}. #{}. #{a => 1}. <<>>. <<1,2>>. <<1:3>>. \
    <0.80.0>. #Port<0.5>. #Ref<0.1.2.3>. \"ab\".";

/// Runs `spec` (a table spec over `{X, Y}`) on every pair of values, with
/// both engines, and compares.
#[track_caller]
fn check_pairs(spec: &str) {
    let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default())
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let jit = JitProgram::compile(&compiled).expect("compiles to machine code");
    let mut heap = Heap::new();
    let values = matchspec::syntax::parse_terms_into(VALUES, &mut heap).expect("values parse");
    let mut inputs = Vec::new();
    for &x in &values {
        for &y in &values {
            inputs.push(heap.tuple(&[x, y]));
        }
    }
    let show = |o: Outcome<'_>| match o {
        Outcome::NoMatch => "nomatch".to_owned(),
        Outcome::Match(m) => m.result.to_string(),
    };
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    let mut interpreted = Vec::new();
    for &input in &inputs {
        let outcome =
            compiled.run_with_host(heap.view(input), &mut scratch, &mut host).expect("runs");
        interpreted.push(show(outcome));
    }
    let mut single = Vec::new();
    for &input in &inputs {
        let outcome = jit.run(&compiled, heap.view(input), &mut scratch, &mut host).expect("runs");
        single.push(show(outcome));
    }
    let mut batch = Vec::new();
    jit.run_each(&compiled, &heap, &inputs, &mut scratch, &mut host, |_, o| {
        batch.push(show(o.expect("runs")));
    });
    for (i, &input) in inputs.iter().enumerate() {
        let input = heap.view(input);
        assert_eq!(single[i], interpreted[i], "{spec} on {input}: single run");
        assert_eq!(batch[i], interpreted[i], "{spec} on {input}: batch run");
    }
}

#[test]
fn arithmetic() {
    for op in ["'+'", "'-'", "'*'", "'/'", "'div'", "'rem'", "'band'", "'bor'", "'bxor'"] {
        // In a guard (failure fails the clause) and in a body ('EXIT').
        check_pairs(&format!("[{{{{'$1','$2'}},[{{'=/=',{{{op},'$1','$2'}},x}}],[ok]}}]"));
        check_pairs(&format!("[{{{{'$1','$2'}},[],[{{{op},'$1','$2'}}]}}]"));
    }
}

#[test]
fn comparisons() {
    for op in ["'<'", "'=<'", "'>'", "'>='", "'=='", "'/='", "'=:='", "'=/='"] {
        check_pairs(&format!("[{{{{'$1','$2'}},[{{{op},'$1','$2'}}],[true]}}]"));
    }
    // Repeated variables in heads: exact equality.
    check_pairs("[{{'$1','$1'},[],[same]},{'_',[],[different]}]");
}

#[test]
fn type_tests() {
    for test in [
        "is_atom",
        "is_float",
        "is_integer",
        "is_list",
        "is_number",
        "is_pid",
        "is_port",
        "is_reference",
        "is_tuple",
        "is_map",
        "is_binary",
        "is_bitstring",
        "is_boolean",
        "is_function",
    ] {
        check_pairs(&format!("[{{{{'$1','_'}},[{{{test},'$1'}}],[yes]}},{{'_',[],[no]}}]"));
        check_pairs(&format!(
            "[{{{{'$1','_'}},[{{'not',{{{test},'$1'}}}}],[yes]}},{{'_',[],[no]}}]"
        ));
    }
}

#[test]
fn logic_and_building() {
    check_pairs("[{{'$1','$2'},[{'and','$1','$2'}],[both]},{'_',[],[no]}]");
    check_pairs("[{{'$1','$2'},[],[{'or','$1','$2'}]}]");
    check_pairs("[{{'$1','$2'},[{'andalso','$1','$2'}],[both]},{'_',[],[no]}]");
    check_pairs("[{{'$1','$2'},[],[{{'$2','$1',['$1','$2'|'$2'],'$_'}}]}]");
    check_pairs("[{{'$1','$2'},[],[[{{'$1'}},{{'$2'}}]]}]");
    check_pairs(
        "[{{'$1',{'$2','$3'}},[],[{{'$3','$2'}}]},{{'$1',['$2'|'$3']},[],[{{'$1','$3'}}]}]",
    );
}
