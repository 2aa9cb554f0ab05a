//! Every op the JIT lowers inline, on the values at the edges of its fast
//! paths, answers as the interpreter does (and as `run_each` does).

use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::Heap;
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};
use matchspec_jit::JitProgram;

/// Terms of every kind, and numbers at the small-integer boundaries.
const VALUES: &str = "0. 1. -1. 7. -7. 3. 1152921504606846975. -1152921504606846976. \
    1152921504606846976. -1152921504606846977. 36893488147419103232. 2.5. -0.0. 0.0. 1.0. \
    9007199254740992. 9007199254740993. -9007199254740993. 9007199254740992.0. 1.0e300. \
    -1.7976931348623157e308. 5.0e-324. -36893488147419103232. 9223372036854775807. \
    -9223372036854775808. 18446744073709551615. 18446744073709551616. -18446744073709551616. \
    85070591730234615865843651857942052864. -85070591730234615865843651857942052864. \
    170141183460469231731687303715884105727. -170141183460469231731687303715884105727. \
    170141183460469231731687303715884105728. 340282366920938463463374607431768211456. \
    a. true. false. []. [1]. [1|2]. {}. {a,b}. #{}. #{a => 1}. <<>>. <<1,2>>. <<1:3>>. \
    <0.80.0>. #Port<0.5>. #Ref<0.1.2.3>. \"ab\".";

/// Runs `spec` (a table spec over `{X, Y}`) on every pair of values, with
/// both engines, and compares.
#[track_caller]
fn check_pairs(spec: &str) {
    check_pairs_with(spec, "");
}

