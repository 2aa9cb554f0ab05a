//! msc's compile errors as Erlang terms: `[{error, Message, Where}]`.
//!
//! `Message` is the text `erlang:match_spec_test/3` gives (a string), and
//! `Where` is a map saying where the error is: `path`, the steps from the
//! spec to the offending part (`{element, I}` of a tuple or list, from 1;
//! `{tail, I}`, what follows the first I elements of a list; `{key, I}` and
//! `{value, I}` of a map's I-th key in key order), and, when the spec came
//! from text, `line` and `column`.

use msc::CompileError;
use msc::matchspec::syntax::{Location, Step};
use rustler::types::map::map_new;
use rustler::types::tuple::make_tuple;
use rustler::{Encoder, Env, Term};

use crate::atoms;

/// The error list for `error`.
pub fn errors_term<'a>(env: Env<'a>, error: &CompileError) -> Term<'a> {
    let items: Vec<Term<'a>> = match error {
        CompileError::Spec(errors) => errors
            .errors()
            .iter()
            .map(|e| {
                let message: Vec<u32> = e.message_bytes().iter().map(|&b| u32::from(b)).collect();
                let location = e.source().map(|s| s.location);
                item(env, &message, Some(e.path()), location)
            })
            .collect(),
        CompileError::Parse(e) => vec![item(env, &chars(&e.message()), None, Some(e.location()))],
        CompileError::Fun(e) => vec![item(env, &chars(&e.message()), None, e.location())],
    };
    items.encode(env)
}

fn chars(text: &str) -> Vec<u32> {
    text.chars().map(u32::from).collect()
}

/// `{error, Message, Where}`.
fn item<'a>(
    env: Env<'a>,
    message: &[u32],
    path: Option<&[Step]>,
    location: Option<Location>,
) -> Term<'a> {
    let mut place = map_new(env);
    let mut put = |k: Term<'a>, v: Term<'a>| {
        place = place.map_put(k, v).expect("a map takes a new key");
    };
    if let Some(steps) = path {
        put(atoms::path().encode(env), steps_term(env, steps));
    }
    if let Some(at) = location {
        put(atoms::line().encode(env), at.line.encode(env));
        put(atoms::column().encode(env), at.column.encode(env));
    }
    make_tuple(env, &[atoms::error().encode(env), message.encode(env), place])
}

fn steps_term<'a>(env: Env<'a>, steps: &[Step]) -> Term<'a> {
    let steps: Vec<Term<'a>> = steps
        .iter()
        .map(|step| {
            let (tag, i) = match *step {
                Step::Element(i) => (atoms::element(), i + 1),
                Step::Tail(i) => (atoms::tail(), i),
                Step::Key(i) => (atoms::key(), i + 1),
                Step::Value(i) => (atoms::value(), i + 1),
            };
            (tag, i).encode(env)
        })
        .collect();
    steps.encode(env)
}
