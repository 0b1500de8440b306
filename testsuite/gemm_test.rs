//! One gemm test: random operands in the requested storage, the product through
//! `gemm_with_cntx`, and a check of the result.
//!
//! The check: up to [`EXACT_LIMIT`] multiply-adds, against the plain reference
//! (`oxblis::check::gemm_reference`) element by element, each within its rounding-error
//! bound; above it, a random-vector probe (as BLIS's testsuite does), which costs O(mk + kn +
//! mn) instead of O(mnk): y = C·x is compared with alpha·op(A)·(op(B)·x) + beta·C_old·x
//! within the bound those products carry. Either way, every element of the buffers around C
//! must be unchanged. See `docs/Testsuite.md` for what the residual means.

use std::time::Instant;

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{Cntx, Element, GemmPair, MatRef, Rntm, Scalar, gemm_with_cntx};

use crate::input::ScalarClass;

/// Problems up to this many multiply-adds are checked against the full reference.
pub const EXACT_LIMIT: usize = 1 << 21;

/// Residuals up to this are PASS: within the worst-case rounding bound.
pub const PASS_LIMIT: f64 = 1.0;
/// Up to this MARGINAL; beyond, FAIL.
pub const MARGINAL_LIMIT: f64 = 10.0;

/// What to run.
#[derive(Clone, Debug)]
pub struct GemmCase {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub op_a: Op,
    pub op_b: Op,
    /// Storage of C, A, B.
    pub storage: [Storage; 3],
    pub alpha: ScalarClass,
    pub beta: ScalarClass,
    pub values: Values,
    pub repeats: usize,
    pub seed: u64,
}

impl GemmCase {
    /// The BLIS-style name, e.g. `sgemm_nt_ccr`.
    pub fn name<T: Element>(&self) -> String {
        let [c, a, b] = self.storage;
        format!(
            "{}gemm_{}{}_{}{}{}",
            T::LETTER,
            self.op_a.letter(),
            self.op_b.letter(),
            c.letter(),
            a.letter(),
            b.letter()
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Marginal,
    Fail,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Marginal => "MARGINAL",
            Outcome::Fail => "FAIL",
        }
    }
}

/// The result of one test.
#[derive(Clone, Debug)]
pub struct GemmResult {
    pub gflops: f64,
    pub residual: f64,
    pub outcome: Outcome,
    /// Why it failed, beyond the residual (an error from the call, writes outside C).
    pub note: String,
}

fn scalar<T: Scalar>(class: ScalarClass, rng: &mut Rng, values: Values) -> T {
    match class {
        ScalarClass::Zero => T::zero(),
        ScalarClass::One => T::one(),
        ScalarClass::MinusOne => T::from_parts(-1.0, 0.0),
        ScalarClass::Random => rng.value(values),
    }
}

/// Runs one test.
pub fn run<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    case: &GemmCase,
    cntx: &Cntx,
    rntm: &Rntm,
) -> GemmResult {
    let GemmCase { m, n, k, .. } = *case;
    let [st_c, st_a, st_b] = case.storage;
    let mut rng = Rng::new(case.seed);
    let (a_rows, a_cols) = case.op_a.stored_shape(m, k);
    let (b_rows, b_cols) = case.op_b.stored_shape(k, n);
    let a = TestMatrix::<A>::random(&mut rng, case.values, a_rows, a_cols, st_a);
    let b = TestMatrix::<B>::random(&mut rng, case.values, b_rows, b_cols, st_b);
    let mut c = TestMatrix::<A::Acc>::random(&mut rng, case.values, m, n, st_c);
    let alpha: A::Acc = scalar(case.alpha, &mut rng, case.values);
    let beta: A::Acc = scalar(case.beta, &mut rng, case.values);
    if beta.is_zero() {
        // beta = 0 means C is not read: NaN in it must not survive (integer C cannot hold a
        // NaN: a large value instead, which would show up in the exact comparison).
        let exact = <A::Acc as Scalar>::UNIT_ROUNDOFF == 0.0;
        let poison = if exact { 1e9 } else { f64::NAN };
        let nan = <A::Acc as Element>::from_parts(poison, poison);
        for j in 0..n {
            for i in 0..m {
                let idx = c.index(i, j);
                c.buf[idx] = nan;
            }
        }
    }
    let original = c.clone();
    let av = case.op_a.apply(a.view()).scaled(alpha);
    let bv = case.op_b.apply(b.view());

    // Repeats run on copies of the original C, so each sees the same input; the best time
    // is reported.
    let mut best = f64::INFINITY;
    for _ in 0..case.repeats.max(1) {
        c.buf.copy_from_slice(&original.buf);
        let t0 = Instant::now();
        let result = gemm_with_cntx(
            &av,
            &bv,
            &mut c.view_mut().with_beta(beta),
            cntx,
            Some(rntm),
        );
        best = best.min(t0.elapsed().as_secs_f64());
        if let Err(e) = result {
            return GemmResult {
                gflops: 0.0,
                residual: f64::INFINITY,
                outcome: Outcome::Fail,
                note: format!("error: {e}"),
            };
        }
    }
    // alpha = 0 multiplies nothing: no rate to report.
    let products = if alpha.is_zero() { 0 } else { m * n * k };
    let flops = if <A::Acc as Scalar>::IS_COMPLEX {
        8.0
    } else {
        2.0
    } * products as f64;
    let gflops = if flops == 0.0 {
        0.0
    } else {
        flops / best.max(1e-9) / 1e9
    };

    let (residual, wrote_outside) = if m * n * k <= EXACT_LIMIT {
        let mut want = original.clone();
        let magnitude = gemm_reference(&av, &bv, &mut want.view_mut().with_beta(beta));
        let cmp = compare(&c, &want, &original.buf, &magnitude, k);
        (cmp.residual, cmp.wrote_outside)
    } else {
        let residual = probe(&av, &bv, beta, &original, &c, &mut rng);
        let inside = c.inside_mask();
        let outside = (0..c.buf.len()).find(|&i| !inside[i] && c.buf[i] != original.buf[i]);
        (residual, outside)
    };
    let (outcome, note) = match wrote_outside {
        Some(idx) => (
            Outcome::Fail,
            format!("wrote outside C at buffer index {idx}"),
        ),
        None if residual <= PASS_LIMIT => (Outcome::Pass, String::new()),
        None if residual <= MARGINAL_LIMIT => (Outcome::Marginal, String::new()),
        None => (Outcome::Fail, String::new()),
    };
    GemmResult {
        gflops,
        residual,
        outcome,
        note,
    }
}

