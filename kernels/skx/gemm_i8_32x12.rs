//! int8 microkernels for AVX-512 VNNI (Cascade Lake and later; `skx` registers them when the
//! CPU has VNNI): C := alpha·Ap·Bp + beta·C on a 32×12 tile of wrapping i32 from packed byte
//! panels, for i8 × i8 ([`gemm_i8_32x12`]) and u8 × i8 ([`gemm_u8i8_32x12`]).
//!
//! * dtypes: A i8 or u8, B i8, C, alpha, beta [`I32Acc`] (i32 arithmetic modulo 2^32).
//! * MR×NR = 32×12. CPU features: AVX-512 F, BW and VNNI.
//! * Packed layout: **k groups of 4** (`GemmKernel::with_k_group(4)`): per group of four k
//!   values, A holds 32 rows × 4 bytes (`a[q·128 + i·4 + r]`) and B 12 columns × 4 bytes
//!   (`b[q·48 + j·4 + r]`); k is padded with zeros to a multiple of 4.
//! * The instruction: `vpdpbusd` adds, in each 32-bit lane, four products of an *unsigned*
//!   byte by a signed byte. u8 × i8 is exactly that, with A's vectors as the unsigned
//!   operand. For i8 × i8, A stays signed (and becomes the signed operand); each B quad is broadcast and made unsigned by
//!   adding 128 (`xor 0x80`), so a lane accumulates Σ a·(b + 128) = Σ a·b + 128·Σ a. The
//!   second term is the same for every column: one more `vpdpbusd` per row vector per group
//!   (bytes of 128 against A) accumulates it, and the epilogue subtracts it. All of it wraps
//!   modulo 2^32, so the result is Σ a·b modulo 2^32 exactly.
//! * Per group of 4 k: 2 loads of A (64 bytes each), 12 four-byte broadcasts of B with an xor,
//!   24 + 2 `vpdpbusd`: 32·12·4 = 1536 multiply-adds in about 26 cycles on one port.
//! * C: columns are vector loads/stores when C's row stride is 1, elements otherwise.
//!   beta == 0: C is not read.

use std::arch::x86_64::*;

use crate::kernels::GemmUkrArgs;
use crate::types::{Element, I32Acc};

const MR: usize = 32;
const NR: usize = 12;

/// The i8 × i8 kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×12 tiles in the k-grouped layout above
/// (`args.k` a multiple of 4), on a CPU with AVX-512 F, BW and VNNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn gemm_i8_32x12(args: &GemmUkrArgs<i8, i8>) {
    // SAFETY: the same contract; the features are enabled here.
    unsafe { kernel::<i8, false>(args) }
}

/// The u8 × i8 kernel. See the module docs.
///
/// # Safety
/// As [`gemm_i8_32x12`], with A's panels of u8.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn gemm_u8i8_32x12(args: &GemmUkrArgs<u8, i8>) {
    // SAFETY: the same contract; the features are enabled here.
    unsafe { kernel::<u8, true>(args) }
}

/// Both kernels: `A_UNSIGNED` says A's bytes are u8 (multiplied as they are) rather than i8
/// (B biased to unsigned and the bias's term subtracted).
#[inline(always)]
unsafe fn kernel<A: Element<Acc = I32Acc>, const A_UNSIGNED: bool>(args: &GemmUkrArgs<A, i8>) {
    debug_assert!(args.k.is_multiple_of(4));
    // SAFETY: the contract gives 32·k bytes at `a`, k·12 at `b` (k a multiple of 4) and a
    // writable 32×12 tile of i32 at `c` with strides rs_c, cs_c; every access below is inside
    // them; the callers enable the target features, present by their callers' promise.
    unsafe {
        let bias = _mm512_set1_epi32(0x8080_8080_u32 as i32);
        let mut acc = [[_mm512_setzero_si512(); 2]; NR];
        let mut correction = [_mm512_setzero_si512(); 2];
        let (mut a, mut b) = (args.a.cast::<u8>(), args.b);
        for _ in 0..args.k / 4 {
            let a0 = _mm512_loadu_si512(a.cast());
            let a1 = _mm512_loadu_si512(a.add(64).cast());
            if A_UNSIGNED {
                for (j, acc_j) in acc.iter_mut().enumerate() {
                    let bj = _mm512_set1_epi32(b.add(4 * j).cast::<i32>().read_unaligned());
                    acc_j[0] = _mm512_dpbusd_epi32(acc_j[0], a0, bj);
                    acc_j[1] = _mm512_dpbusd_epi32(acc_j[1], a1, bj);
                }
            } else {
                correction[0] = _mm512_dpbusd_epi32(correction[0], bias, a0);
                correction[1] = _mm512_dpbusd_epi32(correction[1], bias, a1);
                for (j, acc_j) in acc.iter_mut().enumerate() {
                    let quad = b.add(4 * j).cast::<i32>().read_unaligned();
                    let bj = _mm512_xor_si512(_mm512_set1_epi32(quad), bias);
                    acc_j[0] = _mm512_dpbusd_epi32(acc_j[0], bj, a0);
                    acc_j[1] = _mm512_dpbusd_epi32(acc_j[1], bj, a1);
                }
            }
            a = a.add(4 * MR);
            b = b.add(4 * NR);
        }

        let alpha = _mm512_set1_epi32(args.alpha.0);
        let beta = _mm512_set1_epi32(args.beta.0);
        let beta_is_zero = args.beta.0 == 0;
        let c = args.c.cast::<i32>();
        if args.rs_c == 1 {
            for (j, acc_j) in acc.iter().enumerate() {
                let col = c.offset(j as isize * args.cs_c);
                for (h, &v) in acc_j.iter().enumerate() {
                    let p = col.add(16 * h);
                    let ab = _mm512_mullo_epi32(alpha, _mm512_sub_epi32(v, correction[h]));
                    let out = if beta_is_zero {
                        ab
                    } else {
                        _mm512_add_epi32(ab, _mm512_mullo_epi32(beta, _mm512_loadu_si512(p.cast())))
                    };
                    _mm512_storeu_si512(p.cast(), out);
                }
            }
        } else {
            // General strides: through a column-major stack tile, then element by element.
            let mut tile = [0i32; MR * NR];
            for (j, acc_j) in acc.iter().enumerate() {
                for (h, &v) in acc_j.iter().enumerate() {
                    let ab = _mm512_mullo_epi32(alpha, _mm512_sub_epi32(v, correction[h]));
                    _mm512_storeu_si512(tile.as_mut_ptr().add(j * MR + 16 * h).cast(), ab);
                }
            }
            for j in 0..NR {
                for i in 0..MR {
                    let p = args
                        .c
                        .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                    let ab = std::num::Wrapping(tile[j * MR + i]);
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

/// The type C is in, for the header's claim (a compile-time check that `I32Acc` is the
/// 32-bit wrapping integer the stores above write).
const _: () = assert!(size_of::<I32Acc>() == 4);
