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

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{
    Cntx, Element, GemmKernel, GemmPair, MatMut, MatRef, Rntm, Scalar, Ways, bf16, gemm,
    gemm_with_cntx,
};

struct LpCase {
    m: usize,
    n: usize,
    k: usize,
    op_a: Op,
    op_b: Op,
    storage: [Storage; 3],
    alpha: f64,
    beta: f64,
}

/// The low-precision element types, with the test data each gets.
trait LpElement: Element {
    /// Random data: the class's values for bf16; every value of the type for the bytes.
    fn fill(rng: &mut Rng, values: Values, buf: &mut [Self]);
}
impl LpElement for bf16 {
    fn fill(rng: &mut Rng, values: Values, buf: &mut [Self]) {
        rng.fill(values, buf);
    }
}
impl LpElement for i8 {
    fn fill(rng: &mut Rng, _: Values, buf: &mut [Self]) {
        buf.iter_mut().for_each(|x| *x = rng.next_u64() as i8);
    }
}
impl LpElement for u8 {
    fn fill(rng: &mut Rng, _: Values, buf: &mut [Self]) {
        buf.iter_mut().for_each(|x| *x = rng.next_u64() as u8);
    }
}

/// The pairs tested here.
trait Pair<B: LpElement>: LpElement + GemmPair<B> {}
impl<A: LpElement + GemmPair<B>, B: LpElement<Acc = A::Acc>> Pair<B> for A {}

fn check<A: Pair<B>, B: LpElement<Acc = A::Acc>>(
    cntx: &Cntx,
    rntm: Option<&Rntm>,
    case: &LpCase,
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let exact_type = <A::Acc as Scalar>::UNIT_ROUNDOFF == 0.0;
    let values = if seed.is_multiple_of(2) && !exact_type {
        Values::Uniform
    } else {
        Values::SmallIntegers
    };
    let [st_c, st_a, st_b] = case.storage;
    let (ar, ac) = case.op_a.stored_shape(case.m, case.k);
    let (br, bc) = case.op_b.stored_shape(case.k, case.n);
    let mut a = TestMatrix::<A>::random(&mut rng, values, ar, ac, st_a);
    A::fill(&mut rng, values, &mut a.buf);
    let mut b = TestMatrix::<B>::random(&mut rng, values, br, bc, st_b);
    B::fill(&mut rng, values, &mut b.buf);
    let mut c = TestMatrix::<A::Acc>::random(&mut rng, values, case.m, case.n, st_c);
    let (alpha, beta) = (
        <A::Acc as Element>::from_parts(case.alpha, 0.0),
        <A::Acc as Element>::from_parts(case.beta, 0.0),
    );
    if beta.is_zero() {
        // NaN for float C (integer C cannot hold one: a large value instead).
        let poison = <A::Acc as Element>::from_parts(f64::NAN, 0.0);
        let poison = if exact_type {
            <A::Acc as Element>::from_parts(1e9, 0.0)
        } else {
            poison
        };
        for j in 0..case.n {
            for i in 0..case.m {
                let idx = c.index(i, j);
                c.buf[idx] = poison;
            }
        }
    }
    let original = c.buf.clone();
    let mut want = c.clone();
    let av = case.op_a.apply(a.view()).scaled(alpha);
    let bv = case.op_b.apply(b.view());
    gemm_with_cntx(&av, &bv, &mut c.view_mut().with_beta(beta), cntx, rntm).unwrap();
    let magnitude = gemm_reference(&av, &bv, &mut want.view_mut().with_beta(beta));
    let cmp = compare(&c, &want, &original, &magnitude, case.k);
    let what = format!(
        "{} {}{}gemm_{}{} {}×{}×{} storage {:?} alpha {} beta {} values {values:?}",
        cntx.name(),
        A::LETTER,
        B::LETTER,
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
    if values == Values::SmallIntegers || exact_type {
        // Integers in [-4, 4]: products and sums are exact in f32 at these sizes (and
        // integer types are exact whatever the data).
        let exact = (0..case.n)
            .all(|j| (0..case.m).all(|i| c.buf[c.index(i, j)] == want.buf[want.index(i, j)]));
        assert!(exact, "{what}: integer data must be exact");
    }
}

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
