//! Hand-written Rust filters for the six shared workloads: the `native`
//! entry of the engine benchmarks, the practical limit for an engine.
//!
//! Each filter does what its workload's match spec does, on the same terms,
//! written as an embedder who cares about speed would write it with
//! matchspec's public term API. The hot reads are made in place, with
//! [`Heap::words`] and the documented word layout of
//! [`matchspec::term::word::layout`] (the reads the JIT's inline code
//! makes): tuples, list cells, atom keys of maps, and in `arith` the float
//! or two-limb bignum operand. Immediates are compared as words
//! ([`Word::as_small`], [`Word::as_atom`], atoms by `==`). Everything else
//! goes through [`Heap::view`] and [`TermRef::kind`]. Reading tuples through
//! [`TermRef::as_tuple`] and [`Tuple::get`](matchspec::term::Tuple::get)
//! instead gives the same answers but is several times slower per event
//! (`kind` decodes any term and is not inlined across crates): on
//! `tuple_filter` about 20 ns an event against about 2.5.
//!
//! Where the spec's body builds a term, the filter builds it into a reused
//! output [`Heap`] that it clears first (so one event's result lives until
//! the next event), copying the parts of the input it returns, since a
//! [`Heap`] can only point into itself (the engines' results share them with
//! the input instead; that is why `body_build`, which returns `'$_'`, is
//! slower here than in the engines). Where the body returns a part of the
//! input, the filter returns a view of it in the input heap, as the engines
//! do.
//!
//! The filters are exact, not approximations: numbers compare in Erlang's
//! term order (every non-number is greater than every number), arithmetic is
//! Erlang's (integers of any size: `i128`, and `num-bigint` past that; floats
//! when either operand is one; `badarith` when a float is not finite), a body
//! that fails returns `'EXIT'`. A unit test checks that every filter gives
//! the interpreter's answer on all of its workload's inputs and on edge cases.
//!
//! [`with_native`] finds a workload's filter by name and hands it, by value,
//! to a [`NativeVisitor`], so a benchmark loop is monomorphic (no dynamic
//! call per event).

use std::cmp::Ordering;

use matchspec::term::word::layout::{
    FLOAT_HEADER, HEADER_KIND_BITS, HEADER_KIND_MASK, HEADER_MAP, HEADER_NEG_BIG, HEADER_POS_BIG,
    HEADER_TUPLE, MAP_IN_ORDER, OFFSET_SHIFT, SPACE_MASK, SPACE_SHIFT, TAG_BOXED, TAG_CONS,
    TAG_MASK, tuple_header,
};
use matchspec::term::{Atom, Big, Heap, Kind, TermRef, Word};
use num_bigint::{BigInt, Sign};
use num_traits::{FromPrimitive, ToPrimitive};

/// A hand-written filter for one workload.
pub trait Native {
    /// Runs the filter on `input`, a term of `heap`: `None` if the spec
    /// would not match, else its result, which is a term of `heap` or of
    /// `out` (cleared first if the filter builds anything).
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>>;
}

/// What to do with a workload's filter; see [`with_native`].
pub trait NativeVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the filter.
    fn visit<N: Native>(self, native: N) -> Self::Output;
}

/// The names of the workloads that have a native filter.
pub const NATIVE_WORKLOADS: [&str; 6] =
    ["tuple_filter", "guard_heavy", "multi_clause", "body_build", "deep_head", "arith"];

/// Hands workload `name`'s filter to `visitor`; `None` if there is none.
pub fn with_native<V: NativeVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        "tuple_filter" => visitor.visit(TupleFilter::new()),
        "guard_heavy" => visitor.visit(GuardHeavy::new()),
        "multi_clause" => visitor.visit(MultiClause::new()),
        "body_build" => visitor.visit(BodyBuild),
        "deep_head" => visitor.visit(DeepHead::new()),
        "arith" => visitor.visit(Arith::new()),
        _ => return None,
    })
}

fn atom(name: &str) -> Word {
    Word::atom(Atom::new(name))
}

