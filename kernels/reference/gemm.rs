//! Reference gemm microkernel: C := alpha·Ap·Bp + beta·C on one MR×NR tile.
//!
//! * dtypes: A and B of any [`Element`] types sharing an accumulator, C in it: f32, f64,
//!   c32, c64 (all the same type), bf16 × bf16 → f32 and i8 × i8 → wrapping i32 (elements
//!   widened exactly).
//! * MR×NR: const parameters; the `generic` configuration picks them per dtype.
//! * CPU features: none (portable Rust; the compiler may vectorize it for the baseline).
//! * Packed layouts: the contract in `kernels/mod.rs` (A column-major MR-panels, B row-major
//!   NR-panels). C: any strides, no preference.
//! * beta == 0: C is written without being read.
//! * No prefetching; `a_next`/`b_next` are ignored.

use crate::kernels::GemmUkrArgs;
use crate::types::{Element, Scalar};

/// The reference microkernel for an MR×NR tile.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract, with this MR and NR.
pub unsafe fn gemm_ukr<A, B, const MR: usize, const NR: usize>(args: &GemmUkrArgs<A, B>)
where
    A: Element,
    B: Element<Acc = A::Acc>,
{
    let mut ab = [[<A::Acc as Element>::zero(); NR]; MR];
    for p in 0..args.k {
        // SAFETY: the contract gives MR*k elements at `a` and k*NR at `b`.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(args.a.add(p * MR), MR),
                std::slice::from_raw_parts(args.b.add(p * NR), NR),
            )
        };
        for (row, &ai) in ab.iter_mut().zip(a) {
            for (acc, &bj) in row.iter_mut().zip(b) {
                *acc = *acc + ai.to_acc() * bj.to_acc();
            }
        }
    }
    for (i, row) in ab.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            // SAFETY: (i, j) is inside the MR×NR tile the contract makes writable.
            let c = unsafe {
                args.c
                    .offset(i as isize * args.rs_c + j as isize * args.cs_c)
            };
            let scaled = args.alpha * v;
            // SAFETY: as above; C is read only when beta != 0, as the contract allows.
            unsafe {
                *c = if args.beta.is_zero() {
                    scaled
                } else {
                    scaled + args.beta * *c
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::GemmUkrArgs;

    #[test]
    fn computes_one_tile_and_ignores_nan_when_beta_is_zero() {
        const MR: usize = 3;
        const NR: usize = 2;
        let k = 4;
        // A is 3×4 with a[i][p] = i + p; B is 4×2 with b[p][j] = p - j.
        let a: Vec<f64> = (0..k)
            .flat_map(|p| (0..MR).map(move |i| (i + p) as f64))
            .collect();
        let b: Vec<f64> = (0..k)
            .flat_map(|p| (0..NR).map(move |j| p as f64 - j as f64))
            .collect();
        let mut c = vec![f64::NAN; MR * NR];
        let args = GemmUkrArgs {
            k,
            alpha: 2.0,
            a: a.as_ptr(),
            b: b.as_ptr(),
            beta: 0.0,
            c: c.as_mut_ptr(),
            rs_c: NR as isize,
            cs_c: 1,
            a_next: a.as_ptr(),
            b_next: b.as_ptr(),
        };
        // SAFETY: buffers sized for MR×k, k×NR and an MR×NR row-major C.
        unsafe { gemm_ukr::<f64, f64, MR, NR>(&args) };
        for i in 0..MR {
            for j in 0..NR {
                let want: f64 = (0..k)
                    .map(|p| ((i + p) as f64) * (p as f64 - j as f64))
                    .sum();
                assert_eq!(c[i * NR + j], 2.0 * want);
            }
        }
    }
}
