//! Generators and oracles for the fuzz targets in `fuzz_targets/`.
//!
//! Each target is one line that hands its input to the function of the same
//! name here. Every function takes the raw fuzz input, panics if the
//! property it checks does not hold, and returns whether the input was worth
//! keeping (`false` for inputs it rejects as too large or malformed for the
//! target, which the targets turn into `Corpus::Reject`).
//!
//! `matchspec/tests/regression.rs` includes this file as a module and
//! replays the saved crash inputs through these same functions, so a
//! regression test checks exactly what the target checked.

use arbitrary::{Arbitrary, Result, Unstructured};
use matchspec::bif::TABLE;
use matchspec::etf;
use matchspec::spec::Kind;
use matchspec::syntax::{ParseError, TermStream, parse_term, parse_term_with_spans, parse_terms};
use matchspec::term::{ArbitraryFlavor, Atom, Term};
use matchspec::{CompiledSpec, Config, Scratch};

/// Largest input any target reads; longer ones are rejected.
pub const MAX_INPUT: usize = 4096;

/// Arbitrary text (lossy UTF-8) never makes the parser panic, every error
/// renders, and every term it parses prints as text that parses back to it.
pub fn parse_text(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    match parse_terms(text) {
        Ok(terms) => terms.iter().for_each(reparse),
        Err(err) => render(&err),
    }
    for result in TermStream::new(text) {
        match result {
            Ok((term, span)) => {
                let range = span.range();
                assert!(range.start <= range.end && range.end <= text.len(), "bad span {span:?}");
                reparse(&term);
            }
            Err(err) => render(&err),
        }
    }
    match parse_term_with_spans(text) {
        Ok((term, _)) => reparse(&term),
        Err(err) => render(&err),
    }
    true
}

/// An arbitrary term prints as text that parses back to an exactly equal
/// term, which prints the same.
pub fn text_roundtrip(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let Ok(term) = Term::arbitrary_take_rest(Unstructured::new(data)) else {
        return false;
    };
    reparse(&term);
    true
}

/// An arbitrary term of the ETF flavor encodes (all three ways) to bytes
/// that decode to an exactly equal term and encode again to the same bytes.
/// Any term of the text flavor that encodes at all decodes, and what it
/// decodes to is stable from then on.
pub fn etf_roundtrip(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let mut u = Unstructured::new(data);
    let Ok(etf_flavor) = u.arbitrary::<bool>() else {
        return false;
    };
    let flavor = if etf_flavor { ArbitraryFlavor::Etf } else { ArbitraryFlavor::Text };
    let Ok(term) = Term::arbitrary_flavored(&mut u, flavor) else {
        return false;
    };
    let bytes = match etf::encode(term.as_ref()) {
        Ok(bytes) => bytes,
        Err(err) if !etf_flavor => {
            let _ = err.to_string();
            return true;
        }
        Err(err) => panic!("encode failed: {err}\nterm: {term}"),
    };
    let back = etf::decode(&bytes)
        .unwrap_or_else(|err| panic!("decode of encode failed: {err}\nterm: {term}"));
    if etf_flavor {
        assert_eq!(back, term, "decode(encode(t)) != t");
        assert_eq!(encode(&back), bytes, "encode(decode(encode(t))) != encode(t) for {term}");
        let sorted = etf::encode_deterministic(term.as_ref()).expect("encode_deterministic");
        assert_eq!(decode(&sorted), term, "decode(encode_deterministic(t)) != t");
        let level = u.int_in_range(0..=9).unwrap_or(6);
        let packed = etf::encode_compressed(term.as_ref(), level).expect("encode_compressed");
        assert_eq!(decode(&packed), term, "decode(encode_compressed(t)) != t");
    } else {
        stable(&back);
    }
    true
}

/// Arbitrary bytes never make the decoder panic; a term they decode to
/// encodes, and is stable under decoding and encoding from then on.
pub fn etf_decode(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let mut heap = matchspec::term::Heap::new();
    if let Ok((word, used)) = etf::decode_prefix(data, &mut heap) {
        assert!(used <= data.len(), "decode_prefix used {used} of {} bytes", data.len());
        let prefix = etf::decode(&data[..used]).expect("decode of what decode_prefix read");
        assert_eq!(prefix.as_ref(), heap.view(word), "decode_prefix and decode disagree");
    }
    match etf::decode(data) {
        Ok(term) => {
            stable(&term);
            true
        }
        Err(err) => {
            let _ = err.to_string();
            data.first() == Some(&etf::VERSION)
        }
    }
}

/// Specs written as arbitrary text, as arbitrary terms and as generated
/// spec-shaped terms compile or fail with an error that renders, for every
/// kind; a spec that compiles runs on arbitrary inputs without panicking.
pub fn compile(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    compile_case(&mut Unstructured::new(data)).is_ok()
}

