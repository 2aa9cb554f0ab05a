//! [`Release`]: which OTP release's answers to give, and [`Change`], the one
//! table of everything msc answers differently between releases.
//!
//! Every release-dependent decision in the workspace asks
//! [`Release::has`] about one [`Change`]; nothing compares releases
//! directly. `docs/releases.md` lists the same rows, each with the case that
//! shows it (a test keeps the two in step).

use std::fmt;
use std::str::FromStr;

/// An OTP release whose match-spec answers msc gives.
///
/// ```
/// use matchspec::{Change, Release};
/// assert!(!Release::Otp27.has(Change::PrefixHeads));
/// assert!(Release::Otp29.has(Change::PrefixHeads));
/// assert_eq!("29".parse::<Release>(), Ok(Release::Otp29));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Release {
    /// OTP 27.3 (erts 15.2): the first release msc was exact against.
    Otp27,
    /// OTP 29.1 (erts 17.1), the default: the newest release msc knows.
    #[default]
    Otp29,
}

impl Release {
    /// Every release, oldest first.
    pub const ALL: [Release; 2] = [Release::Otp27, Release::Otp29];

    /// Does this release answer as `change` says (is it at or after the
    /// release that made the change)?
    pub fn has(self, change: Change) -> bool {
        self >= change.since()
    }

    /// The major version, as `erlang:system_info(otp_release)` says it.
    pub fn major(self) -> u32 {
        match self {
            Release::Otp27 => 27,
            Release::Otp29 => 29,
        }
    }

    /// The release of major version `major`, if msc knows it.
    pub fn from_major(major: u32) -> Option<Release> {
        Release::ALL.into_iter().find(|r| r.major() == major)
    }

    /// The release whose answers a VM of OTP `major` gets: the newest known
    /// one not newer than it, or the oldest for an older VM. OTP 25 and 26
    /// get OTP 27's answers, OTP 28 too (it has some of OTP 29's changes,
    /// which msc does not tell apart), OTP 30 OTP 29's.
    ///
    /// ```
    /// use matchspec::Release;
    /// assert_eq!(Release::for_vm(25), Release::Otp27);
    /// assert_eq!(Release::for_vm(28), Release::Otp27);
    /// assert_eq!(Release::for_vm(29), Release::Otp29);
    /// assert_eq!(Release::for_vm(30), Release::Otp29);
    /// ```
    pub fn for_vm(major: u32) -> Release {
        Release::ALL.into_iter().rev().find(|r| r.major() <= major).unwrap_or(Release::ALL[0])
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OTP {}", self.major())
    }
}

/// A release name that is not one msc knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRelease(pub String);

impl fmt::Display for UnknownRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = Release::ALL.iter().map(|r| r.major().to_string()).collect();
        write!(f, "unknown OTP release {:?} (known: {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownRelease {}

impl FromStr for Release {
    type Err = UnknownRelease;

    /// `27`, `29`, also written `OTP 29`, `otp29` or `29.1.2`.
    fn from_str(text: &str) -> Result<Release, UnknownRelease> {
        let digits = text.trim().trim_start_matches(['O', 'T', 'P', 'o', 't', 'p']).trim_start();
        let major = digits.split('.').next().unwrap_or("");
        major
            .parse()
            .ok()
            .and_then(Release::from_major)
            .ok_or_else(|| UnknownRelease(text.to_owned()))
    }
}

/// One difference between releases that msc reproduces: the table.
///
/// Each variant's documentation names the OTP ticket (or says there is
/// none) and the case that shows it; [`Change::since`] says which release
/// first answers the new way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    /// OTP-20017: a trace, send or receive head may be a list ending in
    /// `'_'`, `[A | '_']`, which matches one argument or more (before, "is
    /// not a proper list"). Other improper tails are still rejected.
    PrefixHeads,
    /// OTP-19809: the guard function `is_integer/3`
    /// (`{is_integer, X, Lo, Hi}`); a bound that is not an integer is
    /// `badarg`. ms_transform does not translate it.
    IsIntegerRange,
    /// No ticket: `is_record/3` with an atom as the size is `false` (it was
    /// `badarg`); a float or bignum size is still `badarg`.
    IsRecordAtomSize,
    /// No ticket: ERTS's compiler costs 240 stack bytes a level for calls,
    /// list cells and the boolean forms (224 before), so "Excessive
    /// nesting" comes at 4,255 nested calls instead of 4,559. Tuples and
    /// maps cost what they did.
    DeeperCallFrames,
    /// OTP-20317: a bignum converted to a float (by `float/1` or mixed
    /// arithmetic) is correctly rounded; before, ERTS rounded at every
    /// 64-bit digit and could be one ulp off, or overflow just below
    /// `2^1024`.
    RoundedBignumFloats,
    /// OTP-20208: `bxor` with a result over the bignum size limit fails
    /// with `system_limit` (before, it returned `[]`; `band` still does).
    BxorSizeLimit,
    /// No ticket: erts 17 orders the maps of over 32 keys differently.
    /// ERTS's internal hash (`erts_map_hash`, which files a large map's
    /// keys) mixes in one more type tag after tuples, so binaries,
    /// bitstrings, floats, bignums, maps, references and funs hash
    /// differently (small integers, atoms, `[]`, lists and tuples as
    /// before); and 22 atoms joined the boot atom table and two moved, so
    /// most boot atoms (from index 66 on) have a new index, which is both
    /// their hash and their order as a small map's keys (`message` went
    /// from 408 to 418). A map of over 32 keys is walked, printed
    /// and written by `term_to_binary` in the new order: in a trace body,
    /// `#{{message,1} => 1, ..., {message,40} => 40}` sends 17 in OTP 27
    /// and 21 in OTP 29 (`testdata/otp/otp29/bodies.terms`).
    Erts17MapHash,
    /// OTP-19452 (EEP 75, `erl_scan` of stdlib 7): numbers are read the
    /// new way. Based floats (`16#1.8` is `1.5`, `2#1.1#e2` is `6.0`) and
    /// a number running into a name character is an error: `1e5`, `1_`,
    /// `16#ffz`, `1.5a` (before, a number and an atom or variable, so
    /// `4div 2` was an expression).
    NumberSyntax,
    /// No ticket describes it (the nearest is OTP-19811, which reworked
    /// `trace:info/3` on functions so that it no longer blocks every
    /// scheduler): `trace:info(S, {M, F, A}, Item)` and
    /// `erlang:trace_info({M, F, A}, Item)` check `Item` first, so an item
    /// that is not one of `traced`, `match_spec`, `meta`,
    /// `meta_match_spec`, `call_count`, `call_time`, `call_memory` and
    /// `all` is `{error, badarg}` for every function. Before, a function
    /// the session did not trace answered `{Item, false}` and a missing
    /// one `{Item, undefined}`, whatever `Item` was. Case:
    /// `{info, s1, {m, untraced, 0}, flags}` in
    /// `testdata/trace/core-trace_info_table.scenario`: 27
    /// `{flags,false}`, 29 `{error,badarg}`.
    TraceInfoItemBadarg,
    /// No ticket describes it (the nearest is OTP-19811, as for
    /// [`Change::TraceInfoItemBadarg`]): `meta` asked of a function with a
    /// breakpoint in the session but no meta trace is `{meta, false}`
    /// (before, `{meta, []}`). A meta tracer that has been removed is
    /// still `{meta, []}`. Case: `{info, s1, {m, global, 0}, meta}` in
    /// `testdata/trace/core-trace_info_table.scenario`: 27 `{meta,[]}`,
    /// 29 `{meta,false}`.
    TraceInfoMetaFalse,
    /// OTP-19271 (OTP 28): `trace:system/3` sets a session's system
    /// monitoring (`long_message_queue`, `large_heap`, `long_gc`, ...),
    /// whose `{monitor, Pid, Event, Info}` messages go to the session's
    /// tracer. Before, the function does not exist (`undef`). Case:
    /// `{system, s1, long_message_queue, {1, 3}}` in
    /// `testdata/trace/system-long_message_queue.scenario`: 27
    /// `{error,undef}`, 29 `ok` and the monitor messages.
    TraceSystem,
    /// OTP-19840 (OTP 28.2): a BIF's call trace is each session's own.
    /// Before, turning any pattern on a BIF off in one session (even one
    /// that set none) stopped its calls reaching every session's tracer,
    /// though `trace:info/3` still said it was traced, until some session
    /// set a pattern on it again. Case: `global_off` in
    /// `testdata/trace/bif_sessions/`: 27 `{global_off,0,0,global,false}`,
    /// 29 `{global_off,1,0,global,false}`.
    BifTracePerSession,
}