/// [`check_pairs`] with `extra` values too.
#[track_caller]
fn check_pairs_with(spec: &str, extra: &str) {
    let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default())
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let jit = JitProgram::compile(&compiled).expect("compiles to machine code");
    let mut heap = Heap::new();
    let mut values = matchspec::syntax::parse_terms_into(VALUES, &mut heap).expect("values parse");
    values.extend(matchspec::syntax::parse_terms_into(extra, &mut heap).expect("values parse"));
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
        let outcome = compiled.run(heap.view(input), &mut scratch, &mut host).expect("runs");
        interpreted.push(show(outcome));
    }
    let mut single = Vec::new();
    for &input in &inputs {
        let outcome = jit.run(heap.view(input), &mut scratch, &mut host).expect("runs");
        single.push(show(outcome));
    }
    let mut batch = Vec::new();
    jit.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, o| {
        batch.push(show(*o.expect("runs")));
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
fn sums_with_constants() {
    // One comparison for the overflow, with constants at the small range's
    // ends (the smallest one's word cannot be negated).
    for c in ["1", "-1", "100", "0", "1152921504606846975", "-1152921504606846976", "7"] {
        check_pairs(&format!(
            "[{{{{'$1','_'}},[],[{{{{{{'+','$1',{c}}},{{'+',{c},'$1'}},{{'-','$1',{c}}},{{'-',{c},'$1'}}}}}}]}}]"
        ));
        check_pairs(&format!(
            "[{{{{'$1','_'}},[{{'<',{{'+','$1',{c}}},{{'-','$1',{c}}}}}],[ok]}}]"
        ));
    }
}

#[test]
fn division_by_constants() {
    // A multiplication in the machine code, for divisors of magnitude 2 or
    // more; the others as by a register.
    let divisors =
        ["7", "-7", "2", "-2", "3", "10", "1", "-1", "0", "1000000007", "-1152921504606846976"];
    let quotients: Vec<String> =
        divisors.iter().map(|d| format!("{{'div','$1',{d}}},{{'rem','$1',{d}}}")).collect();
    check_pairs(&format!("[{{{{'$1','_'}},[],[{{{{{}}}}}]}}]", quotients.join(",")));
    check_pairs("[{{'$1','_'},[{'>',{'div','$1',3},{'rem','$1',-5}}],[ok]}]");
}

#[test]
fn arithmetic_on_results() {
    // Operands that are results: floats the code built in its heap slots,
    // bignums a helper built; compared, and used again.
    for op in ["'+'", "'-'", "'*'", "'/'"] {
        check_pairs(&format!(
            "[{{{{'$1','$2'}},[{{'<',{{{op},'$1','$2'}},{{'*','$2',2}}}}],[{{{op},{{{op},'$1','$2'}},'$1'}}]}}]"
        ));
        check_pairs(&format!(
            "[{{{{'$1','$2'}},[{{'==',{{{op},'$1',1.5}},{{'-','$2',0.5}}}}],[{{'>=',{{{op},'$2',3}},'$1'}}]}}]"
        ));
    }
    check_pairs(
        "[{{'$1','$2'},[],[{{{'*','$1',1.0e300},{'/','$2',3},{'-',{'*','$1','$1'},'$2'}}}]}]",
    );
}

#[test]
fn arithmetic_with_small_integers() {
    // A float or a bignum with a small integer: sign and magnitude, in
    // place; sums that cross the small range's ends, 2^64 and 2^127 (and
    // wrap around 2^128), products up to 2^128, zero.
    let extra = "170141183460469231731687303715884105726. -170141183460469231731687303715884105728. \
        340282366920938463463374607431768211455. -340282366920938463463374607431768211455. \
        1152921504606846977. -1152921504606846978. 18446744073709551617. -18446744073709551617. \
        2305843009213693952. -2305843009213693952. 1.7976931348623157e308.";
    for c in ["0", "1", "-1", "2", "-2", "3", "1152921504606846975", "-1152921504606846976"] {
        for op in ["'+'", "'-'", "'*'", "'/'"] {
            check_pairs_with(
                &format!("[{{{{'$1','_'}},[],[{{{{{{{op},'$1',{c}}},{{{op},{c},'$1'}}}}}}]}}]"),
                extra,
            );
        }
    }
    // And with a small integer that is not a constant, on results.
    check_pairs_with(
        "[{{'$1','$2'},[],[{{{'+',{'-','$1',1},'$2'},{'-',{'*','$1',1},'$2'},{'*',{'+','$1',0},'$2'}}}]}]",
        extra,
    );
}

#[test]
fn maps() {
    // Small maps and immediate keys are looked up without a frame; larger
    // maps, other keys and non-maps are the interpreter's.
    let maps = "#{a => 1, 1 => b, [] => c}. #{1.0 => f, {t} => u, 1 => i}. \
        #{k1 => 1, k2 => 2, k3 => 3, k4 => 4, k5 => 5, k6 => 6, k7 => 7, k8 => 8}. \
        #{k1 => 1, k2 => 2, k3 => 3, k4 => 4, k5 => 5, k6 => 6, k7 => 7, k8 => 8, k9 => 9}.";
    for spec in [
        "[{{'$1','$2'},[{is_map_key,'$1','$2'}],[{map_get,'$1','$2'}]},{'_',[],[no]}]",
        "[{{'$1','$2'},[],[{{{is_map_key,'$1','$2'},{map_get,'$1','$2'}}}]}]",
        "[{{'$1','$2'},[{'==',{map_get,'$1','$2'},1}],[one]}]",
        "[{{'$1',#{a => '$3'}},[],['$3']},{{'$1',#{k9 => '$3', 1.0 => '$4'}},[],[{{'$3','$4'}}]}]",
    ] {
        check_pairs_with(spec, maps);
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

#[test]
fn clauses_that_begin_alike() {
    // Pairs whose second element is a tuple, a list or a map of varied
    // shapes, so clauses fail at every step of their common beginnings.
    let shapes = "{b, 1, [c]}. {b, 2, [d, e]}. {b, 3, [c | f]}. {b, 4}. {x, 5, [c]}. \
        {b, 6, 7}. {b, {b, 8, [c]}, [c]}. [c, 1]. [d]. #{k => 1}. #{k => a, j => 2}. \
        {req, get, 1}. {req, put, 2}. {req, delete, 3}. {b, [c], [c]}.";
    for spec in [
        // The second clause repeats the first's tests, and the first
        // overwrites a register the common beginning wrote.
        "[{{a,{b,'$1',[c|'$2']}},[{is_list,'$2'}],['$2']},
          {{a,{b,'$1','$3'}},[{is_integer,'$1'}],[{{'$1','$3'}}]},
          {{'_',{b,'$1','$2'}},[],[{{'$2','$1'}}]}]",
        "[{{'$1',{b,'$2',[c|'$3']}},[],['$3']},
          {{'$1',{b,'$2',[d|'$3']}},[],[{{'$3','$2'}}]},
          {{'$1',{b,'$2','$3'}},[{is_atom,'$1'}],['$3']},
          {{'$1',{b,'$2','$3'}},[],['$1']}]",
        // Guards in the common beginning.
        "[{{'$1','$2'},[{'>','$1',5},{is_atom,'$2'}],[atom]},
          {{'$1','$2'},[{'>','$1',5},{is_tuple,'$2'}],[tuple]},
          {{'$1','$2'},[{'>','$1',5}],[big]},
          {{'$1','_'},[],[other]}]",
        // Lists and maps.
        "[{{'$1',[c|'$2']},[],['$2']},{{'$1',['$3'|'$2']},[],[{{'$3','$2'}}]},
          {{'$1',#{k => '$2'}},[{is_atom,'$2'}],['$2']},{{'$1',#{k => '$2'}},[],[{{'$2'}}]}]",
        // The clauses of `multi_clause`.
        "[{{'$1',{req,get,'$2'}},[{'<','$1',3}],[{{small_get,'$2'}}]},
          {{'$1',{req,get,'$2'}},[],[{{get,'$2'}}]},
          {{'$1',{req,put,'$2'}},[{'>','$1',1}],[{{put,'$2'}}]},
          {{'$1',{req,'$3','$2'}},[{'orelse',{'==','$3',head},{'==','$3',delete}}],['$3']},
          {{'_',{req,'_','_'}},[],[req]}]",
    ] {
        check_pairs_with(spec, shapes);
    }
    // Trace heads: argument lists.
    check_args(
        "[{['$1',a],[],[one]},{['$1',b],[],[two]},{['$1','$2'],[{is_integer,'$1'}],['$2']}]",
    );
}

/// Argument lists of every shape: short, long, improper, not lists.
fn argument_lists() -> String {
    let long = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    format!(
        "[]. [1]. [1,2]. [2,1]. [1,1]. [1,2,3]. [1|2]. [1,2|3]. [a|[]]. not_a_list. {{1,2}}. \
         \"ab\". [{}]. [{}]. [{}]. [{}]. [{}|x].",
        long(31),
        long(32),
        long(33),
        long(40),
        long(32)
    )
}

/// Runs the call-trace spec `spec` on every argument list, with both
/// engines, single and batch, and compares outcomes, flags and errors.
#[track_caller]
fn check_args(spec: &str) {
    let compiled = CompiledSpec::compile(spec, Kind::Call, &Config::default())
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let jit = JitProgram::compile(&compiled).expect("compiles to machine code");
    let mut heap = Heap::new();
    let inputs =
        matchspec::syntax::parse_terms_into(&argument_lists(), &mut heap).expect("inputs parse");
    let show = |o: Result<Outcome<'_>, matchspec::EvalError>| match o {
        Err(e) => format!("error: {e}"),
        Ok(Outcome::NoMatch) => "nomatch".to_owned(),
        Ok(Outcome::Match(m)) => format!("{} {:?}", m.result, m.flags),
    };
    let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
    let mut interpreted = Vec::new();
    for &input in &inputs {
        interpreted.push(show(compiled.run(heap.view(input), &mut scratch, &mut host)));
    }
    let mut single = Vec::new();
    for &input in &inputs {
        single.push(show(jit.run(heap.view(input), &mut scratch, &mut host)));
    }
    let mut batch = Vec::new();
    jit.run_each(Batch::new(&heap, &inputs), &mut scratch, &mut host, |_, o| {
        batch.push(show(o.copied().map_err(Clone::clone)));
    });
    assert_eq!(batch.len(), inputs.len(), "{spec}: batch outcomes");
    for (i, &input) in inputs.iter().enumerate() {
        let input = heap.view(input);
        assert_eq!(single[i], interpreted[i], "{spec} on {input}: single run");
        assert_eq!(batch[i], interpreted[i], "{spec} on {input}: batch run");
    }
}

