//! `skx`: AVX-512 CPUs (Skylake-X, Cascade Lake, Ice Lake, Sapphire Rapids without AMX, Zen
//! 4), chosen by CPU features alone. AVX-512 kernels for f32 and f64; complex dtypes keep
//! the reference kernels until their own kernels land.
//!
//! Blocksizes: KC so an A and a B micropanel stay in the 32 KiB L1 (32×384 + 384×12 floats
//! = 66 KiB streamed, 48 KiB for f64 at KC 256), MC·KC in the 1 MiB L2 (480×384×4 B = 720
//! KiB; 240×256×8 B = 480 KiB), NC·KC in the shared L3. Starting points from BLIS's skx
//! values, checked on the development machine with `cargo bench --bench gemm`
//! (docs/Performance.md).

use crate::cntx::{Blocksizes, Cntx, GemmKernel, ThreadPrefs};
use crate::config::{Features, SubConfig, generic};
use crate::kernels::skx;

/// The `skx` sub-configuration.
pub const SKX: SubConfig = SubConfig {
    name: "skx",
    requires: Features::AVX512F
        .union(Features::AVX512DQ)
        .union(Features::AVX512BW)
        .union(Features::AVX512VL),
    context,
};

fn context() -> Cntx {
    //                         MR  NR   KC   MC    NC
    let s = Blocksizes {
        mr: 32,
        nr: 12,
        kc: 384,
        mc: 480,
        nc: 3072,
    };
    let d = Blocksizes {
        mr: 16,
        nr: 12,
        kc: 256,
        mc: 240,
        nc: 3072,
    };
    // SAFETY: each kernel implements the GemmUkr contract for exactly these MR×NR and needs
    // only AVX-512 F, which this configuration requires.
    let (sgemm, dgemm) = unsafe {
        (
            GemmKernel::new("skx_f32_32x12", skx::gemm_f32_32x12, false, s),
            GemmKernel::new("skx_f64_16x12", skx::gemm_f64_16x12, false, d),
        )
    };
    Cntx {
        sgemm,
        dgemm,
        threads: ThreadPrefs {
            min_work_per_thread: 1 << 19,
        },
        ..generic::reference_context("skx")
    }
}
