//! Hardware context around brgemm calls: oneDNN's `brgemm::set_hw_context` (load the AMX
//! tile configuration before a run of executes) and `brgemm::release_hw_context` (release
//! it after).
//!
//! Here each execute brackets its own kernel calls with the kernel's per-thread hardware
//! state (`GemmKernel::hw_context`, the same guard the gemm loop nest holds): set before the
//! first kernel call, released after the last, also on an error. That costs one
//! configure/release pair per execute on AMX kernels (nothing elsewhere), and it is what
//! keeps the safe API sound: a configuration left "set" by the caller could have been
//! released in between by any other tile user on the thread (an `oxblis::gemm` call on an
//! AMX configuration releases its own), and a tile instruction without one faults. So
//! [`super::Brgemm::set_hw_context`] and [`release_hw_context`] do nothing, on every kernel;
//! calling them is correct and free, and code shaped like oneDNN's keeps working.

use crate::cntx::GemmKernel;
use crate::types::Element;

/// Nothing to prepare: executes set their kernel's state themselves (module docs).
pub(crate) fn set_for<A: Element, B: Element>(_kernel: &GemmKernel<A, B>) {}

/// oneDNN's `brgemm::release_hw_context`: a no-op here, since every execute releases its
/// kernel's hardware state (AMX tile configuration) before returning. Always safe to call,
/// any number of times.
pub fn release_hw_context() {}