fn compile_case(u: &mut Unstructured<'_>) -> Result<()> {
    let kind = *u.choose(&[Kind::Table, Kind::Call, Kind::Send, Kind::Receive])?;
    let config = Config::default().fake_destructive(u.arbitrary()?);
    let spec = match u.choose_index(4)? {
        0 => {
            let n = u.arbitrary_len::<u8>()?;
            let text = String::from_utf8_lossy(u.bytes(n)?).into_owned();
            CompiledSpec::compile(&text, kind, &config).map_err(|e| e.to_string())
        }
        1 => {
            let spec = Term::arbitrary(u)?;
            CompiledSpec::from_term(spec.as_ref(), kind, &config).map_err(|e| e.to_string())
        }
        _ => {
            let spec = SpecGen { u, kind, vars: 0 }.spec()?;
            CompiledSpec::from_term(spec.as_ref(), kind, &config).map_err(|e| e.to_string())
        }
    };
    let Ok(spec) = spec else {
        return Ok(());
    };
    let _ = spec.program().to_string();
    let mut scratch = Scratch::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let input = match kind {
            Kind::Table => Term::arbitrary(u)?,
            _ => {
                let n = u.int_in_range(0..=4)?;
                Term::list((0..n).map(|_| Term::arbitrary(u)).collect::<Result<Vec<_>>>()?)
            }
        };
        if let Ok(outcome) = spec.run(input.as_ref(), &mut scratch)
            && let Some(result) = outcome.result()
        {
            let _ = result.to_string();
        }
    }
    Ok(())
}

/// Panics unless `term` prints as text that parses back to it exactly and
/// prints the same again. Local funs have no text form and are skipped.
fn reparse(term: &Term) {
    let text = term.to_string();
    if text.contains("#Fun<") {
        return;
    }
    let back = parse_term(&text).unwrap_or_else(|err| panic!("reparse failed:\n{err}"));
    assert_eq!(&back, term, "parse(print(t)) != t for {text}");
    assert_eq!(back.to_string(), text, "print(parse(print(t))) != print(t)");
}

/// Panics unless `term` encodes to bytes that decode to it and encode to the
/// same bytes again; also checks its text form as [`reparse`] does.
fn stable(term: &Term) {
    let bytes = encode(term);
    assert_eq!(&decode(&bytes), term, "decode(encode(t)) != t for {term}");
    assert_eq!(encode(&decode(&bytes)), bytes, "encode is not stable for {term}");
    reparse(term);
}

#[track_caller]
fn encode(term: &Term) -> Vec<u8> {
    etf::encode(term.as_ref()).unwrap_or_else(|err| panic!("encode failed: {err}\nterm: {term}"))
}

#[track_caller]
fn decode(bytes: &[u8]) -> Term {
    etf::decode(bytes).unwrap_or_else(|err| panic!("decode failed: {err}\nbytes: {bytes:?}"))
}

fn render(err: &ParseError) {
    let _ = err.to_string();
    let _ = format!("{err:?}");
}

/// Makes spec-shaped terms, `[{Head, Guards, Body}, ...]`, that get past the
/// checker often enough to exercise the compiler and the interpreter.
struct SpecGen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    kind: Kind,
    /// Expressions and patterns made so far (the size budget).
    vars: usize,
}

/// Special forms and actions, with their arities.
const FORMS: &[(&str, usize)] = &[
    ("andalso", 2),
    ("orelse", 2),
    ("and", 2),
    ("or", 2),
    ("andthen", 2),
    ("self", 0),
    ("message", 1),
    ("display", 1),
    ("return_trace", 0),
    ("exception_trace", 0),
    ("is_seq_trace", 0),
    ("set_seq_token", 2),
    ("get_seq_token", 0),
    ("process_dump", 0),
    ("enable_trace", 1),
    ("enable_trace", 2),
    ("disable_trace", 1),
    ("disable_trace", 2),
    ("trace", 2),
    ("trace", 3),
    ("caller", 0),
    ("caller_line", 0),
    ("current_stacktrace", 0),
    ("current_stacktrace", 1),
    ("silent", 1),
    ("const", 1),
];

/// Atoms that specs use as arguments of actions and as literals.
const WORDS: &[&str] = &[
    "true",
    "false",
    "ok",
    "a",
    "label",
    "serial",
    "send",
    "call",
    "receive",
    "all",
    "procs",
    "return_to",
    "silent",
    "timestamp",
    "arity",
    "_",
    "$_",
    "$$",
    "$0",
    "$1",
    "$2",
];

impl SpecGen<'_, '_> {
    const BUDGET: usize = 120;
    const DEPTH: usize = 12;

    fn spec(&mut self) -> Result<Term> {
        let n = self.u.int_in_range(1..=3)?;
        let clauses = (0..n).map(|_| self.clause()).collect::<Result<Vec<_>>>()?;
        Ok(Term::list(clauses))
    }