/// The cells `word` points at, if it is a pointer with tag `tag` into
/// `heap`: the reads the JIT's inline code makes, with the public layout of
/// [`matchspec::term::word`].
#[inline]
fn cells(heap: &Heap, word: Word, tag: u64) -> Option<&[Word]> {
    let bits = word.to_bits();
    if bits & TAG_MASK != tag || (bits >> SPACE_SHIFT) & SPACE_MASK != heap.space() as u64 {
        return None;
    }
    heap.words().get((bits >> OFFSET_SHIFT) as usize..)
}

/// The elements of `word`, a term of `heap`, if it is a tuple of exactly
/// `N` elements.
#[inline]
fn tuple<const N: usize>(heap: &Heap, word: Word) -> Option<&[Word; N]> {
    let (header, elements) = cells(heap, word, TAG_BOXED)?.split_first()?;
    if header.to_bits() != tuple_header(N as u64) {
        return None;
    }
    elements.first_chunk()
}

/// The head and tail of `word`, a term of `heap`, if it is a list cell.
#[inline]
fn cons(heap: &Heap, word: Word) -> Option<&[Word; 2]> {
    cells(heap, word, TAG_CONS)?.first_chunk()
}

/// The value of the immediate key `key` (an atom) in `map`, a term of
/// `heap`, if `map` is a map that has it: atoms are equal exactly when their
/// words are, so this is a scan of the keys.
#[inline]
fn map_get(heap: &Heap, map: Word, key: Word) -> Option<Word> {
    let (header, rest) = cells(heap, map, TAG_BOXED)?.split_first()?;
    if header.to_bits() & HEADER_KIND_MASK != HEADER_MAP {
        return None;
    }
    let n = ((header.to_bits() >> HEADER_KIND_BITS) & !MAP_IN_ORDER) as usize;
    let i = rest.get(..n)?.iter().position(|&k| k == key)?;
    rest.get(n + i).copied()
}

/// `word` (a term of `heap`) compared with the integer `n` in Erlang's term
/// order: numbers by value, and every other term is greater than every
/// number.
#[inline]
fn cmp_int(heap: &Heap, word: Word, n: i64) -> Ordering {
    if let Some(v) = word.as_small() {
        return v.cmp(&n);
    }
    match heap.view(word).kind() {
        Kind::Small(v) => v.cmp(&n),
        // A bignum is outside the small range, so beyond any small `n`.
        Kind::Big(b) if b.is_negative() => Ordering::Less,
        Kind::Big(_) => Ordering::Greater,
        Kind::Float(f) => cmp_i128_f64(i128::from(n), f).reverse(),
        _ => Ordering::Greater,
    }
}