impl Change {
    /// Every change, in the order of `docs/releases.md`.
    pub const ALL: [Change; 12] = [
        Change::PrefixHeads,
        Change::IsIntegerRange,
        Change::IsRecordAtomSize,
        Change::DeeperCallFrames,
        Change::RoundedBignumFloats,
        Change::BxorSizeLimit,
        Change::Erts17MapHash,
        Change::NumberSyntax,
        Change::TraceInfoItemBadarg,
        Change::TraceInfoMetaFalse,
        Change::TraceSystem,
        Change::BifTracePerSession,
    ];

    /// The first release that answers the new way.
    pub fn since(self) -> Release {
        match self {
            Change::PrefixHeads
            | Change::IsIntegerRange
            | Change::IsRecordAtomSize
            | Change::DeeperCallFrames
            | Change::RoundedBignumFloats
            | Change::BxorSizeLimit
            | Change::Erts17MapHash
            | Change::NumberSyntax
            | Change::TraceInfoItemBadarg
            | Change::TraceInfoMetaFalse
            | Change::TraceSystem
            | Change::BifTracePerSession => Release::Otp29,
        }
    }

    /// Its name in `docs/releases.md`.
    pub fn name(self) -> &'static str {
        match self {
            Change::PrefixHeads => "PrefixHeads",
            Change::IsIntegerRange => "IsIntegerRange",
            Change::IsRecordAtomSize => "IsRecordAtomSize",
            Change::DeeperCallFrames => "DeeperCallFrames",
            Change::RoundedBignumFloats => "RoundedBignumFloats",
            Change::BxorSizeLimit => "BxorSizeLimit",
            Change::Erts17MapHash => "Erts17MapHash",
            Change::NumberSyntax => "NumberSyntax",
            Change::TraceInfoItemBadarg => "TraceInfoItemBadarg",
            Change::TraceInfoMetaFalse => "TraceInfoMetaFalse",
            Change::TraceSystem => "TraceSystem",
            Change::BifTracePerSession => "BifTracePerSession",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_in_every_spelling() {
        for text in ["27", "OTP 27", "otp27", "27.3.4"] {
            assert_eq!(text.parse(), Ok(Release::Otp27), "{text}");
        }
        assert_eq!("OTP29".parse(), Ok(Release::Otp29));
        let err = "28".parse::<Release>().unwrap_err();
        assert_eq!(err.to_string(), "unknown OTP release \"28\" (known: 27, 29)");
        assert!("".parse::<Release>().is_err());
    }

    #[test]
    fn a_change_holds_from_its_release_on() {
        for change in Change::ALL {
            assert!(!Release::Otp27.has(change), "{change:?}");
            assert!(Release::Otp29.has(change), "{change:?}");
        }
    }
}
