//! Shared test harness: one gemm case, run through oxblis and through the reference on
//! identical copies of C, then every element of C's buffer checked: inside the view against
//! the reference, outside it against what was there (a write outside C cannot go
//! unnoticed). Operand builders and the comparison live in `oxblis::check`, which the
//! testsuite binary uses too.

#![allow(dead_code)]

pub mod low_precision;

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{Blocksizes, Cntx, GemmPair, PackAOnly, Rntm, Scalar, SupLimits, gemm_with_cntx};

/// An element type gemm supports with itself as the accumulator.
pub trait Dt: Scalar + GemmPair<Self> {}
impl<T: Scalar + GemmPair<T>> Dt for T {}

/// Classes of alpha and beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarClass {
    Zero,
    One,
    MinusOne,
    Random,
}
pub const SCALAR_CLASSES: [ScalarClass; 4] = [
    ScalarClass::Zero,
    ScalarClass::One,
    ScalarClass::MinusOne,
    ScalarClass::Random,
];

impl ScalarClass {
    pub fn pick<T: Scalar>(self, rng: &mut Rng, values: Values) -> T {
        match self {
            ScalarClass::Zero => T::zero(),
            ScalarClass::One => T::one(),
            ScalarClass::MinusOne => -T::one(),
            ScalarClass::Random => loop {
                let v: T = rng.value(values);
                if !v.is_zero() && !v.is_one() && !(-v).is_one() {
                    break v;
                }
            },
        }
    }
}

/// One gemm problem: C (m×n) := alpha·op(A)·op(B) + beta·C with op(A) m×k, op(B) k×n.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub op_a: Op,
    pub op_b: Op,
    pub st_c: Storage,
    pub st_a: Storage,
    pub st_b: Storage,
    pub alpha: ScalarClass,
    pub beta: ScalarClass,
    pub values: Values,
    /// Fill C with NaN before the call (meaningful with beta = 0).
    pub nan_in_c: bool,
    /// Fill A and B with NaN (meaningful with alpha = 0 or k = 0).
    pub nan_in_ab: bool,
}

impl Case {
    pub fn new(m: usize, n: usize, k: usize) -> Case {
        Case {
            m,
            n,
            k,
            op_a: Op::N,
            op_b: Op::N,
            st_c: Storage::Col,
            st_a: Storage::Col,
            st_b: Storage::Col,
            alpha: ScalarClass::Random,
            beta: ScalarClass::Random,
            values: Values::SmallIntegers,
            nan_in_c: false,
            nan_in_ab: false,
        }
    }

    /// This case with the (alpha, beta) class pair for the `seed`-th case of a loop: alpha
    /// cycles fastest, so any 16 consecutive seeds cover every pair.
    pub fn with_classes_of(self, seed: usize) -> Case {
        Case {
            alpha: SCALAR_CLASSES[seed % 4],
            beta: SCALAR_CLASSES[(seed / 4) % 4],
            ..self
        }
    }

    /// [`Self::with_classes_of`], and C filled with NaN where beta is zero (which must
    /// overwrite it).
    pub fn with_classes_and_nan_of(self, seed: u64) -> Case {
        let case = self.with_classes_of(seed as usize);
        Case {
            nan_in_c: case.beta == ScalarClass::Zero,
            ..case
        }
    }

    /// This shape under every op(A) × op(B) × storage of C, A and B (4⁵ cases).
    pub fn every_op_and_storage(m: usize, n: usize, k: usize) -> impl Iterator<Item = Case> {
        Op::ALL.into_iter().flat_map(move |op_a| {
            Op::ALL.into_iter().flat_map(move |op_b| {
                Storage::ALL.into_iter().flat_map(move |st_c| {
                    Storage::ALL.into_iter().flat_map(move |st_a| {
                        Storage::ALL.into_iter().map(move |st_b| Case {
                            op_a,
                            op_b,
                            st_c,
                            st_a,
                            st_b,
                            ..Case::new(m, n, k)
                        })
                    })
                })
            })
        })
    }

    /// A case with random op()s, storages and scalar classes.
    pub fn random(rng: &mut Rng, m: usize, n: usize, k: usize) -> Case {
        Case {
            op_a: Op::ALL[rng.below(4)],
            op_b: Op::ALL[rng.below(4)],
            st_c: Storage::ALL[rng.below(4)],
            st_a: Storage::ALL[rng.below(4)],
            st_b: Storage::ALL[rng.below(4)],
            alpha: SCALAR_CLASSES[rng.below(4)],
            beta: SCALAR_CLASSES[rng.below(4)],
            ..Case::new(m, n, k)
        }
    }
}

