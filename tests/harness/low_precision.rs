//! The low-precision check shared by `tests/low_precision.rs` and `tests/amx_model.rs`: one
//! case through oxblis and through the reference, bf16 within f32's bound (exact on integer
//! data), the integer pairs exactly, on bytes over their whole range.

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{Cntx, Element, GemmPair, Rntm, Scalar, bf16, gemm_with_cntx};

/// One low-precision gemm case.
pub struct LpCase {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub op_a: Op,
    pub op_b: Op,
    pub storage: [Storage; 3],
    pub alpha: f64,
    pub beta: f64,
}

/// The low-precision element types, with the test data each gets.
pub trait LpElement: Element {
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
pub trait Pair<B: LpElement>: LpElement + GemmPair<B> {}
impl<A: LpElement + GemmPair<B>, B: LpElement<Acc = A::Acc>> Pair<B> for A {}

pub fn check<A: Pair<B>, B: LpElement<Acc = A::Acc>>(
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
        "{} {}{}gemm_{}{} {}×{}×{} storage {:?} alpha {} beta {} values {values:?} threading {:?}",
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
        case.beta,
        rntm.map(|r| r.threading()),
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