/// The random-vector probe: with x uniform in [-1, 1), compares y = C·x against
/// alpha·op(A)·(op(B)·x) + beta·C_old·x. Each element of the computed C carries at most
/// (k+2)·u·M_ij rounding error (M_ij = |alpha|·Σ_p |a_ip||b_pj| + |beta||c_ij|), so y's
/// i-th element differs from the exact one by at most (k+2)·u·Σ_j M_ij|x_j|, which is
/// |alpha|·|op(A)|·(|op(B)|·|x|) + |beta|·|C_old|·|x| — computable in the same passes —
/// plus the probe's own rounding. The residual is the largest difference over that bound.
fn probe<EA: Element<Acc = T>, EB: Element<Acc = T>, T: Scalar>(
    a: &MatRef<EA>,
    b: &MatRef<EB>,
    beta: T,
    c_old: &TestMatrix<T>,
    c_new: &TestMatrix<T>,
    rng: &mut Rng,
) -> f64 {
    let alpha = a.scale() * b.scale();
    let (m, n, k) = (c_new.rows, c_new.cols, a.ncols());
    let x: Vec<T> = (0..n).map(|_| rng.value(Values::Uniform)).collect();
    let a_at = |i, p| a.get(i, p).expect("in range").to_acc();
    let b_at = |p, j| b.get(p, j).expect("in range").to_acc();
    // t = op(B)·x and its magnitude.
    let mut t = vec![T::zero(); k];
    let mut t_mag = vec![0.0f64; k];
    for p in 0..k {
        for (j, &xj) in x.iter().enumerate() {
            let v = b_at(p, j);
            t[p] = t[p] + v * xj;
            t_mag[p] += v.abs1() * xj.abs1();
        }
    }
    let elem = |mat: &TestMatrix<T>, i, j| mat.buf[mat.index(i, j)];
    let mut worst: f64 = 0.0;
    for i in 0..m {
        let (mut want, mut mag) = (T::zero(), 0.0);
        for p in 0..k {
            let v = a_at(i, p);
            want = want + v * t[p];
            mag += v.abs1() * t_mag[p];
        }
        want = alpha * want;
        mag *= alpha.abs1();
        let (mut got, mut got_mag) = (T::zero(), 0.0);
        for (j, &xj) in x.iter().enumerate() {
            if !beta.is_zero() {
                let old = elem(c_old, i, j);
                want = want + beta * old * xj;
                mag += beta.abs1() * old.abs1() * xj.abs1();
            }
            let new = elem(c_new, i, j);
            got = got + new * xj;
            got_mag += new.abs1() * xj.abs1();
        }
        let diff = (got - want).abs1();
        if diff == 0.0 {
            continue;
        }
        let slack = if T::IS_COMPLEX { 4.0 } else { 2.0 };
        let bound = slack * (k + n + 4) as f64 * T::UNIT_ROUNDOFF * (mag + got_mag);
        worst = worst.max(if diff.is_nan() || bound == 0.0 {
            f64::INFINITY
        } else {
            diff / bound
        });
    }
    worst
}
