//! The guard functions a match spec may call, and their implementations.
//!
//! This is ERTS's `guard_tab`: the ordinary functions (type tests,
//! arithmetic, comparisons, `element/2`, ...) as opposed to the special forms
//! (`andalso`, `message`, `set_seq_token`, ...) that the checker handles by
//! name. Every engine evaluates them through [`call`], so the interpreter and
//! the JIT cannot disagree on, say, bignum arithmetic: the JIT inlines only
//! the fast paths (small integers, type tags) and calls [`call`] for the rest.
//!
//! # Exactly as ERTS
//!
//! Every function gives what the OTP 27 function gives, fails where it
//! fails, and is checked against OTP itself: `testdata/bif/gen.escript`
//! runs some 45,000 calls through `erlang:match_spec_test/3` and the
//! integration tests compare. The arithmetic, with ERTS's bignum limit and
//! its few surprises (`band` past the limit returns `[]`, bignums convert to
//! floats with double rounding), is explained in `num.rs`.
//!
//! # Adding a function
//!
//! Add a variant to [`Bif`] with its row in [`TABLE`] (name, arity, where it
//! may be called); the exhaustive matches in [`call`], the IR printer and the
//! JIT then point at everything else that needs it. See
//! `docs/adding-a-guard-bif.md`.

mod eval;
mod fast;
mod num;
mod predicates;

use crate::release::{Change, Release};
use crate::term::{Atom, Heap, Word};

pub use eval::call;
pub(crate) use fast::{float_arith, has_fast_path, small_arith, wide_arith};

/// A function from ERTS's `guard_tab`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Bif {
    /// `is_atom/1`
    IsAtom,
    /// `is_float/1`
    IsFloat,
    /// `is_integer/1`
    IsInteger,
    /// `is_list/1`
    IsList,
    /// `is_number/1`
    IsNumber,
    /// `is_pid/1`
    IsPid,
    /// `is_port/1`
    IsPort,
    /// `is_reference/1`
    IsReference,
    /// `is_tuple/1`
    IsTuple,
    /// `is_map/1`
    IsMap,
    /// `is_binary/1`
    IsBinary,
    /// `is_bitstring/1`
    IsBitstring,
    /// `is_boolean/1`
    IsBoolean,
    /// `is_function/1`
    IsFunction1,
    /// `is_function/2`
    IsFunction2,
    /// `is_record/3` (written `{is_record, X, Tag, Size}`)
    IsRecord,
    /// `is_integer/3` (written `{is_integer, X, Low, High}`; OTP 29 on,
    /// [`Change::IsIntegerRange`])
    IsIntegerRange,
    /// `abs/1`
    Abs,
    /// `element/2`
    Element,
    /// `hd/1`
    Hd,
    /// `length/1` (ERTS's non-trapping `db_length_1`)
    Length,
    /// `max/2`
    Max,
    /// `min/2`
    Min,
    /// `node/1`
    Node1,
    /// `node/0`
    Node0,
    /// `round/1`
    Round,
    /// `size/1`
    Size,
    /// `map_size/1`
    MapSize,
    /// `map_get/2`
    MapGet,
    /// `is_map_key/2`
    IsMapKey,
    /// `bit_size/1`
    BitSize,
    /// `byte_size/1`
    ByteSize,
    /// `tuple_size/1`
    TupleSize,
    /// `binary_part/2`
    BinaryPart2,
    /// `binary_part/3`
    BinaryPart3,
    /// `tl/1`
    Tl,
    /// `trunc/1`
    Trunc,
    /// `float/1`
    Float,
    /// `ceil/1`
    Ceil,
    /// `floor/1`
    Floor,
    /// `'+'/1`
    Plus1,
    /// `'-'/1`
    Minus1,
    /// `'+'/2`
    Add,
    /// `'-'/2`
    Sub,
    /// `'*'/2`
    Mul,
    /// `'/'/2` (float division)
    FloatDiv,
    /// `'div'/2`
    IntDiv,
    /// `'rem'/2`
    Rem,
    /// `'band'/2`
    Band,
    /// `'bor'/2`
    Bor,
    /// `'bxor'/2`
    Bxor,
    /// `'bnot'/1`
    Bnot,
    /// `'bsl'/2`
    Bsl,
    /// `'bsr'/2`
    Bsr,
    /// `'>'/2`
    Gt,
    /// `'>='/2`
    Ge,
    /// `'<'/2`
    Lt,
    /// `'=<'/2`
    Le,
    /// `'=:='/2`
    ExactEq,
    /// `'=='/2`
    Eq,
    /// `'=/='/2`
    ExactNe,
    /// `'/='/2`
    Ne,
    /// `'not'/1`
    Not,
    /// `'xor'/2`
    Xor,
    /// `get_tcw/0`: reads the trace control word (trace only).
    GetTcw,
    /// `set_tcw/1`: sets the trace control word (trace bodies only).
    SetTcw,
    /// `set_tcw_fake/1`: what `set_tcw` becomes under `match_spec_test`;
    /// ERTS lets specs call it by name too.
    SetTcwFake,
}

