//! Sandboxes: alternative gemm implementations, one folder each, compiled only with their
//! cargo feature `sandbox-<name>` (BLIS's sandbox idea, in Rust; `docs/Sandboxes.md`).
//!
//! With a sandbox enabled, every checked gemm call (the Rust API, the C ABI, the testsuite)
//! is offered to it first, through [`offer`]; it either computes the call or declines it, and
//! a declined call runs the native implementation (`frame/l3/`). With none enabled, [`offer`]
//! declines everything and compiles away.
//!
//! The rules: a sandbox lives in `sandbox/<name>/`, exposes one entry point,
//! `gemm(cntx, a, b, c, rntm) -> Sandboxed`, and nothing else public; it may use any of the
//! framework's crate-internal helpers (packing, buffers, the thread pool, the context's
//! kernels, `Rntm`); it receives arguments already checked (shapes, aliasing) and must keep
//! BLAS semantics (beta = 0 never reads C, and so on) for what it accepts.
//!
//! * `ref99/`: the Goto algorithm written as plainly as possible, one thread, with the
//!   framework's packing and the configuration's microkernel.
//! * `gemmlike/`: a self-contained, threaded gemm in the style of BLIS's gemmlike sandbox:
//!   its own packing, loops and thread partitioning, in two files.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cntx::Cntx;
use crate::error::Result;
use crate::rntm::Rntm;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

#[cfg(all(feature = "sandbox-ref99", feature = "sandbox-gemmlike"))]
compile_error!(
    "cargo features `sandbox-ref99` and `sandbox-gemmlike` are both enabled: a build routes \
     gemm through at most one sandbox; enable one of them"
);

#[cfg(feature = "sandbox-gemmlike")]
mod gemmlike;
#[cfg(feature = "sandbox-ref99")]
mod ref99;

/// What a sandbox did with a call.
#[allow(dead_code)] // without a sandbox, nothing is ever Done
pub(crate) enum Sandboxed {
    /// It computed the call (or failed to, without touching C).
    Done(Result<()>),
    /// It leaves the call to the native implementation.
    Declined,
}

/// The enabled sandbox, by name.
pub(crate) const ACTIVE: Option<&str> = if cfg!(feature = "sandbox-ref99") {
    Some("ref99")
} else if cfg!(feature = "sandbox-gemmlike") {
    Some("gemmlike")
} else {
    None
};

/// Calls the enabled sandbox has computed, for the runtime report and tests.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// How many calls the enabled sandbox has computed in this process (0 without one).
pub(crate) fn calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

/// Offers a checked call to the enabled sandbox: `Some(result)` if it computed it, `None`
/// if the native implementation must.
#[allow(unused_variables)]
pub(crate) fn offer<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
) -> Option<Result<()>> {
    #[cfg(feature = "sandbox-ref99")]
    let outcome = ref99::gemm(cntx, a, b, c, rntm);
    #[cfg(feature = "sandbox-gemmlike")]
    let outcome = gemmlike::gemm(cntx, a, b, c, rntm);
    #[cfg(not(any(feature = "sandbox-ref99", feature = "sandbox-gemmlike")))]
    let outcome = Sandboxed::Declined;
    match outcome {
        Sandboxed::Done(result) => {
            CALLS.fetch_add(1, Ordering::Relaxed);
            Some(result)
        }
        Sandboxed::Declined => None,
    }
}
