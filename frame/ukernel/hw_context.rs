//! Hardware context around brgemm calls: oneDNN's `brgemm::set_hw_context` (load the AMX
//! tile configuration before a run of executes) and `brgemm::release_hw_context` (release
//! it after).
//!
//! Every execute brackets its kernel calls with the kernel's per-thread hardware state
//! (`GemmKernel::enter_hw_context`, the guard the gemm loop nest holds too), so an execute is
//! correct with or without these calls. [`super::Brgemm::set_hw_context`] makes the state
//! *stay* set on the calling thread (AMX: one `ldtilecfg` for a run of executes instead of a
//! configure/release pair each); executes and `oxblis::gemm` calls with the same kernel state
//! then leave it alone, and calls with different state (another kernel) put it back when
//! they finish. [`release_hw_context`] releases it. On kernels without hardware state (all
//! but the AMX ones) both do nothing.

use crate::cntx::GemmKernel;
use crate::types::Element;

/// Keeps `kernel`'s hardware state set on this thread until [`release_hw_context`].
pub(crate) fn set_for<A: Element, B: Element>(kernel: &GemmKernel<A, B>) {
    kernel.hold_hw_context();
}

/// oneDNN's `brgemm::release_hw_context`: releases the hardware state (AMX tile
/// configuration) a [`super::Brgemm::set_hw_context`] left set on this thread. Nothing
/// happens if none is set; safe to call any number of times.
pub fn release_hw_context() {
    crate::cntx::release_held_hw_context();
}