/// Where a function may be called: the `DBIF_*` bits of ERTS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowed {
    /// In a guard of a table spec.
    pub table_guard: bool,
    /// In a body of a table spec.
    pub table_body: bool,
    /// In a guard of a trace spec.
    pub trace_guard: bool,
    /// In a body of a trace spec.
    pub trace_body: bool,
}

const ALL: Allowed =
    Allowed { table_guard: true, table_body: true, trace_guard: true, trace_body: true };
const TRACE_ANY: Allowed =
    Allowed { table_guard: false, table_body: false, trace_guard: true, trace_body: true };
const TRACE_BODY: Allowed =
    Allowed { table_guard: false, table_body: false, trace_guard: false, trace_body: true };

/// One row of the table: the function, its Erlang name and arity, where it
/// may be called.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The function.
    pub bif: Bif,
    /// Its Erlang name.
    pub name: &'static str,
    /// Its arity.
    pub arity: u8,
    /// Where it may be called.
    pub allowed: Allowed,
    /// Does it ask the host (the node's name, the trace control word)?
    /// Engines must then let the host's effects happen in order.
    pub asks_host: bool,
    /// The change that added it, for a function not in every release.
    pub added: Option<Change>,
}

macro_rules! table {
    ($($bif:ident $name:literal / $arity:literal $allowed:ident $($host:ident)? $([$added:ident])?,)*) => {
        /// Every guard function, in [`Bif`] order.
        pub const TABLE: &[Entry] = &[
            $(Entry {
                bif: Bif::$bif,
                name: $name,
                arity: $arity,
                allowed: $allowed,
                asks_host: table!(@host $($host)?),
                added: table!(@added $($added)?),
            },)*
        ];
    };
    (@host HOST) => { true };
    (@host) => { false };
    (@added $change:ident) => { Some(Change::$change) };
    (@added) => { None };
}

table! {
    IsAtom "is_atom"/1 ALL,
    IsFloat "is_float"/1 ALL,
    IsInteger "is_integer"/1 ALL,
    IsList "is_list"/1 ALL,
    IsNumber "is_number"/1 ALL,
    IsPid "is_pid"/1 ALL,
    IsPort "is_port"/1 ALL,
    IsReference "is_reference"/1 ALL,
    IsTuple "is_tuple"/1 ALL,
    IsMap "is_map"/1 ALL,
    IsBinary "is_binary"/1 ALL,
    IsBitstring "is_bitstring"/1 ALL,
    IsBoolean "is_boolean"/1 ALL,
    IsFunction1 "is_function"/1 ALL,
    IsFunction2 "is_function"/2 ALL,
    IsRecord "is_record"/3 ALL,
    IsIntegerRange "is_integer"/3 ALL [IsIntegerRange],
    Abs "abs"/1 ALL,
    Element "element"/2 ALL,
    Hd "hd"/1 ALL,
    Length "length"/1 ALL,
    Max "max"/2 ALL,
    Min "min"/2 ALL,
    Node1 "node"/1 ALL HOST,
    Node0 "node"/0 ALL HOST,
    Round "round"/1 ALL,
    Size "size"/1 ALL,
    MapSize "map_size"/1 ALL,
    MapGet "map_get"/2 ALL,
    IsMapKey "is_map_key"/2 ALL,
    BitSize "bit_size"/1 ALL,
    ByteSize "byte_size"/1 ALL,
    TupleSize "tuple_size"/1 ALL,
    BinaryPart2 "binary_part"/2 ALL,
    BinaryPart3 "binary_part"/3 ALL,
    Tl "tl"/1 ALL,
    Trunc "trunc"/1 ALL,
    Float "float"/1 ALL,
    Ceil "ceil"/1 ALL,
    Floor "floor"/1 ALL,
    Plus1 "+"/1 ALL,
    Minus1 "-"/1 ALL,
    Add "+"/2 ALL,
    Sub "-"/2 ALL,
    Mul "*"/2 ALL,
    FloatDiv "/"/2 ALL,
    IntDiv "div"/2 ALL,
    Rem "rem"/2 ALL,
    Band "band"/2 ALL,
    Bor "bor"/2 ALL,
    Bxor "bxor"/2 ALL,
    Bnot "bnot"/1 ALL,
    Bsl "bsl"/2 ALL,
    Bsr "bsr"/2 ALL,
    Gt ">"/2 ALL,
    Ge ">="/2 ALL,
    Lt "<"/2 ALL,
    Le "=<"/2 ALL,
    ExactEq "=:="/2 ALL,
    Eq "=="/2 ALL,
    ExactNe "=/="/2 ALL,
    Ne "/="/2 ALL,
    Not "not"/1 ALL,
    Xor "xor"/2 ALL,
    GetTcw "get_tcw"/0 TRACE_ANY HOST,
    SetTcw "set_tcw"/1 TRACE_BODY HOST,
    SetTcwFake "set_tcw_fake"/1 TRACE_BODY HOST,
}

impl Bif {
    /// The function called `name` with `arity` arguments in every release,
    /// if there is one.
    pub fn lookup(name: Atom, arity: usize) -> Option<Bif> {
        Bif::lookup_in(name, arity, Release::Otp27).filter(|bif| bif.entry().added.is_none())
    }

