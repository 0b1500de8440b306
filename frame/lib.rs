//! # oxblis
//!
//! A multithreaded, BLAS-like gemm framework in the spirit of BLIS: a Goto-style loop nest
//! (pack B, pack A, macrokernel, microkernel), per-ISA microkernels chosen at run time from
//! CPU features, and an immutable per-configuration context.
//!
//! ```
//! use oxblis::{gemm_ex, MatMut, MatRef};
//! // C (2×2) := A (2×3, row-major) · Bᵀ where B is 2×3 row-major.
//! let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let b = [1.0f32, 0.0, 1.0, 0.0, 1.0, 0.0];
//! let mut c = [f32::NAN; 4]; // beta defaults to 0: C is overwritten, never read
//! let a = MatRef::row_major(&a, 2, 3, 3)?;
//! let b = MatRef::row_major(&b, 2, 3, 3)?;
//! gemm_ex(&a, &b.t(), &mut MatMut::row_major(&mut c, 2, 2, 2)?, None)?;
//! assert_eq!(c, [4.0, 2.0, 10.0, 5.0]);
//! # Ok::<(), oxblis::Error>(())
//! ```
//!
//! Where things are: the loop nest is `frame/l3/gemm.rs`, packing `frame/packm.rs`, kernels
//! `kernels/<set>/`, configurations `config/<name>.rs` with `config/registry.rs`. The
//! microkernel contract is `docs/KernelsHowTo.md`; configurations and CPU dispatch are
//! `docs/ConfigurationHowTo.md`. The ukernel (brgemm) API for hand-written loop nests is
//! [`ukernel`], documented in `docs/Brgemm.md`.

#[path = "../config/mod.rs"]
pub mod config;
#[path = "../kernels/mod.rs"]
pub mod kernels;
#[path = "../sandbox/mod.rs"]
mod sandbox;

mod api;
mod args;
mod blas;
pub mod check;
pub mod cntx;
mod error;
mod gks;
mod l3;
mod packbuf;
mod packm;
mod pool;
mod prefetch;
mod report;
mod rntm;
mod thread;
pub mod types;
pub mod ukernel;
mod view;

pub use api::{gemm, gemm_ex, gemm_with_cntx};
pub use cntx::{
    Blocksizes, Cntx, GemmKernel, HwContext, PackAOnly, PackBRows, SupKernel, SupLimits,
    TallKernel, TallLimits, ThreadPrefs, TransposedRemainder, TtTransposed,
};
pub use error::{Error, ErrorKind, Result};
pub use gks::{context, context_named, runtime_report, supported_contexts};
pub use report::{ConfigStatus, KernelStatus, RuntimeReport};
pub use rntm::{MAX_THREADS, Rntm, Threading, Ways};
pub use thread::defaults::{set_num_threads, set_ways, thread_defaults, thread_env_warnings};
pub use types::{Element, GemmPair, I32Acc, Scalar, bf16, c32, c64};
pub use view::{MatMut, MatRef};

// The Rust examples in the README and docs/ are compiled and run as doctests, so the pages
// cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
#[cfg(doctest)]
#[doc = include_str!("../docs/KernelsHowTo.md")]
struct KernelsHowToExamples;
#[cfg(doctest)]
#[doc = include_str!("../docs/ConfigurationHowTo.md")]
struct ConfigurationHowToExamples;
#[cfg(doctest)]
#[doc = include_str!("../docs/Multithreading.md")]
struct MultithreadingExamples;
#[cfg(doctest)]
#[doc = include_str!("../docs/Brgemm.md")]
struct BrgemmExamples;
