//! `generic`: the reference kernels; needs no CPU feature, runs anywhere. Every other
//! configuration starts from `reference_context` and overrides what it has kernels for.

use crate::cntx::{Blocksizes, Cntx, GemmKernel, ThreadPrefs};
use crate::config::{Features, SubConfig};
use crate::kernels::reference;
use crate::types::{Element, GemmPair, Scalar, bf16, c32, c64};

/// The `generic` sub-configuration.
pub const GENERIC: SubConfig = SubConfig {
    name: "generic",
    requires: Features::NONE,
    context: || reference_context("generic"),
    os_check: None,
};

/// A context of reference kernels under the given configuration name.
pub(crate) fn reference_context(name: &'static str) -> Cntx {
    Cntx {
        name,
        //                                                          KC    MC    NC
        sgemm: reference_kernel::<f32, 8, 4>("reference_f32_8x4", 256, 128, 4096),
        dgemm: reference_kernel::<f64, 4, 4>("reference_f64_4x4", 256, 96, 4096),
        cgemm: reference_kernel::<c32, 4, 4>("reference_c32_4x4", 256, 64, 2048),
        zgemm: reference_kernel::<c64, 4, 2>("reference_c64_4x2", 128, 64, 2048),
        bgemm: packed_only_reference_kernel::<bf16, bf16, 8, 4>(
            "reference_b16_8x4",
            256,
            128,
            4096,
        ),
        igemm: packed_only_reference_kernel::<i8, i8, 8, 4>("reference_i8_8x4", 512, 128, 4096),
        ugemm: packed_only_reference_kernel::<u8, i8, 8, 4>("reference_u8i8_8x4", 512, 128, 4096),
        // About 64³ multiply-adds per thread: at reference-kernel speed (~30 GFLOPS) that is
        // ~20 µs, several times what waking a parked worker costs.
        threads: ThreadPrefs {
            min_work_per_thread: 1 << 18,
        },
    }
}

/// The reference kernel for a low-precision pair (bf16 → f32, i8 and u8 × i8 → wrapping
/// i32) at MR×NR. No gemv or sup kernel: every problem of these types takes the packed path.
fn packed_only_reference_kernel<A, B, const MR: usize, const NR: usize>(
    name: &'static str,
    kc: usize,
    mc: usize,
    nc: usize,
) -> GemmKernel<A, B>
where
    A: GemmPair<B>,
    B: Element<Acc = A::Acc>,
{
    let bs = Blocksizes {
        mr: MR,
        nr: NR,
        kc,
        mc,
        nc,
    };
    // SAFETY: portable Rust, instantiated with exactly this entry's MR and NR.
    unsafe { GemmKernel::new(name, reference::gemm_ukr::<A, B, MR, NR>, false, bs) }
}

/// The reference kernel for `T` at MR×NR with the reference gemv kernel; MR and NR come
/// from the same const parameters that instantiate the kernel, so they cannot disagree.
fn reference_kernel<T: Scalar + GemmPair<T>, const MR: usize, const NR: usize>(
    name: &'static str,
    kc: usize,
    mc: usize,
    nc: usize,
) -> GemmKernel<T, T> {
    let kernel = packed_only_reference_kernel::<T, T, MR, NR>(name, kc, mc, nc);
    // SAFETY: the reference gemv kernel is portable Rust (no CPU feature needed).
    unsafe { kernel.with_gemv(reference::gemv_ukr::<T>) }
}
