//! zgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on a 4×2 tile of
//! double-precision complex numbers.
//!
//! * dtype: c64 (interleaved re, im); MR×NR = 4×2 complex.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs` (A: 4-row column panels, B: 2-column
//!   row panels), complex elements; packing has already applied any conjugation.
//! * C storage: prefers columns (unit row stride): each tile column is two 2-complex vector
//!   loads/stores. Any other strides go through a stack tile.
//! * beta == 0: C is written without being read.
//! * Method: for each B element, broadcast its real part and its imaginary part; accumulate
//!   A·b_re and A·b_im separately (every lane of every FMA is useful), and combine once at
//!   the end: re = Σ(a_re·b_re) − Σ(a_im·b_im), im = Σ(a_im·b_re) + Σ(a_re·b_im), by swapping
//!   the pairs of the second sum and one `fmaddsub`.
//! * Register map: 8 accumulators, ymm(j, h, part) for j < 2, h < 2 (2 complex each),
//!   part ∈ {re, im} of b; two ymm for the A column. Per k step: 2 loads, 4 broadcasts,
//!   8 FMAs. NR is 2, not 3: with 3, the 12 accumulators, 2 A vectors and 2 broadcasts
//!   need all 16 ymm registers, the compiler spilled one accumulator through the stack
//!   inside the k loop, and cgemm ran at 27 GFLOPS (24 % of peak).

use std::arch::x86_64::*;

use crate::kernels::GemmUkrArgs;
use crate::types::c64;

const MR: usize = 4;
const NR: usize = 2;

/// Swaps re and im within each complex lane pair.
#[target_feature(enable = "avx2,fma")]
fn swap_pairs(v: __m256d) -> __m256d {
    _mm256_permute_pd::<0b0101>(v)
}

/// z·s for packed complex z and a complex scalar s given as broadcast (re, im).
#[target_feature(enable = "avx2,fma")]
fn mul_scalar(z: __m256d, s_re: __m256d, s_im: __m256d) -> __m256d {
    // even lanes: z_re·s_re − z_im·s_im; odd lanes: z_im·s_re + z_re·s_im.
    _mm256_fmaddsub_pd(z, s_re, _mm256_mul_pd(swap_pairs(z), s_im))
}

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 4×2 complex tiles, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_c64_4x2(args: &GemmUkrArgs<c64, c64>) {
    // SAFETY: the contract gives 4·k readable complex at `a`, k·2 at `b`, and a writable
    // 4×2 tile at `c` with strides rs_c, cs_c (in complex elements); c64 is two f64, so
    // the float views below stay inside those.
    unsafe {
        let mut re = [[_mm256_setzero_pd(); 2]; NR];
        let mut im = [[_mm256_setzero_pd(); 2]; NR];
        let (mut a, mut b) = (args.a.cast::<f64>(), args.b.cast::<f64>());
        for _ in 0..args.k {
            let a0 = _mm256_loadu_pd(a);
            let a1 = _mm256_loadu_pd(a.add(4));
            for j in 0..NR {
                let b_re = _mm256_set1_pd(*b.add(2 * j));
                let b_im = _mm256_set1_pd(*b.add(2 * j + 1));
                re[j][0] = _mm256_fmadd_pd(a0, b_re, re[j][0]);
                re[j][1] = _mm256_fmadd_pd(a1, b_re, re[j][1]);
                im[j][0] = _mm256_fmadd_pd(a0, b_im, im[j][0]);
                im[j][1] = _mm256_fmadd_pd(a1, b_im, im[j][1]);
            }
            a = a.add(2 * MR);
            b = b.add(2 * NR);
        }

        let (alpha_re, alpha_im) = (_mm256_set1_pd(args.alpha.re), _mm256_set1_pd(args.alpha.im));
        let (beta_re, beta_im) = (_mm256_set1_pd(args.beta.re), _mm256_set1_pd(args.beta.im));
        let beta_is_zero = args.beta.re == 0.0 && args.beta.im == 0.0;
        let mut tile = [c64::new(0.0, 0.0); MR * NR];
        let direct = args.rs_c == 1;
        for j in 0..NR {
            for h in 0..2 {
                // The product A·b for 2 rows: re parts of A·b_re minus im parts of A·b_im, …
                let ab = _mm256_fmaddsub_pd(re[j][h], _mm256_set1_pd(1.0), swap_pairs(im[j][h]));
                let mut out = mul_scalar(ab, alpha_re, alpha_im);
                if direct {
                    let p = args
                        .c
                        .offset(j as isize * args.cs_c)
                        .add(2 * h)
                        .cast::<f64>();
                    if !beta_is_zero {
                        out = _mm256_add_pd(out, mul_scalar(_mm256_loadu_pd(p), beta_re, beta_im));
                    }
                    _mm256_storeu_pd(p, out);
                } else {
                    _mm256_storeu_pd(tile.as_mut_ptr().add(j * MR + 2 * h).cast::<f64>(), out);
                }
            }
        }
        if !direct {
            for j in 0..NR {
                for i in 0..MR {
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    let ab = tile[j * MR + i];
                    *p = if beta_is_zero {
                        ab
                    } else {
                        ab + args.beta * *p
                    };
                }
            }
        }
    }
}
