//! Shared test harness: builds operands in every storage scheme inside padded buffers, runs
//! one gemm case through oxblis and through the reference on identical copies of C, and
//! checks every element of C's buffer: inside the view against the reference, outside it
//! bit for bit against what was there (so a write outside C cannot go unnoticed).

#![allow(dead_code)]

use oxblis::check::{Rng, Values, gemm_reference, tolerance};
use oxblis::{Blocksizes, Cntx, GemmPair, MatMut, MatRef, Rntm, Scalar, gemm_with_cntx};

/// An element type gemm supports with itself as the accumulator.
pub trait Dt: Scalar + GemmPair<Self> {}
impl<T: Scalar + GemmPair<T>> Dt for T {}

/// op() applied to a stored operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As stored.
    N,
    /// Transposed.
    T,
    /// Conjugate-transposed.
    C,
    /// Conjugated, not transposed.
    R,
}
pub const OPS: [Op; 4] = [Op::N, Op::T, Op::C, Op::R];

/// How a matrix is laid out in its buffer. Every scheme leaves padding around or between
/// the elements so stray writes are visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Column-major, ld = rows + 3.
    Col,
    /// Row-major, ld = cols + 2.
    Row,
    /// General: rs = 2, cs = 2·rows + 3 (neither stride is 1).
    Gen,
    /// General with a negative row stride: rows stored bottom-up, rs = -(cols + 1), cs = 1.
    Neg,
}
pub const STORAGES: [Storage; 4] = [Storage::Col, Storage::Row, Storage::Gen, Storage::Neg];

impl Storage {
    /// (row stride, column stride, buffer length) for a rows×cols matrix.
    pub fn layout(self, rows: usize, cols: usize) -> (isize, isize, usize) {
        let (r, c) = (rows as isize, cols as isize);
        let (rs, cs) = match self {
            Storage::Col => (1, r + 3),
            Storage::Row => (c + 2, 1),
            Storage::Gen => (2, 2 * r + 3),
            Storage::Neg => (-(c + 1), 1),
        };
        let span = if rows == 0 || cols == 0 {
            0
        } else {
            (r - 1) * rs.abs() + (c - 1) * cs.abs() + 1
        };
        // Extra elements after the matrix, so over-runs past the end are caught too.
        (rs, cs, span as usize + 5)
    }
}

/// Classes of alpha and beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarClass {
    Zero,
    One,
    MinusOne,
    Random,
}
pub const SCALAR_CLASSES: [ScalarClass; 4] =
    [ScalarClass::Zero, ScalarClass::One, ScalarClass::MinusOne, ScalarClass::Random];

