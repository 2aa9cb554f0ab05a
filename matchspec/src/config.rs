//! [`Config`]: the knobs and explicit limits of compiling and running specs.

use crate::release::{Change, Release};

/// Options and limits for compiling and running match specs.
///
/// Every limit turns into a typed error, never a crash: a spec nested too
/// deeply is rejected with ERTS's `system_limit` message, an integer result
/// too large fails like ERTS's `system_limit`.
///
/// ```
/// use matchspec::Config;
/// let config = Config::default().max_nesting(100).fake_destructive(true);
/// assert_eq!(config.get_max_nesting(), 100);
/// ```
///
/// The [`Release`] decides whose answers are given, and the default limits
/// that follow from it:
///
/// ```
/// use matchspec::{Config, Release};
/// let config = Config::default().release(Release::Otp29);
/// assert_eq!(config.get_max_nesting(), 4255);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub(crate) release: Release,
    /// `None`: the release's own limit.
    pub(crate) max_nesting: Option<u32>,
    pub(crate) fake_destructive: bool,
    pub(crate) backtrace_depth: u32,
    pub(crate) renumber_constants: bool,
}

/// ERTS's nesting limit with its default 128-kiloword scheduler stack, in
/// the default release: a guard or body with function calls nested this
/// deep compiles, one level more fails with `system_limit` (measured on OTP
/// 29.1.2; see [`Config::max_nesting`] for other constructs and
/// [`max_nesting_of`] for other releases).
///
/// ```
/// use matchspec::{DEFAULT_MAX_NESTING, Release, max_nesting_of};
/// assert_eq!(DEFAULT_MAX_NESTING, max_nesting_of(Release::default()));
/// ```
pub const DEFAULT_MAX_NESTING: u32 = max_nesting_of(Release::Otp29);

/// ERTS's nesting limit in nested function calls in `release`, measured
/// (`testdata/otp/nesting.terms` of each release): 4,559 in OTP 27, 4,255 in
/// OTP 29, whose frames are larger ([`Change::DeeperCallFrames`]).
pub const fn max_nesting_of(release: Release) -> u32 {
    match release {
        Release::Otp27 => 4559,
        Release::Otp29 => 4255,
    }
}

/// ERTS's default `backtrace_depth` (what `{current_stacktrace}` returns at
/// most).
pub const DEFAULT_BACKTRACE_DEPTH: u32 = 8;

impl Default for Config {
    fn default() -> Config {
        Config {
            release: Release::default(),
            max_nesting: None,
            fake_destructive: false,
            backtrace_depth: DEFAULT_BACKTRACE_DEPTH,
            renumber_constants: true,
        }
    }
}

impl Config {
    /// A configuration with the defaults.
    pub fn new() -> Config {
        Config::default()
    }

    /// Give the answers of `release` (default: [`Release::default`]): what
    /// the checker accepts, what functions return, and the default
    /// nesting limit. See [`Change`] for every difference.
    pub fn release(mut self, release: Release) -> Config {
        self.release = release;
        self
    }

    /// The release whose answers are given.
    pub fn get_release(&self) -> Release {
        self.release
    }

    /// How the configured release reads text (its number syntax).
    pub fn syntax(&self) -> crate::syntax::Syntax {
        crate::syntax::Syntax::of(self.release)
    }

    /// Does the configured release answer as `change` says?
    pub(crate) fn has(&self, change: Change) -> bool {
        self.release.has(change)
    }

    /// How deeply guard and body expressions may nest before compiling
    /// fails with `system_limit` ("Excessive nesting; system limit reached
    /// near: ...").
    ///
    /// ERTS has no fixed depth: it stops when its C stack runs low, so the
    /// depth depends on what nests. The checker models its frame sizes:
    /// with the limit set to `n` function calls (the unit), `n` nested calls
    /// or list cells compile, about `7n/6` nested tuple constructions do, and
    /// about `0.35n` nested maps (in OTP 29, whose call frames are larger,
    /// about `5n/4` tuples and `0.37n` maps). The default,
    /// [`max_nesting_of`] the release, reproduces that release's limits
    /// exactly. Heads and `{const, T}` are never limited.
    pub fn max_nesting(mut self, calls: u32) -> Config {
        self.max_nesting = Some(calls);
        self
    }

    /// Compile `set_seq_token` and `set_tcw` to their non-mutating fake
    /// forms, as `erlang:match_spec_test/3` does (they then return the
    /// current value instead of changing it). Off by default.
    pub fn fake_destructive(mut self, yes: bool) -> Config {
        self.fake_destructive = yes;
        self
    }

    /// Most frames `{current_stacktrace}` returns (ERTS's `backtrace_depth`,
    /// default 8); `{current_stacktrace, N}` is clamped to it.
    pub fn backtrace_depth(mut self, depth: u32) -> Config {
        self.backtrace_depth = depth;
        self
    }

    /// Copy ERTS's quirk Q1 (on by default, as OTP 27 does it): when a head
    /// uses a variable numbered 25 or more, ERTS renumbers every `'$N'`
    /// atom of the spec densely, including atoms inside `{const, T}`
    /// literals, so `[{{'$30'}, [], [{const, '$30'}]}]` returns `'$0'`.
    /// Turned off, constants keep their atoms (`'$30'`); nothing else
    /// changes.
    ///
    /// ```
    /// use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, spec::Kind, term::Term};
    ///
    /// let spec = "[{{'$30'}, [], [{const, '$30'}]}]";
    /// let input = Term::parse("{1}").unwrap();
    /// let mut scratch = Scratch::new();
    /// for (renumber, expected) in [(true, "'$0'"), (false, "'$30'")] {
    ///     let config = Config::default().renumber_constants(renumber);
    ///     let compiled = CompiledSpec::compile(spec, Kind::Table, &config).unwrap();
    ///     let outcome = compiled.run(input.as_ref(), &mut scratch, &mut TestHost::default()).unwrap();
    ///     assert_eq!(outcome.result().unwrap().to_string(), expected);
    /// }
    /// ```
    pub fn renumber_constants(mut self, yes: bool) -> Config {
        self.renumber_constants = yes;
        self
    }

    /// Is quirk Q1 copied?
    pub fn get_renumber_constants(&self) -> bool {
        self.renumber_constants
    }

    /// The nesting limit, in nested function calls.
    pub fn get_max_nesting(&self) -> u32 {
        self.max_nesting.unwrap_or(max_nesting_of(self.release))
    }

    /// Are destructive trace functions faked?
    pub fn get_fake_destructive(&self) -> bool {
        self.fake_destructive
    }

    /// The backtrace depth.
    pub fn get_backtrace_depth(&self) -> u32 {
        self.backtrace_depth
    }
}