/// An integer compared exactly with a (finite) float.
fn cmp_i128_f64(i: i128, f: f64) -> Ordering {
    const EXACT: i128 = 1 << 53;
    if (-EXACT..=EXACT).contains(&i) {
        return (i as f64).partial_cmp(&f).expect("Erlang floats are finite");
    }
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0; // 2^127
    if f >= LIMIT {
        return Ordering::Less;
    }
    if f < -LIMIT {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    i.cmp(&(whole as i128)).then_with(|| 0.0f64.partial_cmp(&(f - whole)).expect("finite"))
}

/// Copies `word`, a term of `heap`, into `out` (immediates are not copied:
/// they are valid in every heap).
fn copy(heap: &Heap, word: Word, out: &mut Heap) -> Word {
    if word.is_immediate() {
        return word;
    }
    if let Some(&[head, tail]) = cons(heap, word) {
        let head = copy(heap, head, out);
        let tail = copy(heap, tail, out);
        return out.cons(head, tail);
    }
    if let Some((header, rest)) = cells(heap, word, TAG_BOXED).and_then(|c| c.split_first())
        && header.to_bits() & HEADER_KIND_MASK == HEADER_TUPLE
        && let Some(elements) = rest.get(..(header.to_bits() >> HEADER_KIND_BITS) as usize)
    {
        if elements.len() <= 8 {
            // Small tuples: elements first, then the tuple in one go.
            let mut copied = [Word::NIL; 8];
            for (slot, &element) in copied.iter_mut().zip(elements) {
                *slot = copy(heap, element, out);
            }
            return out.tuple(&copied[..elements.len()]);
        }
        let copied = out.tuple_uninit(elements.len());
        for (i, &element) in elements.iter().enumerate() {
            let element = copy(heap, element, out);
            out.set_element(copied, i, element);
        }
        return copied;
    }
    match heap.view(word).kind() {
        Kind::Big(big) => match big_to_i128(big) {
            Some(v) => out.int128(v),
            None => out.bigint(&big.to_bigint()),
        },
        Kind::Float(f) => out.float(f),
        Kind::Bits(bits) if bits.is_binary() => out.binary(bits.bytes()),
        Kind::Bits(bits) => out.bitstring(bits.bytes(), bits.bit_len()),
        // Rare in these workloads' results: copy through an owned term.
        _ => heap.view(word).to_owned().copy_to(out),
    }
}

fn big_to_i128(big: Big<'_>) -> Option<i128> {
    let mut limbs = big.limbs();
    let magnitude = match limbs.len() {
        1 => i128::from(limbs.next()?),
        2 => {
            let (lo, hi) = (limbs.next()?, limbs.next()?);
            i128::try_from(u128::from(hi) << 64 | u128::from(lo)).ok()?
        }
        _ => return None,
    };
    Some(if big.is_negative() { -magnitude } else { magnitude })
}

// ---- tuple_filter -----------------------------------------------------------

/// `[{{'$1', '$2', ok}, [{'>', '$2', 100}], ['$1']}]`
#[derive(Debug)]
pub struct TupleFilter {
    ok: Word,
}

impl TupleFilter {
    /// The filter.
    pub fn new() -> TupleFilter {
        TupleFilter { ok: atom("ok") }
    }
}

impl Default for TupleFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl Native for TupleFilter {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, _out: &'a mut Heap) -> Option<TermRef<'a>> {
        let &[key, value, status] = tuple(heap, input)?;
        (status == self.ok && cmp_int(heap, value, 100).is_gt()).then(|| heap.view(key))
    }
}

// ---- guard_heavy ------------------------------------------------------------

/// `[{{'$1', '$2', '$3'}, [{is_atom, '$1'}, {is_integer, '$2'},
/// {'andalso', {'>=', '$2', 10}, {'=<', '$2', 190}},
/// {'orelse', {'==', '$3', get}, {'orelse', {'==', '$3', put}, {'==', '$3', delete}}}],
/// [{{'$1', '$2'}}]}]`
#[derive(Debug)]
pub struct GuardHeavy {
    verbs: [Word; 3],
}

impl GuardHeavy {
    /// The filter.
    pub fn new() -> GuardHeavy {
        GuardHeavy { verbs: [atom("get"), atom("put"), atom("delete")] }
    }
}

impl Default for GuardHeavy {
    fn default() -> Self {
        Self::new()
    }
}

impl Native for GuardHeavy {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>> {
        let &[name, n, verb] = tuple(heap, input)?;
        name.as_atom()?;
        // A bignum is an integer, but never within 10..=190.
        n.as_small().filter(|n| (10..=190).contains(n))?;
        if !self.verbs.contains(&verb) {
            return None;
        }
        out.clear();
        let result = out.tuple(&[name, n]);
        Some(out.view(result))
    }
}

// ---- multi_clause -----------------------------------------------------------

/// The six clauses of `multi_clause` (see `shared/bench/workloads.erl`):
/// requests `{req, Verb, Path, Meta, Size}` sorted into small gets, cached
/// gets, bulk puts, deletes, `head`/`options` and oversized requests.
#[derive(Debug)]
pub struct MultiClause {
    req: Word,
    get: Word,
    put: Word,
    delete: Word,
    head: Word,
    options: Word,
    cache: Word,
    kind: Word,
    small_get: Word,
    cached: Word,
    bulk_put: Word,
    meta: Word,
    too_big: Word,
}

impl MultiClause {
    /// The filter.
    pub fn new() -> MultiClause {
        MultiClause {
            req: atom("req"),
            get: atom("get"),
            put: atom("put"),
            delete: atom("delete"),
            head: atom("head"),
            options: atom("options"),
            cache: atom("cache"),
            kind: atom("type"),
            small_get: atom("small_get"),
            cached: atom("cached"),
            bulk_put: atom("bulk_put"),
            meta: atom("meta"),
            too_big: atom("too_big"),
        }
    }
}

impl Default for MultiClause {
    fn default() -> Self {
        Self::new()
    }
}

impl Native for MultiClause {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>> {
        let &[req, verb, path, meta, size] = tuple(heap, input)?;
        if req != self.req {
            return None;
        }
        // `map_get` and `is_map_key` on a non-map fail the guard.
        let meta_get = |key: Word| map_get(heap, meta, key);
        out.clear();
        let result = if verb == self.get && cmp_int(heap, size, 1024).is_lt() {
            // {{req, get, '$1', '_', '$2'}, [{'<', '$2', 1024}], [{{small_get, '$1'}}]}
            let path = copy(heap, path, out);
            out.tuple(&[self.small_get, path])
        } else if verb == self.get
            && let Some(value) = meta_get(self.cache)
        {
            // {{req, get, '$1', '$3', '_'}, [{is_map_key, cache, '$3'}],
            //  [{{cached, '$1', {map_get, cache, '$3'}}}]}
            let path = copy(heap, path, out);
            let value = copy(heap, value, out);
            out.tuple(&[self.cached, path, value])
        } else if verb == self.put
            && cmp_int(heap, size, 65536).is_gt()
            && meta_get(self.kind).is_some_and(|kind| {
                matches!(heap.view(kind).kind(),
                    Kind::Bits(b) if b.bit_len() == 32 && b.bytes() == b"bulk")
            })
        {
            // {{req, put, '$1', '$3', '$2'},
            //  [{'>', '$2', 65536}, {'==', {map_get, type, '$3'}, <<"bulk">>}],
            //  [{{bulk_put, '$1', '$2'}}]}
            let path = copy(heap, path, out);
            let size = copy(heap, size, out);
            out.tuple(&[self.bulk_put, path, size])
        } else if verb == self.delete {
            // {{req, delete, '$1', '_', '_'}, [], [{{delete, '$1'}}]}
            let path = copy(heap, path, out);
            out.tuple(&[self.delete, path])
        } else if verb == self.head || verb == self.options {
            // {{req, '$4', '$1', '_', '$2'},
            //  [{'orelse', {'==', '$4', head}, {'==', '$4', options}}], [{{meta, '$4', '$1'}}]}
            let path = copy(heap, path, out);
            out.tuple(&[self.meta, verb, path])
        } else if cmp_int(heap, size, 1_000_000).is_gt() {
            // {{req, '_', '_', '_', '$2'}, [{'>', '$2', 1000000}], [too_big]}
            self.too_big
        } else {
            return None;
        };
        Some(out.view(result))
    }
}

// ---- body_build -------------------------------------------------------------

/// `[{{'$1', '$2', '$3'}, [], [{{'$3', '$2', '$1', ['$1', '$2'], '$_'}}]}]`
#[derive(Debug, Default)]
pub struct BodyBuild;

impl Native for BodyBuild {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>> {
        tuple::<3>(heap, input)?;
        out.clear();
        // Copy `'$_'` once; `'$1'`..`'$3'` are its copied elements.
        let whole = copy(heap, input, out);
        let &[a, b, c] = tuple(out, whole).expect("a copy of a 3-tuple");
        let list = out.list(&[a, b]);
        let result = out.tuple(&[c, b, a, list, whole]);
        Some(out.view(result))
    }
}

// ---- deep_head --------------------------------------------------------------

/// `[{{a, {b, '$1', [c | '$2']}, '_'}, [{is_list, '$2'}], ['$2']},
/// {{a, {b, '$1', '_'}, #{k => '$3'}}, [{is_integer, '$3'}], [{{'$1', '$3'}}]}]`
#[derive(Debug)]
pub struct DeepHead {
    a: Word,
    b: Word,
    c: Word,
    k: Word,
}

impl DeepHead {
    /// The filter.
    pub fn new() -> DeepHead {
        DeepHead { a: atom("a"), b: atom("b"), c: atom("c"), k: atom("k") }
    }
}

impl Default for DeepHead {
    fn default() -> Self {
        Self::new()
    }
}

impl Native for DeepHead {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>> {
        let &[a, inner, third] = tuple(heap, input)?;
        if a != self.a {
            return None;
        }
        let &[b, first, list] = tuple(heap, inner)?;
        if b != self.b {
            return None;
        }
        // Clause 1: [c | '$2'] with '$2' a list; the result is '$2' itself.
        if let Some(&[head, rest]) = cons(heap, list)
            && head == self.c
            && (rest.is_nil() || rest.is_cons())
        {
            return Some(heap.view(rest));
        }
        // Clause 2: #{k => '$3'} with '$3' an integer.
        let value = map_get(heap, third, self.k)?;
        if !value.is_small() && !heap.view(value).is_integer() {
            return None;
        }
        out.clear();
        let first = copy(heap, first, out);
        let value = copy(heap, value, out);
        let result = out.tuple(&[first, value]);
        Some(out.view(result))
    }
}

// ---- arith ------------------------------------------------------------------

/// `[{{'$1', '$2'}, [{'<', {'*', '$1', 3}, {'+', '$2', 100}}],
/// [{'-', {'*', '$2', 2}, {'div', '$1', 7}}]}]`
///
/// Integers are `i128`; a value or result beyond that redoes the event with
/// `num-bigint` (not needed by the workload's inputs, but exact).
#[derive(Debug)]
pub struct Arith {
    exit: Word,
}

impl Arith {
    /// The filter.
    pub fn new() -> Arith {
        Arith { exit: Word::atom(Atom::EXIT) }
    }
}

impl Default for Arith {
    fn default() -> Self {
        Self::new()
    }
}

impl Native for Arith {
    #[inline]
    fn run<'a>(&self, heap: &'a Heap, input: Word, out: &'a mut Heap) -> Option<TermRef<'a>> {
        let &[x, y] = tuple(heap, input)?;
        // The common case: two small integers (61 bits), where nothing can
        // overflow an i64.
        if let (Some(x), Some(y)) = (x.as_small(), y.as_small()) {
            if x * 3 >= y + 100 {
                return None;
            }
            out.clear();
            let result = out.int(y * 2 - x / 7);
            return Some(out.view(result));
        }
        // A small integer and a float or a bignum of at most two limbs, read
        // in place; `x * 3` and `x div 7` fit an i64.
        if let Some(x) = x.as_small()
            && let Some(&[header, first, ref rest @ ..]) = cells(heap, y, TAG_BOXED)
        {
            let header = header.to_bits();
            if header == FLOAT_HEADER {
                let y = f64::from_bits(first.to_bits());
                let bound = y + 100.0;
                if !bound.is_finite() || !cmp_i128_f64(i128::from(x * 3), bound).is_lt() {
                    return None;
                }
                let result = y * 2.0 - (x / 7) as f64;
                out.clear();
                let result = out.try_float(result).unwrap_or(self.exit);
                return Some(out.view(result));
            }
            let (kind, limbs) = (header & HEADER_KIND_MASK, header >> HEADER_KIND_BITS);
            if (kind == HEADER_POS_BIG || kind == HEADER_NEG_BIG) && limbs <= 2 {
                let high = if limbs == 2 { rest.first().map_or(0, |w| w.to_bits()) } else { 0 };
                let magnitude = u128::from(high) << 64 | u128::from(first.to_bits());
                if let Ok(magnitude) = i128::try_from(magnitude) {
                    let y = if kind == HEADER_NEG_BIG { -magnitude } else { magnitude };
                    if i128::from(x * 3) >= y.saturating_add(100) {
                        return None;
                    }
                    if let Some(result) =
                        y.checked_mul(2).and_then(|d| d.checked_sub(i128::from(x / 7)))
                    {
                        out.clear();
                        let result = out.int128(result);
                        return Some(out.view(result));
                    }
                }
            }
        }
        let (x, y) = (heap.view(x), heap.view(y));
        out.clear();
        let result = match arith::<i128>(x, y, out) {
            Ok(result) => result,
            Err(Fail::Overflow) => arith::<BigInt>(x, y, out).ok()?,
            Err(Fail::Badarith) => unreachable!("arith turns badarith into an outcome"),
        }?;
        Some(out.view(result.unwrap_or(self.exit)))
    }
}

/// Why arithmetic stopped.
enum Fail {
    /// Erlang's `badarith`.
    Badarith,
    /// The integer type is too small: redo with a larger one.
    Overflow,
}

/// An Erlang number with integers of type `I`.
enum Num<I> {
    Int(I),
    Float(f64),
}

/// The integer operations Erlang arithmetic needs.
trait Int: Sized + Ord {
    fn small(v: i64) -> Self;
    fn from_big(big: Big<'_>) -> Option<Self>;
    fn add(&self, other: &Self) -> Option<Self>;
    fn sub(&self, other: &Self) -> Option<Self>;
    fn mul(&self, other: &Self) -> Option<Self>;
    /// Truncating division; `None` on overflow (the divisor is not zero).
    fn div(&self, other: &Self) -> Option<Self>;
    /// As ERTS converts an integer to a float; `None` if not finite.
    fn to_float(&self) -> Option<f64>;
    fn cmp_float(&self, f: f64) -> Ordering;
    fn build(&self, out: &mut Heap) -> Word;
}

const TWO_64: f64 = 18_446_744_073_709_551_616.0;

impl Int for i128 {
    fn small(v: i64) -> i128 {
        i128::from(v)
    }
    fn from_big(big: Big<'_>) -> Option<i128> {
        big_to_i128(big)
    }
    fn add(&self, other: &i128) -> Option<i128> {
        self.checked_add(*other)
    }
    fn sub(&self, other: &i128) -> Option<i128> {
        self.checked_sub(*other)
    }
    fn mul(&self, other: &i128) -> Option<i128> {
        self.checked_mul(*other)
    }
    fn div(&self, other: &i128) -> Option<i128> {
        self.checked_div(*other)
    }
    fn to_float(&self) -> Option<f64> {
        // ERTS adds 64-bit digits from the most significant, rounding each.
        let magnitude = self.unsigned_abs();
        let d = ((magnitude >> 64) as u64) as f64 * TWO_64 + (magnitude as u64) as f64;
        Some(if *self < 0 { -d } else { d })
    }
    fn cmp_float(&self, f: f64) -> Ordering {
        cmp_i128_f64(*self, f)
    }
    fn build(&self, out: &mut Heap) -> Word {
        out.int128(*self)
    }
}

impl Int for BigInt {
    fn small(v: i64) -> BigInt {
        BigInt::from(v)
    }
    fn from_big(big: Big<'_>) -> Option<BigInt> {
        Some(big.to_bigint())
    }
    fn add(&self, other: &BigInt) -> Option<BigInt> {
        Some(self + other)
    }
    fn sub(&self, other: &BigInt) -> Option<BigInt> {
        Some(self - other)
    }
    fn mul(&self, other: &BigInt) -> Option<BigInt> {
        Some(self * other)
    }
    fn div(&self, other: &BigInt) -> Option<BigInt> {
        Some(self / other)
    }
    fn to_float(&self) -> Option<f64> {
        let (sign, digits) = self.to_u64_digits();
        let mut d = 0.0f64;
        for &digit in digits.iter().rev() {
            d = d * TWO_64 + digit as f64;
            if !d.is_finite() {
                return None;
            }
        }
        Some(if sign == Sign::Minus { -d } else { d })
    }
    fn cmp_float(&self, f: f64) -> Ordering {
        let whole = f.trunc();
        let whole = BigInt::from_f64(whole).expect("Erlang floats are finite");
        self.cmp(&whole).then_with(|| 0.0f64.partial_cmp(&(f - f.trunc())).expect("finite"))
    }
    fn build(&self, out: &mut Heap) -> Word {
        match self.to_i128() {
            Some(v) => out.int128(v),
            None => out.bigint(self),
        }
    }
}

fn num<I: Int>(term: TermRef<'_>) -> Result<Num<I>, Fail> {
    match term.kind() {
        Kind::Small(v) => Ok(Num::Int(I::small(v))),
        Kind::Big(big) => I::from_big(big).map(Num::Int).ok_or(Fail::Overflow),
        Kind::Float(f) => Ok(Num::Float(f)),
        _ => Err(Fail::Badarith),
    }
}

fn float<I: Int>(n: &Num<I>) -> Result<f64, Fail> {
    match n {
        Num::Int(i) => i.to_float().ok_or(Fail::Badarith),
        Num::Float(f) => Ok(*f),
    }
}

/// `+`, `-` or `*`: integers stay integers, anything with a float is a float.
fn op<I: Int>(
    a: Num<I>,
    b: Num<I>,
    int: fn(&I, &I) -> Option<I>,
    flt: fn(f64, f64) -> f64,
) -> Result<Num<I>, Fail> {
    match (&a, &b) {
        (Num::Int(a), Num::Int(b)) => int(a, b).map(Num::Int).ok_or(Fail::Overflow),
        _ => {
            let f = flt(float(&a)?, float(&b)?);
            if f.is_finite() { Ok(Num::Float(f)) } else { Err(Fail::Badarith) }
        }
    }
}

fn lt<I: Int>(a: &Num<I>, b: &Num<I>) -> bool {
    let order = match (a, b) {
        (Num::Int(a), Num::Int(b)) => a.cmp(b),
        (Num::Int(a), Num::Float(b)) => a.cmp_float(*b),
        (Num::Float(a), Num::Int(b)) => b.cmp_float(*a).reverse(),
        (Num::Float(a), Num::Float(b)) => a.partial_cmp(b).expect("Erlang floats are finite"),
    };
    order.is_lt()
}

/// The spec on `{x, y}` with integers `I`: `Ok(None)` no match,
/// `Ok(Some(None))` the body failed (`'EXIT'`), `Ok(Some(Some(w)))` the result.
fn arith<I: Int>(
    x: TermRef<'_>,
    y: TermRef<'_>,
    out: &mut Heap,
) -> Result<Option<Option<Word>>, Fail> {
    let guard = (|| {
        let left = op(num::<I>(x)?, Num::Int(I::small(3)), I::mul, |a, b| a * b)?;
        let right = op(num::<I>(y)?, Num::Int(I::small(100)), I::add, |a, b| a + b)?;
        Ok(lt(&left, &right))
    })();
    match guard {
        Ok(true) => {}
        Ok(false) | Err(Fail::Badarith) => return Ok(None),
        Err(Fail::Overflow) => return Err(Fail::Overflow),
    }
    let body = (|| {
        let double = op(num::<I>(y)?, Num::Int(I::small(2)), I::mul, |a, b| a * b)?;
        let quotient = match num::<I>(x)? {
            Num::Int(x) => x.div(&I::small(7)).ok_or(Fail::Overflow)?,
            Num::Float(_) => return Err(Fail::Badarith),
        };
        op(double, Num::Int(quotient), I::sub, |a, b| a - b)
    })();
    match body {
        Ok(Num::Int(i)) => Ok(Some(Some(i.build(out)))),
        Ok(Num::Float(f)) => Ok(Some(Some(out.float(f)))),
        Err(Fail::Badarith) => Ok(Some(None)),
        Err(Fail::Overflow) => Err(Fail::Overflow),
    }
}
