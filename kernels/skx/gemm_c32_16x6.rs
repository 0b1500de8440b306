//! cgemm microkernel for AVX-512 (skx): C := alpha·Ap·Bp + beta·C on a 16×6 tile of
//! single-precision complex numbers.
//!
//! * dtype: c32 (interleaved re, im); MR×NR = 16×6 complex.
//! * CPU features: AVX-512 F.
//! * Packed layouts: the contract in `kernels/mod.rs` (A: 16-row column panels, B: 6-column
//!   row panels), complex elements; packing has already applied any conjugation.
//! * C storage: prefers columns (unit row stride): each tile column is two 8-complex vector
//!   loads/stores. Any other strides go through a stack tile.
//! * beta == 0: C is written without being read.
//! * Method: for each B element, broadcast its real part and its imaginary part; accumulate
//!   A·b_re and A·b_im separately (every lane of every FMA is useful), and combine once at
//!   the end: re = Σ(a_re·b_re) − Σ(a_im·b_im), im = Σ(a_im·b_re) + Σ(a_re·b_im), by swapping
//!   the pairs of the second sum and one `fmaddsub`.
//! * Register map: 24 accumulators, zmm(j, h, part) for j < 6, h < 2 (8 complex each),
//!   part ∈ {re, im} of b; two zmm for the A column. Per k step: 2 loads, 12 broadcasts,
//!   24 FMAs.

use std::arch::x86_64::*;

use crate::kernels::GemmUkrArgs;
use crate::types::c32;

const MR: usize = 16;
const NR: usize = 6;

/// Swaps re and im within each complex lane pair.
#[target_feature(enable = "avx512f")]
fn swap_pairs(v: __m512) -> __m512 {
    _mm512_permute_ps::<0b1011_0001>(v)
}

/// z·s for packed complex z and a complex scalar s given as broadcast (re, im).
#[target_feature(enable = "avx512f")]
fn mul_scalar(z: __m512, s_re: __m512, s_im: __m512) -> __m512 {
    // even lanes: z_re·s_re − z_im·s_im; odd lanes: z_im·s_re + z_re·s_im.
    _mm512_fmaddsub_ps(z, s_re, _mm512_mul_ps(swap_pairs(z), s_im))
}

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 16×6 complex tiles, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_c32_16x6(args: &GemmUkrArgs<c32, c32>) {
    // SAFETY: the contract gives 16·k readable complex at `a`, k·6 at `b`, and a writable
    // 16×6 tile at `c` with strides rs_c, cs_c (in complex elements); c32 is two f32, so
    // the float views below stay inside those.
    unsafe {
        let mut re = [[_mm512_setzero_ps(); 2]; NR];
        let mut im = [[_mm512_setzero_ps(); 2]; NR];
        let (mut a, mut b) = (args.a.cast::<f32>(), args.b.cast::<f32>());
        for _ in 0..args.k {
            let a0 = _mm512_loadu_ps(a);
            let a1 = _mm512_loadu_ps(a.add(16));
            for j in 0..NR {
                let b_re = _mm512_set1_ps(*b.add(2 * j));
                let b_im = _mm512_set1_ps(*b.add(2 * j + 1));
                re[j][0] = _mm512_fmadd_ps(a0, b_re, re[j][0]);
                re[j][1] = _mm512_fmadd_ps(a1, b_re, re[j][1]);
                im[j][0] = _mm512_fmadd_ps(a0, b_im, im[j][0]);
                im[j][1] = _mm512_fmadd_ps(a1, b_im, im[j][1]);
            }
            a = a.add(2 * MR);
            b = b.add(2 * NR);
        }

        let (alpha_re, alpha_im) = (_mm512_set1_ps(args.alpha.re), _mm512_set1_ps(args.alpha.im));
        let (beta_re, beta_im) = (_mm512_set1_ps(args.beta.re), _mm512_set1_ps(args.beta.im));
        let beta_is_zero = args.beta.re == 0.0 && args.beta.im == 0.0;
        let mut tile = [c32::new(0.0, 0.0); MR * NR];
        let direct = args.rs_c == 1;
        for j in 0..NR {
            for h in 0..2 {
                // The product A·b for 8 rows: re parts of A·b_re minus im parts of A·b_im, …
                let ab = _mm512_fmaddsub_ps(re[j][h], _mm512_set1_ps(1.0), swap_pairs(im[j][h]));
                let mut out = mul_scalar(ab, alpha_re, alpha_im);
                if direct {
                    let p = args
                        .c
                        .offset(j as isize * args.cs_c)
                        .add(8 * h)
                        .cast::<f32>();
                    if !beta_is_zero {
                        out = _mm512_add_ps(out, mul_scalar(_mm512_loadu_ps(p), beta_re, beta_im));
                    }
                    _mm512_storeu_ps(p, out);
                } else {
                    _mm512_storeu_ps(tile.as_mut_ptr().add(j * MR + 8 * h).cast::<f32>(), out);
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
