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
