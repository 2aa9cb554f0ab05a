//! Generators and oracles of the fuzz targets over `matchspec` alone
//! (`parse_text`, `text_roundtrip`, `etf_roundtrip`, `etf_decode`,
//! `compile`, `fun2ms`) and the generator of the `differential` target's cases.
//!
//! Each target is one line that hands its input to the function of the same
//! name here. Every function takes the raw fuzz input, panics if the
//! property it checks does not hold, and returns whether the input was worth
//! keeping (`false` for inputs it rejects as too large or malformed for the
//! target, which the targets turn into `Corpus::Reject`).
//!
//! `tests/regression/matchspec.rs` replays the saved crash inputs through
//! these same functions, so a regression test checks exactly what the
//! target checked.

use arbitrary::{Arbitrary, Result, Unstructured};
use matchspec::bif::{Entry, TABLE};
use matchspec::etf;
use matchspec::spec::Kind;
use matchspec::syntax::{ParseError, TermStream, parse_term, parse_term_with_spans, parse_terms};
use matchspec::term::{ArbitraryFlavor, Atom, Heap, Kind as TermKind, Term, TermRef, Word};
use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost};

/// The guard functions every release has, in table order. The saved
/// inputs choose a function by its index here, so the list must not grow
/// when a release adds one (or when the default release changes); those
/// are covered by the corpora of their release.
fn functions() -> &'static [Entry] {
    static FUNCTIONS: std::sync::OnceLock<Vec<Entry>> = std::sync::OnceLock::new();
    FUNCTIONS.get_or_init(|| TABLE.iter().filter(|e| e.added.is_none()).copied().collect())
}

/// Largest input any target reads; longer ones are rejected.
pub const MAX_INPUT: usize = 4096;

/// Arbitrary text (lossy UTF-8) never makes the parser panic, every error
/// renders, and every term it parses prints as text that parses back to it.
/// An input that starts with a NUL byte is not text but the choices of
/// [`limits::terms_text`]: terms with names, numbers and nesting at the
/// limits.
pub fn parse_text(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    let text = match text_or_limits(data, crate::limits::terms_text) {
        Some(text) => text,
        None => return false,
    };
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
    streams_as_whole(text);
    true
}