impl ScalarClass {
    pub fn pick<T: Scalar>(self, rng: &mut Rng, values: Values) -> T {
        match self {
            ScalarClass::Zero => T::zero(),
            ScalarClass::One => T::one(),
            ScalarClass::MinusOne => -T::one(),
            ScalarClass::Random => loop {
                let v: T = rng.value(values);
                if !v.is_zero() && !v.is_one() {
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

    /// A case with random op()s, storages and scalar classes.
    pub fn random(rng: &mut Rng, m: usize, n: usize, k: usize) -> Case {
        Case {
            op_a: OPS[rng.below(4)],
            op_b: OPS[rng.below(4)],
            st_c: STORAGES[rng.below(4)],
            st_a: STORAGES[rng.below(4)],
            st_b: STORAGES[rng.below(4)],
            alpha: SCALAR_CLASSES[rng.below(4)],
            beta: SCALAR_CLASSES[rng.below(4)],
            ..Case::new(m, n, k)
        }
    }
}

/// A stored matrix: its buffer and layout.
#[derive(Clone)]
pub struct Stored<T> {
    pub buf: Vec<T>,
    pub rows: usize,
    pub cols: usize,
    pub rs: isize,
    pub cs: isize,
}

impl<T: Dt> Stored<T> {
    pub fn new(rng: &mut Rng, values: Values, rows: usize, cols: usize, st: Storage) -> Self {
        let (rs, cs, len) = st.layout(rows, cols);
        let mut buf = vec![T::zero(); len];
        rng.fill(values, &mut buf);
        Stored { buf, rows, cols, rs, cs }
    }

    pub fn view(&self) -> MatRef<'_, T> {
        MatRef::strided(&self.buf, self.rows, self.cols, self.rs, self.cs).unwrap()
    }

    pub fn view_mut(&mut self) -> MatMut<'_, T> {
        MatMut::strided(&mut self.buf, self.rows, self.cols, self.rs, self.cs).unwrap()
    }

    /// Buffer index of element (i, j).
    pub fn index(&self, i: usize, j: usize) -> usize {
        let lowest = if self.rs < 0 { (self.rows as isize - 1) * -self.rs } else { 0 }
            + if self.cs < 0 { (self.cols as isize - 1) * -self.cs } else { 0 };
        (lowest + i as isize * self.rs + j as isize * self.cs) as usize
    }
}

fn apply<T: Dt>(v: MatRef<'_, T>, op: Op) -> MatRef<'_, T> {
    match op {
        Op::N => v,
        Op::T => v.t(),
        Op::C => v.h(),
        Op::R => v.conj(),
    }
}

/// Stored shape of an operand whose op() is rows×cols.
fn stored_shape(op: Op, rows: usize, cols: usize) -> (usize, usize) {
    match op {
        Op::N | Op::R => (rows, cols),
        Op::T | Op::C => (cols, rows),
    }
}

/// Runs `case` in `cntx` and checks it; panics with the case on any mismatch.
pub fn run_case<T: Dt>(cntx: &Cntx, rntm: Option<&Rntm>, case: &Case, seed: u64) {
    let mut rng = Rng::new(seed);
    let (ar, ac) = stored_shape(case.op_a, case.m, case.k);
    let (br, bc) = stored_shape(case.op_b, case.k, case.n);
    let mut a = Stored::<T>::new(&mut rng, case.values, ar, ac, case.st_a);
    let mut b = Stored::<T>::new(&mut rng, case.values, br, bc, case.st_b);
    let mut c = Stored::<T>::new(&mut rng, case.values, case.m, case.n, case.st_c);
    if case.nan_in_ab {
        a.buf.fill(T::from_parts(f64::NAN, f64::NAN));
        b.buf.fill(T::from_parts(f64::NAN, f64::NAN));
    }
    if case.nan_in_c {
        c.buf.fill(T::from_parts(f64::NAN, f64::NAN));
    }
    let alpha: T = case.alpha.pick(&mut rng, case.values);
    let beta: T = case.beta.pick(&mut rng, case.values);
    let original = c.buf.clone();
    let mut c_ref = c.clone();

    let av = apply(a.view(), case.op_a).scaled(alpha);
    let bv = apply(b.view(), case.op_b);
    let result = gemm_with_cntx(&av, &bv, &mut c.view_mut().with_beta(beta), cntx, rntm);
    if let Err(e) = result {
        panic!("{}: {case:?} failed: {e}", cntx.name());
    }
    let magnitude = gemm_reference(&av, &bv, &mut c_ref.view_mut().with_beta(beta));

    let mut inside = vec![false; original.len()];
    for j in 0..case.n {
        for i in 0..case.m {
            let idx = c.index(i, j);
            inside[idx] = true;
            let (got, want) = (c.buf[idx], c_ref.buf[idx]);
            let ok = match case.values {
                Values::SmallIntegers => got == want,
                Values::Uniform => {
                    (got - want).abs1() <= tolerance::<T>(case.k, magnitude[j * case.m + i])
                }
            };
            assert!(
                ok,
                "{}: {}gemm C({i},{j}) = {got:?}, reference {want:?}\n{case:?} alpha {alpha:?} beta {beta:?}",
                cntx.name(),
                T::LETTER
            );
        }
    }
    for (idx, (got, orig)) in c.buf.iter().zip(&original).enumerate() {
        if !inside[idx] {
            assert!(
                bits_equal(*got, *orig),
                "{}: gemm wrote outside C at buffer index {idx}: {case:?}",
                cntx.name()
            );
        }
    }
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

/// Every context this machine supports, each also with shrunken cache blocksizes (KC = 3,
/// MC = 2·MR, NC = 2·NR for every dtype) so that every edge is reached at small sizes.
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
            let tiny = tiny_blocks(cntx.clone());
            eprintln!("testing configuration {}", cntx.name());
            (cntx.clone(), tiny)
        })
        .collect()
}

fn tiny_blocks(cntx: Cntx) -> Cntx {
    fn shrink<T: Dt>(cntx: Cntx) -> Cntx {
        let bs = cntx.kernel::<T, T>().blocksizes();
        cntx.with_blocksizes::<T, T>(3, 2 * bs.mr, 2 * bs.nr).unwrap()
    }
    let cntx = shrink::<f32>(cntx);
    let cntx = shrink::<f64>(cntx);
    let cntx = shrink::<oxblis::c32>(cntx);
    shrink::<oxblis::c64>(cntx)
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