/// The operands of `case`, built from `seed`: A, B, C, alpha, beta.
fn operands<T: Dt>(case: &Case, seed: u64) -> (TestMatrix<T>, TestMatrix<T>, TestMatrix<T>, T, T) {
    let mut rng = Rng::new(seed);
    let (ar, ac) = case.op_a.stored_shape(case.m, case.k);
    let (br, bc) = case.op_b.stored_shape(case.k, case.n);
    let mut a = TestMatrix::<T>::random(&mut rng, case.values, ar, ac, case.st_a);
    let mut b = TestMatrix::<T>::random(&mut rng, case.values, br, bc, case.st_b);
    let mut c = TestMatrix::<T>::random(&mut rng, case.values, case.m, case.n, case.st_c);
    let nan = T::from_parts(f64::NAN, f64::NAN);
    if case.nan_in_ab {
        a.buf.fill(nan);
        b.buf.fill(nan);
    }
    if case.nan_in_c {
        c.buf.fill(nan);
    }
    let alpha: T = case.alpha.pick(&mut rng, case.values);
    let beta: T = case.beta.pick(&mut rng, case.values);
    (a, b, c, alpha, beta)
}

/// C's whole buffer after running `case` (operands from `seed`) in `cntx` with `rntm`.
pub fn gemm_output<T: Dt>(cntx: &Cntx, rntm: Option<&Rntm>, case: &Case, seed: u64) -> Vec<T> {
    let (a, b, mut c, alpha, beta) = operands::<T>(case, seed);
    let av = case.op_a.apply(a.view()).scaled(alpha);
    let bv = case.op_b.apply(b.view());
    if let Err(e) = gemm_with_cntx(&av, &bv, &mut c.view_mut().with_beta(beta), cntx, rntm) {
        panic!("{}: {case:?} with {rntm:?} failed: {e}", cntx.name());
    }
    c.buf
}

/// Runs `case` in `cntx` and checks it; panics with the case on any mismatch. Small-integer
/// data must match the reference exactly; uniform data within the rounding bound.
pub fn run_case<T: Dt>(cntx: &Cntx, rntm: Option<&Rntm>, case: &Case, seed: u64) {
    let (a, b, mut c, alpha, beta) = operands::<T>(case, seed);
    let original = c.buf.clone();
    let mut c_ref = c.clone();
    c.buf = gemm_output::<T>(cntx, rntm, case, seed);
    let av = case.op_a.apply(a.view()).scaled(alpha);
    let bv = case.op_b.apply(b.view());
    let magnitude = gemm_reference(&av, &bv, &mut c_ref.view_mut().with_beta(beta));
    let cmp = compare(&c, &c_ref, &original, &magnitude, case.k);
    let limit = match case.values {
        Values::SmallIntegers => 0.0,
        Values::Uniform => 1.0,
    };
    let what = format!(
        "{}gemm in {} with {rntm:?}: {case:?} alpha {alpha:?} beta {beta:?}",
        T::LETTER,
        cntx.name()
    );
    assert!(
        cmp.residual <= limit,
        "residual {} > {limit}: {what}",
        cmp.residual
    );
    assert_eq!(cmp.wrote_outside, None, "wrote outside C: {what}");
}

/// Whether two outputs hold the same bits, element by element (and are as long).
pub fn same_bits<T: Copy>(x: &[T], y: &[T]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| bits_equal(*a, *b))
}

/// Bitwise equality (NaN == NaN), for checking that memory was left alone.
pub fn bits_equal<T: Copy>(x: T, y: T) -> bool {
    let size = size_of::<T>();
    // SAFETY: reading the bytes of plain-old-data values for comparison.
    let (xs, ys) = unsafe {
        (
            std::slice::from_raw_parts((&x as *const T).cast::<u8>(), size),
            std::slice::from_raw_parts((&y as *const T).cast::<u8>(), size),
        )
    };
    xs == ys
}

/// Every context this machine supports (as is: small problems take the sup path where the
/// configuration has sup kernels), each paired with a copy for the packed path: sup limits
/// of zero (so sup kernels only serve the packed path's edge tiles; configurations without
/// them use the scratch-tile edges), and cache blocksizes shrunk (KC = 3, MC = 2·MR,
/// NC = 2·NR for every dtype) so every edge of the loop nest is reached cheaply.
pub fn contexts_with_tiny_blocks() -> Vec<(Cntx, Cntx)> {
    let contexts = oxblis::supported_contexts();
    assert!(!contexts.is_empty(), "no configuration runs here");
    if let Ok(expected) = std::env::var("OXBLIS_EXPECT_CONFIGS") {
        // CI sets this, so a machine that silently lost a configuration fails loudly.
        for name in expected.split(',').filter(|s| !s.is_empty()) {
            assert!(
                contexts.iter().any(|c| c.name() == name),
                "configuration {name} expected but not supported here"
            );
        }
    }
    contexts
        .into_iter()
        .map(|cntx| {
            eprintln!("testing configuration {}", cntx.name());
            (
                cntx.clone(),
                tiny_blocks(cntx.clone().with_sup_limits(no_sup_limits())),
            )
        })
        .collect()
}

