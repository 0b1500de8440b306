//! `--broken-kernel-selftest`: proof that the suite's checks can fail. Every configuration
//! gets a dgemm kernel with a typical bug (it skips the last rank-1 update of each
//! micropanel) and loses its sup and gemv kernels, so every dgemm with k > 0 goes through
//! the broken kernel; the run must then report FAIL (tests/testsuite.rs checks it does).

use oxblis::kernels::GemmUkrArgs;
use oxblis::kernels::reference::gemm_ukr;
use oxblis::{Blocksizes, Cntx, GemmKernel};

const MR: usize = 4;
const NR: usize = 4;

/// The reference 4×4 kernel, minus the last k step.
///
/// # Safety
/// The `GemmUkr` contract for 4×4 tiles (what the reference kernel needs; it reads less).
unsafe fn broken_dgemm(args: &GemmUkrArgs<f64, f64>) {
    let shorter = GemmUkrArgs {
        k: args.k.saturating_sub(1),
        alpha: args.alpha,
        a: args.a,
        b: args.b,
        beta: args.beta,
        c: args.c,
        rs_c: args.rs_c,
        cs_c: args.cs_c,
        a_next: args.a_next,
        b_next: args.b_next,
    };
    // SAFETY: the same tile with a shorter k reads a prefix of the same panels.
    unsafe { gemm_ukr::<f64, f64, MR, NR>(&shorter) }
}

/// `cntx` with the broken dgemm kernel.
pub fn plant_broken_dgemm(cntx: Cntx) -> Cntx {
    let bs = Blocksizes {
        mr: MR,
        nr: NR,
        kc: 256,
        mc: 96,
        nc: 4096,
    };
    // SAFETY: broken_dgemm keeps the memory contract of a 4×4 kernel (it computes the
    // wrong values, which is the point) and needs no CPU features.
    let kernel = unsafe { GemmKernel::new("broken_f64_4x4", broken_dgemm, false, bs) };
    cntx.without_sup()
        .with_kernel(kernel)
        .expect("the broken kernel's blocksizes are valid")
}
