//! Low-precision gemm against the reference, on every configuration this machine supports
//! (forced), with tiny cache blocks so small sizes cross every block boundary: op(A) and
//! op(B) in {n, t}, storage of C, A, B in {column, row, general, negative strides},
//! alpha/beta classes including 0 (beta = 0 with NaN in C for bf16), sizes around MR, NR and
//! the blocks, 0 and 1, and thread layouts.
//!
//! * bf16 × bf16 → f32: products are exact in f32, so the only rounding is f32 accumulation:
//!   results within f32's bound (`oxblis::check::tolerance`), exact for integer data.
//! * i8 × i8 and u8 × i8 → `I32Acc`: exact, always, on bytes over their whole range (a
//!   kernel mistaking signed for unsigned bytes shows); overflow wraps modulo 2^32 (checked
//!   against i64 arithmetic reduced by hand).

mod harness;

use harness::low_precision::{LpCase, LpElement, Pair, check};

use oxblis::check::{Op, Storage};
use oxblis::{Cntx, GemmKernel, MatMut, MatRef, Rntm, Ways, bf16, gemm};

/// Every supported configuration, as is and with the pair's blocks shrunk to KC = 3 (or two
/// k groups), MC = 2·MR, NC = 2·NR.
fn contexts<A: Pair<B>, B: LpElement<Acc = A::Acc>>() -> Vec<Cntx> {
    harness::contexts_with_tiny_blocks()
        .into_iter()
        .flat_map(|(cntx, _)| {
            let kernel = cntx.kernel::<A, B>();
            let bs = kernel.blocksizes();
            // KC = 3, or two k groups for a kernel with k-grouped (VNNI) panels, so k slices
            // and their zero padding are both exercised.
            let kc = if kernel.k_group() == 1 {
                3
            } else {
                2 * kernel.k_group()
            };
            let tiny = cntx
                .clone()
                .with_blocksizes::<A, B>(kc, 2 * bs.mr, 2 * bs.nr)
                .unwrap();
            [cntx, tiny]
        })
        .collect()
}

#[test]
fn bf16_matches_the_reference_over_the_grid() {
    grid::<bf16, bf16>(&contexts::<bf16, bf16>());
    // skx picks the `vdpbf16ps` kernel where the CPU has AVX512_BF16; the widening kernel it
    // uses otherwise is tested too, planted into the skx context.
    if let Some(skx) = oxblis::supported_contexts()
        .into_iter()
        .find(|c| c.name() == "skx")
    {
        let bs = skx.kernel::<f32, f32>().blocksizes();
        // SAFETY: gemm_b16_32x12 implements the kernel contract for 32×12 tiles with AVX-512
        // F, which the skx configuration (supported here) requires.
        let widening = unsafe {
            GemmKernel::new(
                "skx_b16_32x12",
                oxblis::kernels::skx::gemm_b16_32x12,
                false,
                bs,
            )
        };
        let planted = skx.clone().with_kernel(widening).unwrap();
        let tiny = planted
            .clone()
            .with_blocksizes::<bf16, bf16>(3, 64, 24)
            .unwrap();
        grid::<bf16, bf16>(&[planted, tiny]);
    }
}

#[test]
fn i8_matches_the_reference_exactly_over_the_grid() {
    grid::<i8, i8>(&contexts::<i8, i8>());
}

#[test]
fn u8_times_i8_matches_the_reference_exactly_over_the_grid() {
    grid::<u8, i8>(&contexts::<u8, i8>());
}

fn grid<A: Pair<B>, B: LpElement<Acc = A::Acc>>(contexts: &[Cntx]) {
    let mut seed = 0;
    for cntx in contexts {
        let bs = cntx.kernel::<A, B>().blocksizes();
        let sizes = [0, 1, bs.mr - 1, bs.mr + 1, bs.nr + 1, 2 * bs.mr + 3, 37];
        for op_a in [Op::N, Op::T] {
            for op_b in [Op::N, Op::T] {
                for storage in [
                    [Storage::Col; 3],
                    [Storage::Row; 3],
                    [Storage::Gen; 3],
                    [Storage::Neg, Storage::Row, Storage::Col],
                    [Storage::Col, Storage::Gen, Storage::Row],
                ] {
                    for (alpha, beta) in [(1.0, 0.0), (-0.75, 1.25), (0.0, 2.0), (1.0, 1.0)] {
                        for &m in &sizes {
                            let (n, k) =
                                (sizes[(m + 3) % sizes.len()], sizes[(m + 5) % sizes.len()]);
                            seed += 1;
                            let case = LpCase {
                                m,
                                n,
                                k,
                                op_a,
                                op_b,
                                storage,
                                alpha,
                                beta,
                            };
                            check::<A, B>(cntx, None, &case, seed);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn low_precision_with_threads() {
    threads::<bf16, bf16>();
    threads::<i8, i8>();
    threads::<u8, i8>();
}

fn threads<A: Pair<B>, B: LpElement<Acc = A::Acc>>() {
    let layouts = [
        Ways {
            jc: 2,
            pc: 1,
            ic: 1,
            jr: 1,
            ir: 1,
        },
        Ways {
            jc: 1,
            pc: 2,
            ic: 1,
            jr: 1,
            ir: 1,
        },
        Ways {
            jc: 1,
            pc: 1,
            ic: 2,
            jr: 2,
            ir: 1,
        },
    ];
    let mut seed = 1000;
    for cntx in contexts::<A, B>() {
        for ways in layouts {
            let rntm = Rntm::new().with_ways(ways).unwrap();
            for (m, n, k) in [(1, 1, 1), (40, 33, 20), (64, 9, 70)] {
                seed += 1;
                let case = LpCase {
                    m,
                    n,
                    k,
                    op_a: Op::N,
                    op_b: Op::T,
                    storage: [Storage::Col, Storage::Row, Storage::Col],
                    alpha: 0.5,
                    beta: -1.0,
                };
                check::<A, B>(&cntx, Some(&rntm), &case, seed);
            }
        }
    }
}

#[test]
fn i8_accumulation_wraps_modulo_2_to_the_32() {
    // 127·127·8 = 129 032, times alpha = 2^20: 1.35e11, far past i32; and beta·C wraps too.
    let (m, n, k) = (3, 2, 8);
    let a = vec![127i8; m * k];
    let b = vec![127i8; k * n];
    let alpha = std::num::Wrapping(1 << 20);
    let beta = std::num::Wrapping(3);
    let mut c = vec![std::num::Wrapping(i32::MAX); m * n];
    let av = MatRef::col_major(&a, m, k, m).unwrap();
    let bv = MatRef::col_major(&b, k, n, k).unwrap();
    gemm(
        alpha,
        &av,
        &bv,
        beta,
        &mut MatMut::col_major(&mut c, m, n, m).unwrap(),
    )
    .unwrap();
    let exact = (1i64 << 20) * 127 * 127 * 8 + 3 * i64::from(i32::MAX);
    let want = exact.rem_euclid(1 << 32) as u32 as i32;
    assert!(
        c.iter().all(|&x| x == std::num::Wrapping(want)),
        "{c:?} vs {want}"
    );
}