#[test]
fn trace_heads() {
    let vars = |n: usize| (1..=n).map(|i| format!("'${i}'")).collect::<Vec<_>>().join(",");
    // Argument lists read in the machine code...
    check_args("[{['$1'],[],[{message,{{'$1'}}}]}]");
    check_args("[{['$1','$2'],[{'>','$2','$1'}],[{{'$2','$1'}}]},{['_'],[],[one]},{[],[],[none]}]");
    check_args("[{['$1','$1'],[],[same]},{['_','$2'],[],['$2']}]");
    check_args("[{['_',2],[],[two]},{'_',[],[{return_trace}]}]");
    check_args(&format!("[{{[{}],[],['$31']}}]", vars(31)));
    check_args(&format!("[{{[{}],[],[{{{{'$1','$32'}}}}]}}]", vars(32)));
    // ... and by Rust: the whole list, or more arguments than are walked inline.
    check_args("[{'$1',[],[{{'$1'}}]}]");
    check_args("[{['$1','_'],[],['$_']},{['$1'],[],[{{'$1'}}]}]");
    check_args(&format!("[{{[{}],[],['$33']}}]", vars(33)));
    check_args(&format!("[{{[{}],[],[{{{{'$1','$40'}}}}]}},{{['$1','_'],[],['$1']}}]", vars(40)));
}