    /// The function called `name` with `arity` arguments in `release`, if
    /// there is one.
    pub fn lookup_in(name: Atom, arity: usize, release: Release) -> Option<Bif> {
        let name = name.name();
        TABLE
            .iter()
            .filter(|e| e.added.is_none_or(|change| release.has(change)))
            .find(|e| e.name == name && usize::from(e.arity) == arity)
            .map(|e| e.bif)
    }

    /// Its row in [`TABLE`].
    pub fn entry(self) -> &'static Entry {
        // The table lists every variant in declaration order (checked by a test).
        &TABLE[self as usize]
    }

    /// Its Erlang name.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// Its arity.
    pub fn arity(self) -> usize {
        usize::from(self.entry().arity)
    }

    /// Does it ask the host ([`Entry::asks_host`])?
    pub fn asks_host(self) -> bool {
        self.entry().asks_host
    }

    /// Is this a comparison (`>`, `=:=`, ...)? Comparisons never fail.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Bif::Gt | Bif::Ge | Bif::Lt | Bif::Le | Bif::ExactEq | Bif::Eq | Bif::ExactNe | Bif::Ne
        )
    }

    /// Is this a one-argument type test (`is_atom/1`, ...)? Those never fail.
    pub fn is_type_test(self) -> bool {
        matches!(
            self,
            Bif::IsAtom
                | Bif::IsFloat
                | Bif::IsInteger
                | Bif::IsList
                | Bif::IsNumber
                | Bif::IsPid
                | Bif::IsPort
                | Bif::IsReference
                | Bif::IsTuple
                | Bif::IsMap
                | Bif::IsBinary
                | Bif::IsBitstring
                | Bif::IsBoolean
                | Bif::IsFunction1
        )
    }
}

/// Why a guard function failed. In a guard any failure fails the clause; in
/// a body it makes the call's value `'EXIT'`. The reason is kept for
/// diagnostics only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BifError {
    /// `badarg`: an argument of the wrong type or out of range.
    #[error("badarg")]
    Badarg,
    /// `badarith`: arithmetic on a non-number, division by zero, a float
    /// overflow.
    #[error("badarith")]
    Badarith,
    /// `{badmap, M}`: `map_get/2` or `is_map_key/2` on a non-map.
    #[error("badmap")]
    Badmap,
    /// `{badkey, K}`: `map_get/2` of a missing key.
    #[error("badkey")]
    Badkey,
    /// `system_limit`: a result too large to represent (e.g. `1 bsl (1 bsl 64)`).
    #[error("system_limit")]
    SystemLimit,
}

/// The result of a guard function before it is placed in a heap: either a
/// word that already exists (an argument, a part of one, an immediate) or a
/// new number or binary for the caller to build.
///
/// [`call`] keeps to one form per value, so results compare with `==`:
/// integers in the small range are always `Word`s, `Int` is only for real
/// bignums, and `Float` is always finite.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An existing term (valid wherever the arguments were).
    Word(Word),
    /// A new integer outside the small-word range.
    Int(num_bigint::BigInt),
    /// A new integer outside the small-word range that fits 128 bits (the
    /// common bignum, kept off the allocator).
    Int128(i128),
    /// A new float (always finite).
    Float(f64),
    /// A new binary with these bytes.
    Binary(Vec<u8>),
}

impl Value {
    /// The value as a word of `heap`: a `Word` as it is, anything new built
    /// there. `None` only for a `Float` that is not finite, which [`call`]
    /// never returns.
    pub fn build(&self, heap: &mut Heap) -> Option<Word> {
        match self {
            Value::Word(w) => Some(*w),
            Value::Int(i) => Some(heap.bigint(i)),
            Value::Int128(i) => Some(heap.int128(*i)),
            Value::Float(f) => heap.try_float(*f),
            Value::Binary(bytes) => Some(heap.binary(bytes)),
        }
    }
}

/// What a function needs from the world besides its arguments.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The local node's name: what `node/0` returns, and `node/1` for a
    /// pid, port or reference of this node.
    pub node: Atom,
    /// The current trace control word (what `get_tcw/0` returns and
    /// `set_tcw/1` replaces; the engine stores the new value itself).
    pub tcw: u32,
    /// Whose answers to give where releases differ.
    pub release: Release,
}

impl Default for Env {
    fn default() -> Env {
        Env { node: Atom::NONODE, tcw: 0, release: Release::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, entry) in TABLE.iter().enumerate() {
            assert_eq!(entry.bif as usize, i, "{}/{}", entry.name, entry.arity);
        }
    }

    #[test]
    fn lookup_by_name_and_arity() {
        assert_eq!(Bif::lookup(Atom::new("is_function"), 2), Some(Bif::IsFunction2));
        assert_eq!(Bif::lookup(Atom::new("node"), 0), Some(Bif::Node0));
        assert_eq!(Bif::lookup(Atom::new("is_atom"), 0), None);
        assert_eq!(Bif::lookup(Atom::new("foo"), 1), None);
    }
}
