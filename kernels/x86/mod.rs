//! What the x86 kernel sets share: a SIMD-register vocabulary ([`simd`]) and the kernel bodies
//! written once over it: packed real ([`gemm_real`]), sup real and complex ([`sup_real`],
//! [`sup_complex`]), tall-A real ([`tall_real`]), packed complex ([`gemm_complex`]), gemv for real
//! and complex ([`gemv_real`], [`gemv_complex`]) and the real columns kernel's one-pass form
//! ([`columns_one_pass`]), dots for real ([`dots_real`]), and short k for real ([`short_k_real`]).
//! The kernel files in `kernels/skx/` and `kernels/haswell/` are `#[target_feature]` shells that
//! instantiate a body for one ISA, dtype and tile; their headers state what each instance is.

pub(crate) mod columns_one_pass;
pub(crate) mod dots_real;
pub(crate) mod gemm_complex;
pub(crate) mod gemm_real;
pub(crate) mod gemv_complex;
pub(crate) mod gemv_real;
pub(crate) mod short_k_real;
pub(crate) mod simd;
pub(crate) mod sup_complex;
pub(crate) mod sup_real;
pub(crate) mod tall_real;