/// `text` read a term at a time as it arrives (`next_term_into` and `TermCursor`, with its
/// fast path for plain terms), in pieces of a few sizes, gives the terms
/// `parse_terms_into` gives, or the same first error at the same place.
fn streams_as_whole(text: &str) {
    use matchspec::syntax::{NextTerm, TermCursor, TermScratch, next_term_into, parse_terms_into};
    let mut heap = Heap::new();
    let whole = parse_terms_into(text, &mut heap)
        .map(|roots| roots.iter().map(|&r| heap.view(r).to_owned()).collect::<Vec<_>>())
        .map_err(|err| (err.location(), err.message()));
    // Pieces of 1 and 7 bytes, the second through the cursor readers use,
    // and the whole. Each piece re-reads the term so far, so pieces cost
    // the square of a term's length: a text of a few kilobytes goes in
    // pieces of 7 and 61 bytes (1-byte pieces made a 4 KiB list take
    // seconds), a long one (what `limits` makes of a few bytes) in a few
    // large ones.
    let small = match text.len() {
        0..=1024 => [1, 7],
        1025..=MAX_INPUT => [7, 61],
        _ => [text.len() / 5 + 1, text.len() / 3 + 1],
    };
    for (pass, step) in [small[0], small[1], text.len().max(1)].into_iter().enumerate() {
        let (mut heap, mut scratch, mut cursor) =
            (Heap::new(), TermScratch::default(), TermCursor::default());
        let (mut from, mut have, mut terms) = (0, 0, Vec::new());
        let streamed = loop {
            let complete = have >= text.len();
            let next = if pass == 1 {
                cursor.next(&text[..have], from, complete, &mut heap, &mut scratch)
            } else {
                next_term_into(&text[..have], from, complete, &mut heap, &mut scratch)
            };
            match next {
                NextTerm::Term { root, end } => {
                    terms.push(heap.view(root).to_owned());
                    from = end;
                }
                NextTerm::Error { error, .. } => break Err((error.location(), error.message())),
                NextTerm::More => {
                    assert!(!complete, "More at the end of {text:?}");
                    have = (have + step).min(text.len());
                    while !text.is_char_boundary(have) {
                        have += 1;
                    }
                }
                NextTerm::Done => break Ok(terms),
            }
        };
        assert!(streamed == whole, "{text:?} in pieces of {step}: {streamed:?}, whole: {whole:?}");
    }
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
    let mut heap = Heap::new();
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
            let spec = SpecGen::new(u, kind, false).spec()?;
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
        if let Ok(outcome) = spec.run(input.as_ref(), &mut scratch, &mut TestHost::default())
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

/// Arbitrary text read as a fun never makes `fun2ms` panic, in either
/// dialect; every error renders; and every valid spec it makes has a fun
/// that translates back to it (`spec_to_fun`, checked again here).
///
/// An input that starts with a NUL byte is not text but the choices of
/// [`limits::fun_text`]: a fun with names, numbers and nesting at the
/// limits.
pub fn fun2ms(data: &[u8]) -> bool {
    use matchspec::fun2ms::{Dialect, fun2ms, spec_to_fun};
    if data.len() > MAX_INPUT {
        return false;
    }
    let Some(text) = text_or_limits(data, crate::limits::fun_text) else { return false };
    for dialect in [Dialect::Table, Dialect::Trace] {
        let kind = if dialect == Dialect::Table { Kind::Table } else { Kind::Call };
        match fun2ms(&text, dialect, &[]) {
            // An invalid spec may have no fun (`#{k := A, k := B}` leaves
            // `'$1'` out of the head and in the guard).
            Ok(spec)
                if CompiledSpec::from_term(spec.as_ref(), kind, &Config::default()).is_err() => {}
            Ok(spec) => {
                let fun = spec_to_fun(spec.as_ref(), dialect)
                    .unwrap_or_else(|no| panic!("{text:?} gives {spec}, and then {no}"));
                let named: Vec<(&str, Term)> =
                    fun.bindings.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
                let back = fun2ms(&fun.text, dialect, &named)
                    .unwrap_or_else(|e| panic!("{spec} -> {} fails: {e}", fun.text));
                assert!(back.as_ref().eq_exact(&spec.as_ref()), "{spec} -> {} -> {back}", fun.text);
            }
            Err(err) => {
                let _ = err.to_string();
                let _ = err.message();
            }
        }
    }
    true
}

/// The text an input stands for: itself (lossy UTF-8), or, after a NUL
/// byte, what `build` makes of the rest (`None` if it cannot).
fn text_or_limits(
    data: &[u8],
    build: fn(&mut Unstructured<'_>) -> Result<String>,
) -> Option<std::borrow::Cow<'_, str>> {
    match data.split_first() {
        Some((0, choices)) => build(&mut Unstructured::new(choices)).ok().map(Into::into),
        _ => Some(String::from_utf8_lossy(data)),
    }
}

fn render(err: &ParseError) {
    let _ = err.to_string();
    let _ = format!("{err:?}");
}

// ---- Specs ------------------------------------------------------------------------------

/// Makes spec-shaped terms, `[{Head, Guards, Body}, ...]`.
///
/// Unbiased, it makes specs that get past the checker often enough to
/// exercise the compiler and the interpreter, and many that do not.
/// Biased (for the `differential` target), it makes specs the checker
/// mostly takes: guards and bodies use only the variables their head binds,
/// call functions and special forms with their arity where the kind and
/// the context allow them, and lean towards arithmetic, comparisons and
/// logic on those variables, where the JIT has code of its own.
struct SpecGen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    kind: Kind,
    /// Expressions and patterns made so far (the size budget).
    vars: usize,
    /// Make specs the checker takes (see the type's docs).
    biased: bool,
    /// The variables the current clause's head binds.
    bound: Vec<u32>,
    /// Is the expression being made in a guard?
    in_guard: bool,
    /// The head of every clause made so far.
    heads: Vec<Term>,
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

/// The trace actions, ordered so that the ones each event allows are a
/// prefix (the checker's rules: the `receive` event allows only the first
/// four, which do not act on the process; only call events know their
/// caller and stack, the last four).
const ACTIONS: &[(&str, usize)] = &[
    ("message", 1),
    ("display", 1),
    ("return_trace", 0),
    ("exception_trace", 0),
    // `send` and `call`:
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
    ("silent", 1),
    // `call` only:
    ("caller", 0),
    ("caller_line", 0),
    ("current_stacktrace", 0),
    ("current_stacktrace", 1),
];

/// The trace actions a body of `kind` may use.
fn actions(kind: Kind) -> &'static [(&'static str, usize)] {
    match kind {
        Kind::Table => &[],
        Kind::Receive => &ACTIONS[..4],
        Kind::Send => &ACTIONS[..15],
        Kind::Call => ACTIONS,
    }
}

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

/// Atoms that biased specs use as literals and as arguments of actions:
/// trace flags, `seq_trace` keys, and plain atoms (no variables).
const FLAGS: &[&str] = &[
    "true",
    "false",
    "ok",
    "a",
    "label",
    "serial",
    "send",
    "receive",
    "call",
    "procs",
    "timestamp",
    "arity",
    "return_to",
    "silent",
    "cpu_timestamp",
    "garbage_collection",
    "print",
    "spawn",
];

