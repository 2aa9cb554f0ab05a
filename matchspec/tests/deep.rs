//! Terms nested a million levels deep build, compare, hash, print, parse,
//! copy and drop without overflowing the stack.

use std::hash::{BuildHasher, RandomState};

use matchspec::syntax::parse_term;
use matchspec::term::{Heap, Term, Word};

const DEPTH: usize = 1_000_000;

fn deep_list(heap: &mut Heap, leaf: i64) -> Word {
    let mut t = heap.int(leaf);
    for _ in 0..DEPTH {
        t = heap.list(&[t]);
    }
    t
}

fn deep_tuple(heap: &mut Heap, leaf: i64) -> Word {
    let mut t = heap.int(leaf);
    for _ in 0..DEPTH {
        t = heap.tuple(&[Word::NIL, t]);
    }
    t
}

#[track_caller]
fn check_deep(build: fn(&mut Heap, i64) -> Word, open: &str, close: &str) {
    let mut heap = Heap::new();
    let a = build(&mut heap, 1);
    let b = build(&mut heap, 1);
    let c = build(&mut heap, 2);
    let (a, b, c) = (heap.view(a), heap.view(b), heap.view(c));

    assert!(a == b && a != c && a < c);
    assert!(a.cmp_term(&c).is_lt());
    let hasher = RandomState::new();
    assert_eq!(hasher.hash_one(a), hasher.hash_one(b));

    let text = a.to_string();
    assert!(text.starts_with(&open.repeat(3)) && text.ends_with(&close.repeat(3)));
    let parsed = parse_term(&text).expect("deep term parses");
    assert!(parsed.as_ref() == a);

    let owned: Term = a.to_owned();
    assert!(owned.as_ref() == a);
    drop(owned);
    drop(parsed);
}

#[test]
fn a_million_nested_lists() {
    check_deep(deep_list, "[", "]");
}

#[test]
fn a_million_nested_tuples() {
    check_deep(deep_tuple, "{[],", "}");
}

/// Specs run on million-deep inputs: heads bind and test them, guards
/// compare them, bodies build around them, results print and compare.
mod evaluation {
    use matchspec::conformance::match_spec_test;
    use matchspec::spec::Kind;
    use matchspec::term::{Heap, Term, Word};
    use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost};

    use super::{DEPTH, deep_list, deep_tuple};

    fn compile(spec: &str, kind: Kind) -> CompiledSpec {
        CompiledSpec::compile(spec, kind, &Config::default()).expect("spec compiles")
    }

    /// The result of `spec` on `input`, owned, or `None` for no match.
    fn run(spec: &CompiledSpec, heap: &Heap, input: Word) -> Option<Term> {
        let mut scratch = Scratch::new();
        match spec.run(heap.view(input), &mut scratch, &mut TestHost::default()).expect("runs") {
            Outcome::Match(m) => Some(m.result.to_owned()),
            Outcome::NoMatch => None,
        }
    }

    #[test]
    fn heads_bind_and_guards_compare_deep_terms() {
        let mut heap = Heap::new();
        let (a, b, c) = (deep_list(&mut heap, 1), deep_list(&mut heap, 1), deep_list(&mut heap, 2));
        let same = heap.tuple(&[a, b]);
        let different = heap.tuple(&[a, c]);

        let spec = compile("[{{'$1','$1'},[],['$_']}]", Kind::Table);
        let whole = run(&spec, &heap, same).expect("equal deep terms unify");
        assert!(whole.as_ref() == heap.view(same));
        assert!(run(&spec, &heap, different).is_none());

        let spec =
            compile("[{{'$1','$2'},[{'<','$1','$2'},{'=/=','$1','$2'}],[{{'$2'}}]}]", Kind::Table);
        let built = run(&spec, &heap, different).expect("1 < 2 at the bottom");
        assert!(built.as_ref().as_tuple().and_then(|t| t.get(0)) == Some(heap.view(c)));
        assert!(run(&spec, &heap, same).is_none());
    }

    #[test]
    fn heads_look_into_deep_terms() {
        let mut heap = Heap::new();
        let list = deep_list(&mut heap, 7);
        let input = heap.tuple(&[list]);
        let spec = compile("[{{[[['$1']]]},[{is_list,'$1'}],['$1']}]", Kind::Table);
        let inner = run(&spec, &heap, input).expect("matches three levels down");
        // Three of the million levels were matched away.
        assert_eq!(
            inner.to_string(),
            format!("{}7{}", "[".repeat(DEPTH - 3), "]".repeat(DEPTH - 3))
        );
    }

    #[test]
    fn bodies_build_maps_and_lists_around_deep_terms() {
        let mut heap = Heap::new();
        let tuple = deep_tuple(&mut heap, 3);
        let input = heap.tuple(&[tuple]);
        let spec = compile("[{{'$1'},[],[#{'$1' => ['$1','$_']}]}]", Kind::Table);
        let map = run(&spec, &heap, input).expect("matches");
        let text = map.to_string();
        assert!(text.starts_with("#{{[],{[],{[],"), "{}", &text[..40]);
        let reparsed = Term::parse(&text).expect("prints as valid text");
        assert!(reparsed == map);
    }

    #[test]
    fn trace_messages_carry_deep_arguments() {
        let mut heap = Heap::new();
        let arg = deep_list(&mut heap, 5);
        let args = heap.list(&[arg, Word::NIL]);
        let spec = heap_spec(&mut heap);
        let answer = match_spec_test(heap.view(args), heap.view(spec), Kind::Call);
        let text = answer.to_string();
        let deep = format!("{}5{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
        assert_eq!(text, format!("{{ok,{{{deep}}},[],[]}}"));
    }

    fn heap_spec(heap: &mut Heap) -> Word {
        let text = "[{['$1','_'],[{is_list,'$1'}],[{message,{{'$1'}}}]}]";
        matchspec::syntax::parse_terms_into(&format!("{text}."), heap).expect("parses")[0]
    }
}