    fn clause(&mut self) -> Result<Term> {
        let head = match self.kind {
            Kind::Table => self.pattern(0)?,
            _ if self.u.ratio(1u8, 8u8)? => self.pattern(Self::DEPTH)?,
            _ => {
                let n = self.u.int_in_range(0..=3)?;
                Term::list((0..n).map(|_| self.pattern(1)).collect::<Result<Vec<_>>>()?)
            }
        };
        let guards = self.exprs(0..=2)?;
        let body = self.exprs(0..=3)?;
        Ok(Term::tuple([head, guards, body]))
    }

    fn exprs(&mut self, range: std::ops::RangeInclusive<usize>) -> Result<Term> {
        let n = self.u.int_in_range(range)?;
        Ok(Term::list((0..n).map(|_| self.expr(0)).collect::<Result<Vec<_>>>()?))
    }

    /// A match variable `'$N'`, or a name that only looks like one. The
    /// names come from a fixed set: atoms are never freed, and arbitrary
    /// numbers would grow the atom table for as long as the fuzzer runs.
    fn var(&mut self) -> Result<Term> {
        const ODD: &[&str] = &[
            "$9",
            "$10",
            "$100",
            "$65535",
            "$99999999",
            "$100000000",
            "$100000001",
            "$4294967295",
            "$4294967296",
            "$01",
            "$-1",
            "$1a",
            "$",
            "$ 1",
            "$\u{661}",
        ];
        if self.u.ratio(1u8, 8u8)? {
            return Ok(atom(self.u.choose(ODD)?));
        }
        let n = self.u.int_in_range(0..=4)?;
        Ok(atom(&format!("${n}")))
    }

    fn word(&mut self) -> Result<Term> {
        Ok(atom(self.u.choose(WORDS)?))
    }

    fn pattern(&mut self, depth: usize) -> Result<Term> {
        self.vars += 1;
        let leaf = depth >= Self::DEPTH || self.vars >= Self::BUDGET;
        match self.u.choose_index(if leaf { 4 } else { 8 })? {
            0 => Ok(atom("_")),
            1 => self.var(),
            2 => self.word(),
            3 => Term::arbitrary(self.u),
            4 | 5 => {
                let n = self.u.int_in_range(0..=4)?;
                let elements =
                    (0..n).map(|_| self.pattern(depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(Term::tuple(elements))
            }
            6 => {
                let n = self.u.int_in_range(0..=3)?;
                let elements =
                    (0..n).map(|_| self.pattern(depth + 1)).collect::<Result<Vec<_>>>()?;
                if self.u.arbitrary()? {
                    Ok(Term::list(elements))
                } else {
                    let tail = self.pattern(depth + 1)?;
                    let mut heap = matchspec::term::Heap::new();
                    let words: Vec<_> = elements.iter().map(|e| e.copy_to(&mut heap)).collect();
                    let tail = tail.copy_to(&mut heap);
                    let root = heap.list_with_tail(&words, tail);
                    Ok(Term::from_parts(heap, root))
                }
            }
            _ => {
                let n = self.u.int_in_range(0..=3)?;
                let pairs = (0..n)
                    .map(|_| Ok((self.word()?, self.pattern(depth + 1)?)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Term::map(pairs))
            }
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Term> {
        self.vars += 1;
        let leaf = depth >= Self::DEPTH || self.vars >= Self::BUDGET;
        match self.u.choose_index(if leaf { 4 } else { 10 })? {
            0 => self.var(),
            1 => self.word(),
            2 => Ok(Term::from(self.u.int_in_range(-3i64..=300)?)),
            3 => Term::arbitrary(self.u),
            4 | 5 => {
                let entry = self.u.choose(TABLE)?;
                self.call(entry.name, usize::from(entry.arity), depth)
            }
            6 => {
                let &(name, arity) = self.u.choose(FORMS)?;
                self.call(name, arity, depth)
            }
            7 => {
                // Tuple construction, `{{E, ...}}`.
                let n = self.u.int_in_range(0..=3)?;
                let elements = (0..n).map(|_| self.expr(depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(Term::tuple([Term::tuple(elements)]))
            }
            8 => {
                let n = self.u.int_in_range(0..=3)?;
                let elements = (0..n).map(|_| self.expr(depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(Term::list(elements))
            }
            _ => {
                let n = self.u.int_in_range(0..=2)?;
                let pairs = (0..n)
                    .map(|_| Ok((self.expr(depth + 1)?, self.expr(depth + 1)?)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Term::map(pairs))
            }
        }
    }

    /// `{Name, Arg, ...}` with `arity` arguments, give or take one now and then.
    fn call(&mut self, name: &str, arity: usize, depth: usize) -> Result<Term> {
        let arity = match self.u.choose_index(16)? {
            0 => arity + 1,
            1 => arity.saturating_sub(1),
            _ => arity,
        };
        let mut elements = vec![atom(name)];
        for _ in 0..arity {
            elements.push(self.expr(depth + 1)?);
        }
        Ok(Term::tuple(elements))
    }
}

/// The atom `name`, or `ok` if the atom table is full.
fn atom(name: &str) -> Term {
    Term::atom(Atom::try_new(name).unwrap_or(Atom::OK))
}
