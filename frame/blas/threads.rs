//! Thread control for C callers: the global default that BLAS/CBLAS calls use (otherwise
//! read once from `BLIS_NUM_THREADS` and friends, `docs/Multithreading.md`).

use std::ffi::c_int;

use crate::rntm::Threading;
use crate::thread::defaults::{set_num_threads, thread_defaults};

/// Sets the number of threads BLAS and CBLAS calls may use from now on (the same global
/// default as [`crate::set_num_threads`]). Returns 0, or -1 (changing nothing) when `n` is
/// below 1 or above [`crate::MAX_THREADS`].
#[unsafe(no_mangle)]
pub extern "C" fn oxblis_set_num_threads(n: c_int) -> c_int {
    match usize::try_from(n).map(set_num_threads) {
        Ok(Ok(())) => 0,
        _ => -1,
    }
}

/// The number of threads BLAS and CBLAS calls may use: the global default's total (with
/// explicit ways per loop, their product).
#[unsafe(no_mangle)]
pub extern "C" fn oxblis_get_num_threads() -> c_int {
    let total = match thread_defaults() {
        Threading::Total(t) => t,
        Threading::Ways(w) => w.total(),
        Threading::Default => 1,
    };
    c_int::try_from(total).unwrap_or(c_int::MAX)
}
