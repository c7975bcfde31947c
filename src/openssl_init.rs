//! OpenSSL is initialised when it is first used, not at every start.
//!
//! Why: the store's engine (LadybugDB) links an HTTP client for installing
//! its extensions, whose header holds a static object that calls
//! `OPENSSL_init_ssl` with all error strings before `main`: it reads
//! OpenSSL's configuration file and fills its string tables, about 1.8 ms of
//! every process, for a client diffidx never uses. OpenSSL 3 initialises
//! itself on first use ("no explicit initialisation is required",
//! `OPENSSL_init_ssl(3)`), so the call made before `main` is skipped here and
//! every later one is passed on. The binary is linked with
//! `--wrap=OPENSSL_init_ssl` (`build.rs`): the engine's calls come here, and
//! `__real_OPENSSL_init_ssl` is OpenSSL's own.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

static MAIN_STARTED: AtomicBool = AtomicBool::new(false);

/// Called first thing in `main`: from here on calls are passed on.
pub fn main_started() {
    MAIN_STARTED.store(true, Ordering::SeqCst);
}

extern "C" {
    /// OpenSSL's `int OPENSSL_init_ssl(uint64_t opts, const
    /// OPENSSL_INIT_SETTINGS *settings)`: 1 on success.
    fn __real_OPENSSL_init_ssl(opts: u64, settings: *const c_void) -> c_int;
}

/// What the engine's calls of `OPENSSL_init_ssl` reach.
///
/// # Safety
/// As OpenSSL's: `settings` is null or points to settings OpenSSL made.
#[no_mangle]
pub unsafe extern "C" fn __wrap_OPENSSL_init_ssl(opts: u64, settings: *const c_void) -> c_int {
    if !MAIN_STARTED.load(Ordering::SeqCst) {
        return 1;
    }
    // SAFETY: the caller's arguments, passed on as they came.
    unsafe { __real_OPENSSL_init_ssl(opts, settings) }
}
