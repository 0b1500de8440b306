//! bf16 × bf16 → f32 gemm against the reference, on every configuration this machine
//! supports (forced), with tiny cache blocks so small sizes cross every block boundary: op(A)
//! and op(B) in {n, t}, storage of C, A, B in {column, row, general, negative strides},
//! alpha/beta classes including 0 (beta = 0 with NaN in C), sizes around MR, NR and the
//! blocks, 0 and 1, and thread layouts. bf16 products are exact in f32, so the only rounding
//! is f32 accumulation: results must be within f32's bound (`oxblis::check::tolerance`).

mod harness;

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{Cntx, Rntm, Ways, bf16, gemm_with_cntx};

struct BCase {
    m: usize,
    n: usize,
    k: usize,
    op_a: Op,
    op_b: Op,
    storage: [Storage; 3],
    alpha: f32,
    beta: f32,
}

fn check(cntx: &Cntx, rntm: Option<&Rntm>, case: &BCase, seed: u64) {
    let mut rng = Rng::new(seed);
    let values = if seed.is_multiple_of(2) {
        Values::Uniform
    } else {
        Values::SmallIntegers
    };
    let [st_c, st_a, st_b] = case.storage;
    let (ar, ac) = case.op_a.stored_shape(case.m, case.k);
    let (br, bc) = case.op_b.stored_shape(case.k, case.n);
    let a = TestMatrix::<bf16>::random(&mut rng, values, ar, ac, st_a);
    let b = TestMatrix::<bf16>::random(&mut rng, values, br, bc, st_b);
    let mut c = TestMatrix::<f32>::random(&mut rng, values, case.m, case.n, st_c);
    if case.beta == 0.0 {
        for j in 0..case.n {
            for i in 0..case.m {
                let idx = c.index(i, j);
                c.buf[idx] = f32::NAN;
            }
        }
    }
    let original = c.buf.clone();
    let mut want = c.clone();
    let av = case.op_a.apply(a.view()).scaled(case.alpha);
    let bv = case.op_b.apply(b.view());
    gemm_with_cntx(&av, &bv, &mut c.view_mut().with_beta(case.beta), cntx, rntm).unwrap();
    let magnitude = gemm_reference(&av, &bv, &mut want.view_mut().with_beta(case.beta));
    let cmp = compare(&c, &want, &original, &magnitude, case.k);
    let what = format!(
        "{} bgemm_{}{} {}×{}×{} storage {:?} alpha {} beta {} values {values:?}",
        cntx.name(),
        case.op_a.letter(),
        case.op_b.letter(),
        case.m,
        case.n,
        case.k,
        case.storage,
        case.alpha,
        case.beta
    );
    assert_eq!(cmp.wrote_outside, None, "{what}: wrote outside C");
    assert!(cmp.residual <= 1.0, "{what}: residual {}", cmp.residual);
    if values == Values::SmallIntegers {
        // Integers in [-4, 4]: products and sums are exact in f32 at these sizes.
        let exact = (0..case.n)
            .all(|j| (0..case.m).all(|i| c.buf[c.index(i, j)] == want.buf[want.index(i, j)]));
        assert!(exact, "{what}: integer data must be exact");
    }
}

/// Every supported configuration, as is and with bf16 blocks shrunk to KC = 3, MC = 2·MR,
/// NC = 2·NR.
fn contexts() -> Vec<Cntx> {
    harness::contexts_with_tiny_blocks()
        .into_iter()
        .flat_map(|(cntx, _)| {
            let bs = cntx.kernel::<bf16, bf16>().blocksizes();
            let tiny = cntx
                .clone()
                .with_blocksizes::<bf16, bf16>(3, 2 * bs.mr, 2 * bs.nr)
                .unwrap();
            [cntx, tiny]
        })
        .collect()
}

#[test]
fn bf16_matches_the_reference_over_the_grid() {
    let mut seed = 0;
    for cntx in contexts() {
        let bs = cntx.kernel::<bf16, bf16>().blocksizes();
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
                            let case = BCase {
                                m,
                                n,
                                k,
                                op_a,
                                op_b,
                                storage,
                                alpha,
                                beta,
                            };
                            check(&cntx, None, &case, seed);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn bf16_with_threads() {
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
    for cntx in contexts() {
        for ways in layouts {
            let rntm = Rntm::new().with_ways(ways).unwrap();
            for (m, n, k) in [(1, 1, 1), (40, 33, 20), (64, 9, 70)] {
                seed += 1;
                let case = BCase {
                    m,
                    n,
                    k,
                    op_a: Op::N,
                    op_b: Op::T,
                    storage: [Storage::Col, Storage::Row, Storage::Col],
                    alpha: 0.5,
                    beta: -1.0,
                };
                check(&cntx, Some(&rntm), &case, seed);
            }
        }
    }
}
