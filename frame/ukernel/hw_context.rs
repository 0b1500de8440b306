//! Hardware context around brgemm calls: on AMX kernels, loading the tile configuration
//! (`ldtilecfg`) before a run of executes and releasing it (`tilerelease`) after, as
//! oneDNN's `brgemm::set_hw_context` / `brgemm::release_hw_context`.
//!
//! No configuration of this build has an AMX kernel yet, so both are no-ops today: calling
//! them is correct and free on every kernel, and code that calls them keeps working when an
//! AMX kernel (with per-thread setup and release hooks on `GemmKernel`) is registered; this
//! file is where those hooks will be called.

use crate::cntx::GemmKernel;
use crate::types::Element;

/// Prepares this thread's hardware state for `kernel` (today: nothing).
pub(crate) fn set_for<A: Element, B: Element>(_kernel: &GemmKernel<A, B>) {}

/// Releases any hardware state a [`super::Brgemm::set_hw_context`] on this thread set up
/// (on AMX kernels: the tile configuration). Call it once after the last execute of a run,
/// before code that may use other AMX state. A no-op on every kernel of this build (none
/// uses AMX), so it is always safe to call, any number of times.
pub fn release_hw_context() {}