/// The sup limits of a configuration's sgemm kernel, if it has one (the limits tests change
/// and hand back through `Cntx::with_sup_limits`, which sets them for every dtype).
pub fn sup_limits_of(cntx: &Cntx) -> Option<SupLimits> {
    cntx.kernel::<f32, f32>().sup().map(|s| s.limits())
}

/// Sup limits that let no problem take the sup path, the packed-A path or the one-tile
/// shortcut: sup kernels then serve only the packed path's edge tiles.
pub fn no_sup_limits() -> SupLimits {
    SupLimits {
        max_a_col_stride_bytes: 0,
        max_a_bytes: 0,
        far_a_min_n: 0,
        far_a_max_n: 0,
        far_a_min_n_c_rows: 0,
        far_a_max_short_k: 0,
        k_block_bytes: 0,
        max_c_bytes_if_k_split: usize::MAX,
        c_block_bytes_if_k_split: usize::MAX,
        max_b_k_span_bytes: usize::MAX,
        pack_a_only: PackAOnly::Never,
        max_transposed_partial_column_bytes: 0,
        nt_partial_column_min_k: usize::MAX,
        tt_transposed: None,
        pack_b_rows: &[],
        a_by_blocks_min_copy_bytes: usize::MAX,
        pack_b_panels_min_k: usize::MAX,
        in_place_a_by_blocks_min_bytes: usize::MAX,
        in_place_a_by_blocks_min_col_bytes: usize::MAX,
    }
}

fn tiny_blocks(cntx: Cntx) -> Cntx {
    fn shrink<T: Dt>(cntx: Cntx) -> Cntx {
        let bs = cntx.kernel::<T, T>().blocksizes();
        cntx.with_blocksizes::<T, T>(3, 2 * bs.mr, 2 * bs.nr)
            .unwrap()
    }
    let cntx = shrink::<f32>(cntx);
    let cntx = shrink::<f64>(cntx);
    let cntx = shrink::<oxblis::c32>(cntx);
    shrink::<oxblis::c64>(cntx)
}

/// [`run_case`] for the dtype whose BLAS letter is `letter` (s, d, c, z).
pub fn run_case_of(letter: char, cntx: &Cntx, rntm: Option<&Rntm>, case: &Case, seed: u64) {
    match letter {
        's' => run_case::<f32>(cntx, rntm, case, seed),
        'd' => run_case::<f64>(cntx, rntm, case, seed),
        'c' => run_case::<oxblis::c32>(cntx, rntm, case, seed),
        'z' => run_case::<oxblis::c64>(cntx, rntm, case, seed),
        other => panic!("no dtype {other}"),
    }
}

/// The blocksizes of the dtype with BLAS letter `letter` in `cntx`.
pub fn blocksizes_of(cntx: &Cntx, letter: char) -> Blocksizes {
    match letter {
        's' => cntx.kernel::<f32, f32>().blocksizes(),
        'd' => cntx.kernel::<f64, f64>().blocksizes(),
        'c' => cntx.kernel::<oxblis::c32, oxblis::c32>().blocksizes(),
        'z' => cntx.kernel::<oxblis::c64, oxblis::c64>().blocksizes(),
        other => panic!("no dtype {other}"),
    }
}

/// The sup tile (MR, NR) of dtype `letter` in `cntx`, or its packed tile if it has no sup
/// kernel (the sizes around it are worth testing either way).
pub fn sup_tile_of(cntx: &Cntx, letter: char) -> (usize, usize) {
    fn of<T: Dt>(cntx: &Cntx) -> (usize, usize) {
        let kernel = cntx.kernel::<T, T>();
        kernel
            .sup()
            .map(|s| s.tile())
            .unwrap_or((kernel.blocksizes().mr, kernel.blocksizes().nr))
    }
    match letter {
        's' => of::<f32>(cntx),
        'd' => of::<f64>(cntx),
        'c' => of::<oxblis::c32>(cntx),
        'z' => of::<oxblis::c64>(cntx),
        other => panic!("no dtype {other}"),
    }
}
