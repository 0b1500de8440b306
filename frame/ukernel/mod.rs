//! The ukernel API: batch-reduce gemm ("brgemm") objects for people who write their own loop
//! nests, after oneDNN's ukernel API with the updates of seed 002 (an exception-free mode and
//! runtime leading dimensions). The contract, with drawings and examples, is
//! `docs/Brgemm.md`.
//!
//! One [`Brgemm`] computes, for an M×N block of C and a batch of `batch` pairs of blocks
//! A_i (M×K) and B_i (K×N) found at offsets from two base pointers,
//!
//! ```text
//!     C := post_ops( [C +] Σ_i A_i · B_i )        (C in A's accumulator type)
//! ```
//!
//! **Everything is row-major** (oneDNN's convention): A_i(r, p) is at `a[off_a + r*lda + p]`,
//! B_i(p, j) at `b[off_b + p*ldb + j]`, C(r, j) at `c[r*ldc + j]`; offsets and leading
//! dimensions count elements, not bytes.
//!
//! Who does what:
//!
//! * `brgemm.rs`: the object (shape, leading dimensions fixed or runtime, add-C, post-ops,
//!   `finalize`, scratchpad size, the safe and the raw `execute`).
//! * `transform.rs`: [`Transform`], which packs a B once into the layout the kernel reads.
//! * `layout.rs`: the packed layouts (panel sizes, k groups, packing through
//!   `frame/packm.rs`); the only file that asks a kernel how it groups k.
//! * `bounds.rs`: the safe tier's checks of offsets and leading dimensions.
//! * `post_ops.rs`: scale, bias, ReLU.
//! * `scratchpad.rs`: the aligned scratch buffer.
//! * `hw_context.rs`: `set_hw_context` / `release_hw_context`: keep the kernel's hardware
//!   state (AMX tile configuration) set across executes; without them each execute sets and
//!   releases it itself.
//!
//! Callers: user code; nothing inside oxblis's gemm uses this module. It runs the
//! configuration's packed microkernel (`kernels/mod.rs`), one thread, no allocation in
//! `execute`.

mod bounds;
mod brgemm;
mod hw_context;
mod layout;
mod post_ops;
mod scratchpad;
mod transform;

pub use brgemm::{ActualLds, Brgemm, BrgemmB, Dims};
pub use hw_context::release_hw_context;
pub use post_ops::PostOps;
pub use scratchpad::Scratchpad;
pub use transform::Transform;

use crate::cntx::{Cntx, GemmKernel};
use crate::types::{Element, bf16};

/// The element types the ukernel API knows by name: what [`pack_type`] is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// [`bf16`] (accumulates in f32).
    Bf16,
    /// `i8` (accumulates in [`crate::I32Acc`]).
    I8,
    /// `u8`, the A operand of u8 × i8 → i32 (accumulates in [`crate::I32Acc`]).
    U8,
}

/// The element types a [`Brgemm`] or [`Transform`] can be instantiated with. Sealed; each
/// implementor names its [`DataType`].
pub trait BrgemmElement: Element + sealed::Sealed {
    /// This type's name in the runtime queries.
    const DATA_TYPE: DataType;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for super::bf16 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
}

impl BrgemmElement for f32 {
    const DATA_TYPE: DataType = DataType::F32;
}
impl BrgemmElement for f64 {
    const DATA_TYPE: DataType = DataType::F64;
}
impl BrgemmElement for bf16 {
    const DATA_TYPE: DataType = DataType::Bf16;
}
impl BrgemmElement for i8 {
    const DATA_TYPE: DataType = DataType::I8;
}
impl BrgemmElement for u8 {
    const DATA_TYPE: DataType = DataType::U8;
}

/// How the kernel that would run wants B, the answer of [`pack_type`] (oneDNN's
/// `pack_type`, with seed 002's `NoPack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PackType {
    /// The ukernel API cannot be used for this request here: fall back to something else
    /// (`oxblis::gemm`, your own loops).
    Undef,
    /// A plain row-major B (`ldb` ≥ N) is the layout to pass; a [`Transform`] is optional (it
    /// saves the per-call copy of B into panels).
    NoPack,
    /// B stored transposed (N×K row-major). Never answered by [`pack_type`] today (no kernel
    /// reads Bᵀ); accepted as the *input* layout of a [`Transform`].
    Trans,
    /// The kernel reads B with consecutive k values interleaved (the VNNI layout: 32 bits of
    /// k per column, 2 bf16 or 4 i8): pack B once with a [`Transform`] and execute with
    /// [`BrgemmB::Packed`]. A plain B is still accepted, at the cost of packing it on every
    /// call.
    Pack32,
}

/// A leading dimension given at construction: fixed now, or supplied at every execute
/// ([`ActualLds`]), seed 002's `DNNL_RUNTIME_DIM_VAL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ld {
    /// This leading dimension, for every execute.
    Fixed(usize),
    /// Given at execute time.
    Runtime,
}

/// How B has to be given for the pair `a` × `b` on `cntx`: [`PackType::Undef`] when there is
/// no brgemm for it here (the caller falls back), else from the kernel that would run.
///
/// ```
/// use oxblis::ukernel::{pack_type, DataType, PackType};
/// let cntx = oxblis::context()?;
/// assert_ne!(pack_type(cntx, DataType::F32, DataType::F32), PackType::Undef);
/// assert_eq!(pack_type(cntx, DataType::F32, DataType::Bf16), PackType::Undef); // no such pair
/// # Ok::<(), oxblis::Error>(())
/// ```
pub fn pack_type(cntx: &Cntx, a: DataType, b: DataType) -> PackType {
    use DataType::*;
    match (a, b) {
        (F32, F32) => pack_type_of(cntx.kernel::<f32, f32>()),
        (F64, F64) => pack_type_of(cntx.kernel::<f64, f64>()),
        (Bf16, Bf16) => pack_type_of(cntx.kernel::<bf16, bf16>()),
        (I8, I8) => pack_type_of(cntx.kernel::<i8, i8>()),
        (U8, I8) => pack_type_of(cntx.kernel::<u8, i8>()),
        _ => PackType::Undef,
    }
}

/// The answer for a kernel that exists: whether its B panels interleave k.
pub(crate) fn pack_type_of<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> PackType {
    if layout::b_k_group(kernel) > 1 {
        PackType::Pack32
    } else {
        PackType::NoPack
    }
}
