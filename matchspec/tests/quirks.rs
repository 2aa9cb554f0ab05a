//! ERTS quirks we copy by default, and what turning each off changes.

use matchspec::spec::Kind;
use matchspec::term::Term;
use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};

#[track_caller]
fn run(config: &Config, spec: &str, input: &str) -> String {
    let compiled = CompiledSpec::compile(spec, Kind::Table, config).expect("compiles");
    let input = Term::parse(input).expect("parses");
    match compiled.run(input.as_ref(), &mut Scratch::new(), &mut TestHost::default()).expect("runs")
    {
        Outcome::Match(m) => m.result.to_string(),
        Outcome::NoMatch => "nomatch".to_owned(),
    }
}

/// Q1: with a head variable of 25 or more, ERTS renames `'$N'` atoms
/// inside `{const, T}` too. Off, constants keep their atoms and everything
/// else (bindings, `'$$'` order, guards) stays as ERTS has it. The first
/// answer of each case is what OTP 27.3.4's `match_spec_test/3` gave.
#[test]
fn q1_renumbering_of_constants() {
    let erts = Config::default();
    let plain = Config::default().renumber_constants(false);
    let cases = [
        (
            "[{{'$30','$4'},[],[{const,['$30',{'$4'},#{'$31' => '$1'}]}]}]",
            "{a,b}",
            "['$2',{'$1'},#{'$3' => '$0'}]",
            "['$30',{'$4'},#{'$31' => '$1'}]",
        ),
        ("[{{'$30'},[{'=:=',{const,'$30'},'$30'}],[ok]}]", "{'$0'}", "ok", "nomatch"),
        ("[{{'$30'},[{'=:=',{const,'$30'},'$30'}],[ok]}]", "{'$30'}", "nomatch", "ok"),
        ("[{{'$30','$26'},[],['$$',{{'$30',{const,'$26'}}}]}]", "{x,y}", "{x,'$0'}", "{x,'$26'}"),
        // Below 25 nothing is renamed either way.
        ("[{{'$3'},[],[{const,'$3'}]}]", "{x}", "'$3'", "'$3'"),
        // Head atoms are always variables, also inside tuples that look like constants.
        ("[{{const,'$30'},[],['$30']}]", "{const,7}", "7", "7"),
    ];
    for (spec, input, with_q1, without) in cases {
        assert_eq!(run(&erts, spec, input), with_q1, "{spec} on {input}, as ERTS");
        assert_eq!(run(&plain, spec, input), without, "{spec} on {input}, without Q1");
    }
}