/// Guard functions that compare or combine, which biased guards favour.
const TESTS: &[(&str, usize)] = &[
    ("<", 2),
    ("=<", 2),
    (">", 2),
    (">=", 2),
    ("==", 2),
    ("/=", 2),
    ("=:=", 2),
    ("=/=", 2),
    ("not", 1),
    ("xor", 2),
    ("is_integer", 1),
    ("is_float", 1),
    ("is_number", 1),
    ("is_atom", 1),
    ("is_list", 1),
    ("is_tuple", 1),
    ("is_map", 1),
    ("is_binary", 1),
    ("is_boolean", 1),
    ("is_pid", 1),
];

/// Arithmetic: most of it is inline code in the JIT for small integers
/// (`+ - * div rem band bor bxor`), the rest calls helpers. `+`, `-` and
/// `*` are listed twice, to come up twice as often.
const ARITH: &[(&str, usize)] = &[
    ("+", 2),
    ("-", 2),
    ("*", 2),
    ("+", 2),
    ("-", 2),
    ("*", 2),
    ("div", 2),
    ("rem", 2),
    ("band", 2),
    ("bor", 2),
    ("bxor", 2),
    ("bsl", 2),
    ("bsr", 2),
    ("-", 1),
    ("abs", 1),
];

impl<'u, 'a> SpecGen<'u, 'a> {
    const BUDGET: usize = 120;
    const DEPTH: usize = 12;
    /// How deep biased guards and bodies nest.
    const EXPR_DEPTH: usize = 6;

    fn new(u: &'u mut Unstructured<'a>, kind: Kind, biased: bool) -> SpecGen<'u, 'a> {
        SpecGen { u, kind, vars: 0, biased, bound: Vec::new(), in_guard: false, heads: Vec::new() }
    }

    fn spec(&mut self) -> Result<Term> {
        let n = self.u.int_in_range(1..=3)?;
        let clauses = (0..n).map(|_| self.clause()).collect::<Result<Vec<_>>>()?;
        Ok(Term::list(clauses))
    }

    fn clause(&mut self) -> Result<Term> {
        self.bound.clear();
        let head = if self.biased { self.biased_head()? } else { self.head()? };
        self.heads.push(head.clone());
        self.in_guard = true;
        let guards = if self.biased { self.guards()? } else { self.exprs(0..=2)? };
        self.in_guard = false;
        let body = if self.biased { self.body()? } else { self.exprs(0..=3)? };
        Ok(Term::tuple([head, guards, body]))
    }

    fn head(&mut self) -> Result<Term> {
        Ok(match self.kind {
            Kind::Table => self.pattern(0)?,
            _ if self.u.ratio(1u8, 8u8)? => self.pattern(Self::DEPTH)?,
            _ => {
                let n = self.u.int_in_range(0..=3)?;
                Term::list((0..n).map(|_| self.pattern(1)).collect::<Result<Vec<_>>>()?)
            }
        })
    }

    /// A head that is mostly a tuple (table) or a list (trace) of patterns.
    fn biased_head(&mut self) -> Result<Term> {
        match self.u.choose_index(10)? {
            0 => Ok(atom("_")),
            1 => self.var(),
            // A trace head that is not a list is invalid.
            2 if self.kind != Kind::Table => self.var(),
            2 => self.pattern(1),
            _ => {
                let n = self.u.int_in_range(0..=4)?;
                let elements = (0..n).map(|_| self.pattern(1)).collect::<Result<Vec<_>>>()?;
                Ok(match self.kind {
                    Kind::Table => Term::tuple(elements),
                    _ => Term::list(elements),
                })
            }
        }
    }

    fn exprs(&mut self, range: std::ops::RangeInclusive<usize>) -> Result<Term> {
        let n = self.u.int_in_range(range)?;
        Ok(Term::list((0..n).map(|_| self.expr(0)).collect::<Result<Vec<_>>>()?))
    }

    /// Biased guards: mostly tests and logic.
    fn guards(&mut self) -> Result<Term> {
        let n = self.u.int_in_range(0..=2)?;
        let guards = (0..n)
            .map(|_| if self.u.ratio(3u8, 4u8)? { self.test(0) } else { self.biased_expr(0) })
            .collect::<Result<Vec<_>>>()?;
        Ok(Term::list(guards))
    }

