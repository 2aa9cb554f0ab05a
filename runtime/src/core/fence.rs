//! Asymmetric fences: a breakpoint hit orders its pin store before its
//! read of the generation number with a compiler fence alone, and a
//! committer makes every thread of the process execute a full fence at
//! once, between advancing the number and reading the pins (Linux's
//! expedited private `membarrier`, the scheme of liburcu's `memb` flavour
//! and folly's `asymmetricHeavyBarrier`). A full fence on every hit costs
//! it about 5 ns; a commit is rare and pays a system call instead.
//!
//! Where the system cannot (not Linux, a kernel without `membarrier`, a
//! sandbox that refuses it), [`asymmetric`] says so once, and hits fence
//! themselves as before.

/// Can committers fence every thread of the process? Asked once per
/// process; the answer never changes.
pub(crate) fn asymmetric() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(os::register)
}

/// Makes every running thread of the process execute a full memory fence
/// before this returns. Only for a process where [`asymmetric`] holds.
pub(crate) fn heavy() {
    os::heavy();
}

#[cfg(target_os = "linux")]
mod os {
    use rustix::thread::{MembarrierCommand, membarrier, membarrier_query};

    pub(super) fn register() -> bool {
        membarrier_query().contains_command(MembarrierCommand::PrivateExpedited)
            && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
    }

    pub(super) fn heavy() {
        // Registered, so the command cannot fail: a failure would leave
        // readers unfenced, which no answer could repair.
        membarrier(MembarrierCommand::PrivateExpedited)
            .expect("an expedited membarrier after registering");
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn heavy() {
        unreachable!("no asymmetric fences without membarrier")
    }
}
