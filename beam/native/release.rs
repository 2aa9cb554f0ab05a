//! The OTP release of the VM the library runs in: its answers are that
//! release's (docs/releases.md). Set once, when the VM loads the library,
//! from the load info `msc_tracer` passes: `erlang:system_info(otp_release)`
//! as a binary.

use std::sync::OnceLock;

use msc::{Config, Release};
use rustler::{Binary, Env, Term};

static RELEASE: OnceLock<Release> = OnceLock::new();

/// The release whose answers the library gives.
pub fn release() -> Release {
    RELEASE.get().copied().unwrap_or_default()
}

/// ERTS's configuration in that release.
pub fn config() -> Config {
    Config::default().release(release())
}

/// The library's load hook: reads the VM's release; refuses to load on
/// load info that is not one (`erlang:load_nif/2` then says so).
pub fn load(_env: Env<'_>, info: Term<'_>) -> bool {
    let Ok(text) = Binary::from_term(info) else { return false };
    let Some(major) = std::str::from_utf8(text.as_slice()).ok().and_then(|t| t.parse().ok()) else {
        return false;
    };
    // A second load (an upgrade) is the same VM.
    let _ = RELEASE.set(Release::for_vm(major));
    true
}