    /// Biased bodies: at least one expression for tables; trace bodies
    /// lean towards actions.
    fn body(&mut self) -> Result<Term> {
        let least = usize::from(self.kind == Kind::Table);
        let n = self.u.int_in_range(least..=3)?;
        let actions = actions(self.kind);
        let body = (0..n)
            .map(|_| {
                if !actions.is_empty() && self.u.ratio(2u8, 5u8)? {
                    let &(name, arity) = self.u.choose(actions)?;
                    self.form(name, arity, 0)
                } else {
                    self.biased_expr(0)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Term::list(body))
    }

    /// A match variable `'$N'`, or a name that only looks like one. The
    /// names come from a fixed set: atoms are never freed, and arbitrary
    /// numbers would grow the atom table for as long as the fuzzer runs.
    /// Biased heads bind only `'$0'` to `'$5'`.
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
        if !self.biased && self.u.ratio(1u8, 8u8)? {
            return Ok(atom(self.u.choose(ODD)?));
        }
        let n = self.u.int_in_range(0..=if self.biased { 5 } else { 4 })?;
        if !self.bound.contains(&n) {
            self.bound.push(n);
        }
        Ok(atom(&format!("${n}")))
    }

    fn word(&mut self) -> Result<Term> {
        Ok(atom(self.u.choose(WORDS)?))
    }

    fn pattern(&mut self, depth: usize) -> Result<Term> {
        self.vars += 1;
        let leaf = depth >= Self::DEPTH || self.vars >= Self::BUDGET;
        let biased = self.biased;
        match self.u.choose_index(if leaf { 4 } else { 8 })? {
            0 => Ok(atom("_")),
            1 => self.var(),
            2 if biased => self.var(),
            2 => self.word(),
            3 => {
                // A head compiles to code for each of its parts, so a term
                // wrapped thousands deep would make the JIT (and the
                // fuzzer) crawl.
                let term = if biased { value_term(self.u)? } else { Term::arbitrary(self.u)? };
                if shallow(term.as_ref(), Self::DEPTH) { Ok(term) } else { self.literal() }
            }
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
                    let mut heap = Heap::new();
                    let words: Vec<_> = elements.iter().map(|e| e.copy_to(&mut heap)).collect();
                    let tail = tail.copy_to(&mut heap);
                    let root = heap.list_with_tail(&words, tail);
                    Ok(Term::from_parts(heap, root))
                }
            }
            _ => {
                let n = self.u.int_in_range(0..=3)?;
                let pairs = (0..n)
                    .map(|_| {
                        let key = if biased { self.literal()? } else { self.word()? };
                        Ok((key, self.pattern(depth + 1)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Term::map(pairs))
            }
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Term> {
        if self.biased {
            return self.biased_expr(depth);
        }
        self.vars += 1;
        let leaf = depth >= Self::DEPTH || self.vars >= Self::BUDGET;
        match self.u.choose_index(if leaf { 4 } else { 10 })? {
            0 => self.var(),
            1 => self.word(),
            2 => Ok(Term::from(self.u.int_in_range(-3i64..=300)?)),
            3 => Term::arbitrary(self.u),
            4 | 5 => {
                let entry = self.u.choose(functions())?;
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

    // ---- Biased guards and bodies -------------------------------------------------------

    /// A guard or body expression of a biased spec.
    fn biased_expr(&mut self, depth: usize) -> Result<Term> {
        self.vars += 1;
        let leaf = depth >= Self::EXPR_DEPTH || self.vars >= Self::BUDGET;
        match self.u.choose_index(if leaf { 4 } else { 16 })? {
            0 | 1 => self.operand(),
            2 => self.literal(),
            3 => {
                let value = value_term(self.u)?;
                Ok(Term::tuple([atom("const"), value]))
            }
            4..=6 => {
                let &(name, arity) = self.u.choose(ARITH)?;
                self.apply(name, arity, depth)
            }
            7 => self.test(depth),
            8 | 9 => {
                let entry = self.u.choose(functions())?;
                let allowed = match (self.kind == Kind::Table, self.in_guard) {
                    (true, true) => entry.allowed.table_guard,
                    (true, false) => entry.allowed.table_body,
                    (false, true) => entry.allowed.trace_guard,
                    (false, false) => entry.allowed.trace_body,
                };
                if !allowed {
                    return self.operand();
                }
                self.apply(entry.name, usize::from(entry.arity), depth)
            }
            10 => {
                let n = self.u.int_in_range(0..=3)?;
                let elements =
                    (0..n).map(|_| self.biased_expr(depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(Term::tuple([Term::tuple(elements)]))
            }
            11 => {
                let n = self.u.int_in_range(0..=3)?;
                let elements =
                    (0..n).map(|_| self.biased_expr(depth + 1)).collect::<Result<Vec<_>>>()?;
                Ok(Term::list(elements))
            }
            12 => {
                let n = self.u.int_in_range(0..=2)?;
                let pairs = (0..n)
                    .map(|_| Ok((self.biased_expr(depth + 1)?, self.biased_expr(depth + 1)?)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Term::map(pairs))
            }
            13 => Ok(Term::tuple([atom("self")])),
            14 if self.kind != Kind::Table && !self.in_guard => {
                let actions = actions(self.kind);
                let &(name, arity) = self.u.choose(actions)?;
                self.form(name, arity, depth)
            }
            14 if self.kind != Kind::Table => {
                // The trace functions guards may use.
                if self.kind != Kind::Receive && self.u.arbitrary()? {
                    Ok(Term::tuple([atom("is_seq_trace")]))
                } else {
                    Ok(Term::tuple([atom("get_tcw")]))
                }
            }
            _ => self.test(depth),
        }
    }

    /// Something a guard tests: a comparison, a type test or logic.
    fn test(&mut self, depth: usize) -> Result<Term> {
        self.vars += 1;
        if depth >= Self::EXPR_DEPTH || self.vars >= Self::BUDGET {
            return self.operand();
        }
        match self.u.choose_index(6)? {
            0..=2 => {
                let &(name, arity) = self.u.choose(TESTS)?;
                self.apply(name, arity, depth)
            }
            3 => {
                let name = *self.u.choose(&["andalso", "orelse", "and", "or"])?;
                let n = self.u.int_in_range(1..=3)?;
                let mut elements = vec![atom(name)];
                for _ in 0..n {
                    elements.push(self.test(depth + 1)?);
                }
                Ok(Term::tuple(elements))
            }
            4 => {
                let inner = self.test(depth + 1)?;
                Ok(Term::tuple([atom("not"), inner]))
            }
            _ => {
                // A comparison of a variable with a literal or arithmetic.
                let &(name, _) = self.u.choose(&TESTS[..8])?;
                let a = self.operand()?;
                let b = if self.u.arbitrary()? {
                    self.literal()?
                } else {
                    let &(op, arity) = self.u.choose(ARITH)?;
                    self.apply(op, arity, depth + 1)?
                };
                let (a, b) = if self.u.arbitrary()? { (a, b) } else { (b, a) };
                Ok(Term::tuple([atom(name), a, b]))
            }
        }
    }

    /// `{Name, Arg, ...}` with `arity` biased arguments.
    fn apply(&mut self, name: &str, arity: usize, depth: usize) -> Result<Term> {
        let mut elements = vec![atom(name)];
        for _ in 0..arity {
            let arg = if self.u.ratio(1u8, 2u8)? {
                self.operand()?
            } else {
                self.biased_expr(depth + 1)?
            };
            elements.push(arg);
        }
        Ok(Term::tuple(elements))
    }

    /// A special form or action, with arguments that make sense for it.
    fn form(&mut self, name: &str, arity: usize, depth: usize) -> Result<Term> {
        let mut elements = vec![atom(name)];
        match (name, arity) {
            ("current_stacktrace", 1) => {
                elements.push(Term::from(self.u.int_in_range(0i64..=10)?));
            }
            ("set_seq_token", _) => {
                elements.push(atom(self.u.choose(&[
                    "label",
                    "serial",
                    "send",
                    "receive",
                    "print",
                    "timestamp",
                    "spawn",
                    "ok",
                ])?));
                elements.push(self.biased_expr(depth + 1)?);
            }
            ("enable_trace" | "disable_trace", _) => {
                if arity == 2 {
                    elements.push(self.target()?);
                }
                elements.push(self.flag()?);
            }
            ("trace", _) => {
                if arity == 3 {
                    elements.push(self.target()?);
                }
                for _ in 0..2 {
                    let n = self.u.int_in_range(0..=2)?;
                    let flags = (0..n).map(|_| self.flag()).collect::<Result<Vec<_>>>()?;
                    elements.push(Term::list(flags));
                }
            }
            ("silent", _) if self.u.ratio(3u8, 4u8)? => {
                elements.push(Term::from(self.u.arbitrary::<bool>()?));
            }
            _ => {
                for _ in 0..arity {
                    elements.push(self.biased_expr(depth + 1)?);
                }
            }
        }
        Ok(Term::tuple(elements))
    }

    /// A process a trace action names: itself (`{self}`), or a variable.
    fn target(&mut self) -> Result<Term> {
        if self.u.arbitrary()? { Ok(Term::tuple([atom("self")])) } else { self.operand() }
    }

    /// A trace flag, mostly a valid one.
    fn flag(&mut self) -> Result<Term> {
        if self.u.ratio(1u8, 8u8)? { self.operand() } else { Ok(atom(self.u.choose(FLAGS)?)) }
    }

    /// A variable the head binds, `'$_'` or `'$$'`; a literal if there is
    /// none.
    fn operand(&mut self) -> Result<Term> {
        if !self.bound.is_empty() && self.u.ratio(5u8, 6u8)? {
            let n = *self.u.choose(&self.bound)?;
            return Ok(atom(&format!("${n}")));
        }
        match self.u.choose_index(3)? {
            0 => Ok(atom("$_")),
            1 => Ok(atom("$$")),
            _ => self.literal(),
        }
    }

    /// A literal that stands for itself in an expression and a pattern: a
    /// number, an atom that is no variable, `[]` or a bitstring.
    fn literal(&mut self) -> Result<Term> {
        let mut heap = Heap::new();
        let word = match self.u.choose_index(6)? {
            0 => Word::atom(Atom::try_new(self.u.choose(FLAGS)?).unwrap_or(Atom::OK)),
            1 => Word::NIL,
            2 => float(self.u, &mut heap)?,
            3 => bits(self.u, &mut heap)?,
            _ => integer(self.u, &mut heap)?,
        };
        Ok(Term::from_parts(heap, word))
    }
}

/// The atom `name`, or `ok` if the atom table is full.
fn atom(name: &str) -> Term {
    Term::atom(Atom::try_new(name).unwrap_or(Atom::OK))
}

// ---- Values -----------------------------------------------------------------------------

/// Integers around the edges of the small range (61 bits here, 60 in
/// OTP), where the JIT's inline arithmetic must hand over to bignums, and
/// some ordinary ones.
const EDGE_INTS: &[i128] = &[
    0,
    1,
    -1,
    2,
    3,
    7,
    10,
    100,
    -100,
    255,
    (1 << 27) - 1,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    1 << 32,
    3_037_000_499,
    3_037_000_500,
    (1 << 59) - 1,
    1 << 59,
    -(1 << 59),
    -(1 << 59) - 1,
    (1 << 60) - 2,
    (1 << 60) - 1,
    1 << 60,
    (1 << 60) + 1,
    -(1 << 60) + 1,
    -(1 << 60),
    -(1 << 60) - 1,
    (1 << 61) - 1,
    1 << 61,
    -(1 << 61),
    (1 << 62) - 1,
    1 << 62,
    -(1 << 62),
    (1 << 63) - 1,
    1 << 63,
    -(1 << 63),
    -(1 << 63) - 1,
    (1 << 64) - 1,
    1 << 64,
    -(1 << 64),
    1 << 100,
];

/// Floats that matter to comparisons and arithmetic: zeros of both signs,
/// integral floats at the small-integer edges, extremes.
const EDGE_FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    100.0,
    1.0e15,
    9007199254740992.0,
    9007199254740993.0,
    1152921504606846976.0,
    -1152921504606846976.0,
    1152921504606846975.0,
    2305843009213693952.0,
    9223372036854775807.0,
    -9223372036854775808.0,
    18446744073709551616.0,
    1.0e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5.0e-324,
    -5.0e-324,
];

/// Atoms inputs are made of.
const VALUE_ATOMS: &[&str] =
    &["true", "false", "ok", "a", "b", "undefined", "EXIT", "send", "label", "$1", "_", "[]"];

fn integer(u: &mut Unstructured<'_>, heap: &mut Heap) -> Result<Word> {
    Ok(match u.choose_index(6)? {
        0 | 1 => heap.int(u.int_in_range(-20i64..=300)?),
        2 | 3 => heap.int128(*u.choose(EDGE_INTS)?),
        4 => {
            let near = *u.choose(EDGE_INTS)?;
            heap.int128(near.saturating_add(i128::from(u.int_in_range(-3i8..=3)?)))
        }
        _ => heap.int(u.arbitrary()?),
    })
}

fn float(u: &mut Unstructured<'_>, heap: &mut Heap) -> Result<Word> {
    let value = if u.ratio(3u8, 4u8)? {
        *u.choose(EDGE_FLOATS)?
    } else if u.arbitrary()? {
        f64::from(u.int_in_range(-100i32..=100)?) / 4.0
    } else {
        f64::from_bits(u.arbitrary()?)
    };
    Ok(heap.try_float(value).unwrap_or_else(|| heap.float(0.0)))
}

fn bits(u: &mut Unstructured<'_>, heap: &mut Heap) -> Result<Word> {
    let n = u.int_in_range(0..=6)?;
    let bytes = u.bytes(n)?.to_vec();
    if !bytes.is_empty() && u.ratio(1u8, 4u8)? {
        let bit_len = bytes.len() as u64 * 8 - u.int_in_range(1..=7u64)?;
        return Ok(heap.bitstring(&bytes, bit_len));
    }
    Ok(heap.binary(&bytes))
}

/// A term for a variable of an input to stand for: numbers at the edges,
/// atoms, binaries, small containers of those, now and then any term.
fn value(u: &mut Unstructured<'_>, heap: &mut Heap, depth: usize) -> Result<Word> {
    let leaf = depth >= 3;
    Ok(match u.choose_index(if leaf { 8 } else { 12 })? {
        0..=2 => integer(u, heap)?,
        3 => float(u, heap)?,
        4 => Word::atom(Atom::try_new(u.choose(VALUE_ATOMS)?).unwrap_or(Atom::OK)),
        5 => bits(u, heap)?,
        6 => Word::NIL,
        7 => Term::arbitrary(u)?.copy_to(heap),
        8 | 9 => {
            let n = u.int_in_range(0..=3)?;
            let elements = (0..n).map(|_| value(u, heap, depth + 1)).collect::<Result<Vec<_>>>()?;
            heap.tuple(&elements)
        }
        10 => {
            let n = u.int_in_range(0..=3)?;
            let elements = (0..n).map(|_| value(u, heap, depth + 1)).collect::<Result<Vec<_>>>()?;
            heap.list(&elements)
        }
        _ => {
            let n = u.int_in_range(0..=2)?;
            let pairs = (0..n)
                .map(|_| Ok((value(u, heap, depth + 1)?, value(u, heap, depth + 1)?)))
                .collect::<Result<Vec<_>>>()?;
            heap.map(&pairs)
        }
    })
}

/// Does `term` nest at most `depth` containers deep?
fn shallow(term: TermRef<'_>, depth: usize) -> bool {
    let mut stack = vec![(term, 0)];
    while let Some((t, d)) = stack.pop() {
        let children: Vec<TermRef<'_>> = match t.kind() {
            TermKind::Tuple(tuple) => tuple.iter().collect(),
            TermKind::Cons(_) => {
                let mut items = t.list_items();
                let mut children: Vec<TermRef<'_>> = items.by_ref().collect();
                children.push(items.tail());
                children
            }
            TermKind::Map(map) => map.keys().chain(map.values()).collect(),
            _ => continue,
        };
        if d == depth {
            return false;
        }
        stack.extend(children.into_iter().map(|c| (c, d + 1)));
    }
    true
}

/// [`value`] as a term of its own.
fn value_term(u: &mut Unstructured<'_>) -> Result<Term> {
    let mut heap = Heap::new();
    let word = value(u, &mut heap, 0)?;
    Ok(Term::from_parts(heap, word))
}

// ---- Differential cases -----------------------------------------------------------------

/// A spec and the inputs to run it on, for the `differential` target.
///
/// Displays as Erlang text: one `{Kind, MatchSpec, Input}.` line per input,
/// the lines of `testdata/otp/*.terms` without their `Expected`.
#[derive(Clone, Debug)]
pub struct DiffCase {
    /// The kind the spec is compiled for.
    pub kind: Kind,
    /// The spec, `[{Head, Guards, Body}, ...]`.
    pub spec: Term,
    /// The inputs (argument lists for trace kinds), run in this order.
    pub inputs: Vec<Term>,
}

impl std::fmt::Display for DiffCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `match_spec_test` calls the call kind `trace`.
        let kind = if self.kind == Kind::Call { "trace" } else { self.kind.name() };
        for input in &self.inputs {
            writeln!(f, "{{{kind},{},{input}}}.", self.spec)?;
        }
        Ok(())
    }
}

/// A generated [`DiffCase`]: a biased spec (an unbiased one now and then)
/// of any kind, and inputs that are mostly instances of its heads.
pub fn differential_case(u: &mut Unstructured<'_>) -> Result<DiffCase> {
    // A third of the bytes make the inputs, the rest the spec, so that a
    // large spec leaves bytes for its inputs. When the bytes run out,
    // `Unstructured` answers the lowest choice (and `ratio` yes): the
    // choices below are arranged so that this is a plain, matching input.
    let mut inputs_u = Unstructured::new(u.bytes(u.len() / 3)?);
    let kind = *u.choose(&[Kind::Table, Kind::Call, Kind::Send, Kind::Receive])?;
    let biased = u.ratio(7u8, 8u8)?;
    let mut g = SpecGen::new(u, kind, biased);
    let spec = g.spec()?;
    let heads = g.heads;
    let u = &mut inputs_u;
    // Many inputs to one compile: compiling for the JIT is most of a
    // case's cost.
    let n = u.int_in_range(1..=24)?;
    let mut inputs = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 && u.is_empty() {
            break;
        }
        let input = if u.ratio(5u8, 6u8)? {
            let head = u.choose(&heads)?;
            Instance { u, heap: Heap::new(), bound: Vec::new() }.input(head.as_ref(), kind)?
        } else {
            arbitrary_input(u, kind)?
        };
        inputs.push(input);
    }
    Ok(DiffCase { kind, spec, inputs })
}

/// Any input: a term, or for trace kinds mostly a list of terms.
fn arbitrary_input(u: &mut Unstructured<'_>, kind: Kind) -> Result<Term> {
    if kind == Kind::Table || !u.ratio(15u8, 16u8)? {
        return if u.arbitrary()? { Term::arbitrary(u) } else { value_term(u) };
    }
    let n = u.int_in_range(0..=4)?;
    let args = (0..n)
        .map(|_| if u.arbitrary()? { Term::arbitrary(u) } else { value_term(u) })
        .collect::<Result<Vec<_>>>()?;
    Ok(Term::list(args))
}

/// Makes an input that a head matches, mostly: each variable stands for a
/// [`value`] (the same one each time it occurs, mostly), each `'_'` for
/// another, literals for themselves, and now and then a part is changed.
struct Instance<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    heap: Heap,
    /// The value each variable stands for.
    bound: Vec<(u32, Word)>,
}

impl Instance<'_, '_> {
    /// How deep in a head parts are instantiated; deeper ones are copied.
    const DEPTH: usize = 32;

    fn input(mut self, head: TermRef<'_>, kind: Kind) -> Result<Term> {
        let list_head = head.is_nil() || head.as_cons().is_some();
        let root = if kind.is_trace() && !list_head {
            // `'_'` or `'$N'`: any arguments.
            let n = self.u.int_in_range(0..=4)?;
            let args =
                (0..n).map(|_| value(self.u, &mut self.heap, 0)).collect::<Result<Vec<_>>>()?;
            self.heap.list(&args)
        } else {
            self.pattern(head, 0)?
        };
        Ok(Term::from_parts(self.heap, root))
    }

    fn pattern(&mut self, t: TermRef<'_>, depth: usize) -> Result<Word> {
        if depth > Self::DEPTH {
            return Ok(t.to_owned().copy_to(&mut self.heap));
        }
        if !self.u.ratio(39u8, 40u8)? {
            return value(self.u, &mut self.heap, 0);
        }
        if let Some(n) = t.as_atom().and_then(variable_number) {
            if let Some(&(_, w)) = self.bound.iter().find(|(m, _)| *m == n)
                && self.u.ratio(7u8, 8u8)?
            {
                return Ok(w);
            }
            let w = value(self.u, &mut self.heap, 0)?;
            self.bound.push((n, w));
            return Ok(w);
        }
        if t.as_atom() == Some(Atom::UNDERSCORE) {
            return value(self.u, &mut self.heap, 0);
        }
        match t.kind() {
            TermKind::Tuple(tuple) => {
                let mut elements =
                    tuple.iter().map(|e| self.pattern(e, depth + 1)).collect::<Result<Vec<_>>>()?;
                if !self.u.ratio(31u8, 32u8)? {
                    elements.push(value(self.u, &mut self.heap, 1)?);
                }
                Ok(self.heap.tuple(&elements))
            }
            TermKind::Cons(cons) => {
                let head = self.pattern(cons.head(), depth + 1)?;
                let tail = self.pattern(cons.tail(), depth + 1)?;
                Ok(self.heap.cons(head, tail))
            }
            TermKind::Map(map) => {
                let mut pairs = Vec::with_capacity(map.len() + 1);
                for (k, v) in map.iter() {
                    let key = k.to_owned().copy_to(&mut self.heap);
                    pairs.push((key, self.pattern(v, depth + 1)?));
                }
                if !self.u.ratio(3u8, 4u8)? {
                    let key = value(self.u, &mut self.heap, 2)?;
                    let value = value(self.u, &mut self.heap, 2)?;
                    pairs.push((key, value));
                }
                if !pairs.is_empty() && !self.u.ratio(31u8, 32u8)? {
                    let i = self.u.choose_index(pairs.len())?;
                    pairs.remove(i);
                }
                Ok(if self.u.arbitrary()? {
                    self.heap.map(&pairs)
                } else {
                    self.heap.map_in_order(&pairs)
                })
            }
            _ => Ok(t.to_owned().copy_to(&mut self.heap)),
        }
    }
}

/// The number of the match variable `'$N'` (as the checker reads it).
fn variable_number(name: Atom) -> Option<u32> {
    let digits = name.name().strip_prefix('$')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}
