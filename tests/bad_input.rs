//! Bad input returns an `Err` that names the problem, and C's memory is left byte for byte
//! as it was. Covered for every dtype: shape mismatches, C overlapping itself, C aliasing A
//! or B, view extents that do not fit or overflow, and invalid `Rntm`s.

mod harness;

use harness::{Dt, bits_equal};
use oxblis::check::{Rng, Values};
use oxblis::{ErrorKind, MatMut, MatRef, Rntm, Ways, c32, c64, gemm, gemm_ex};

/// Runs `call` on a C buffer full of random values and checks it returned `kind` with a
/// message containing `says`, and that C's buffer is unchanged.
fn refused<T: Dt>(
    len: usize,
    kind: ErrorKind,
    says: &str,
    call: impl FnOnce(&mut [T]) -> oxblis::Result<()>,
) {
    let mut c = vec![T::zero(); len];
    Rng::new(1).fill(Values::Uniform, &mut c);
    c[0] = T::from_parts(f64::NAN, 0.0);
    let before = c.clone();
    let err = call(&mut c).expect_err("bad input must be refused");
    assert_eq!(err.kind(), kind, "{err}");
    assert!(
        err.message().contains(says),
        "message {:?} should mention {says:?}",
        err.message()
    );
    assert!(
        c.iter().zip(&before).all(|(x, y)| bits_equal(*x, *y)),
        "C was modified by a refused call: {err}"
    );
}

fn shape_mismatches<T: Dt>() {
    let a = vec![T::one(); 12];
    let b = vec![T::one(); 12];
    // A is 3×4, B is 3×4: inner dimensions 4 and 3 differ.
    refused::<T>(
        9,
        ErrorKind::ShapeMismatch,
        "op(A) is 3×4 but op(B) is 3×4",
        |c| {
            let a = MatRef::col_major(&a, 3, 4, 3)?;
            let b = MatRef::col_major(&b, 3, 4, 3)?;
            gemm(
                T::one(),
                &a,
                &b,
                T::zero(),
                &mut MatMut::col_major(c, 3, 3, 3)?,
            )
        },
    );
    // op(A)·op(B) is 3×3 (A·Bᵀ) but C is 3×2.
    refused::<T>(
        9,
        ErrorKind::ShapeMismatch,
        "C is 3×2 but op(A)·op(B) is 3×3",
        |c| {
            let a = MatRef::col_major(&a, 3, 4, 3)?;
            let b = MatRef::col_major(&b, 3, 4, 3)?;
            gemm_ex(&a, &b.t(), &mut MatMut::col_major(c, 3, 2, 3)?, None)
        },
    );
}

fn c_overlapping_itself<T: Dt>() {
    let a = vec![T::one(); 6];
    let b = vec![T::one(); 6];
    // A 3×3 C with column stride 2 < 3 rows: columns interleave.
    refused::<T>(
        16,
        ErrorKind::SelfOverlap,
        "C's strides (rs = 1, cs = 2)",
        |c| {
            let a = MatRef::col_major(&a, 3, 2, 3)?;
            let b = MatRef::col_major(&b, 2, 3, 2)?;
            gemm_ex(&a, &b, &mut MatMut::strided(c, 3, 3, 1, 2)?, None)
        },
    );
    // Zero stride: every row is the same memory.
    refused::<T>(16, ErrorKind::SelfOverlap, "share memory", |c| {
        let a = MatRef::col_major(&a, 3, 2, 3)?;
        let b = MatRef::col_major(&b, 2, 3, 2)?;
        gemm_ex(&a, &b, &mut MatMut::strided(c, 3, 3, 0, 4)?, None)
    });
}

fn c_aliasing_a_or_b<T: Dt>() {
    // One buffer; A and C (or B and C) views of it overlap. Only the raw-pointer door can
    // build these: the borrow checker forbids it through slices.
    let other = vec![T::one(); 16];
    refused::<T>(32, ErrorKind::Alias, "C shares memory with A", |buf| {
        let p = buf.as_mut_ptr();
        // SAFETY: both views lie inside `buf` (32 elements); gemm refuses before any access.
        let (a, mut c) = unsafe {
            (
                MatRef::from_raw_parts(p.add(8).cast_const(), 4, 4, 1, 4)?,
                MatMut::from_raw_parts(p, 4, 4, 1, 4)?,
            )
        };
        let b = MatRef::col_major(&other, 4, 4, 4)?;
        gemm_ex(&a, &b, &mut c, None)
    });
    refused::<T>(32, ErrorKind::Alias, "C shares memory with B", |buf| {
        let p = buf.as_mut_ptr();
        // SAFETY: as above.
        let (b, mut c) = unsafe {
            (
                MatRef::from_raw_parts(p.add(15).cast_const(), 4, 4, 1, 4)?,
                MatMut::from_raw_parts(p, 4, 4, 1, 4)?,
            )
        };
        let a = MatRef::col_major(&other, 4, 4, 4)?;
        gemm(T::one(), &a, &b.t(), T::zero(), &mut c)
    });
}

fn views_that_do_not_fit<T: Dt>() {
    let data = vec![T::one(); 10];
    let e = MatRef::col_major(&data, 3, 4, 3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidView);
    assert!(e.message().contains("MatRef::col_major"), "{e}");
    let e = MatRef::row_major(&data, 2, 4, 3).unwrap_err();
    assert!(
        e.message()
            .contains("ld = 3 must be at least max(1, n) = 4"),
        "{e}"
    );
    refused::<T>(10, ErrorKind::InvalidView, "MatMut::strided", |c| {
        MatMut::strided(c, 4, 4, 1, 3).map(|_| ())
    });
    // Index arithmetic that would overflow.
    refused::<T>(10, ErrorKind::InvalidView, "overflow", |c| {
        // SAFETY: refused before any access.
        unsafe { MatMut::from_raw_parts(c.as_mut_ptr(), 3, usize::MAX / 2, 1, 4) }.map(|_| ())
    });
    let e = unsafe {
        // SAFETY: refused before any access.
        MatRef::from_raw_parts(data.as_ptr(), 2, 2, isize::MIN, 1)
    }
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidView);
}

fn every_class<T: Dt>() {
    shape_mismatches::<T>();
    c_overlapping_itself::<T>();
    c_aliasing_a_or_b::<T>();
    views_that_do_not_fit::<T>();
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    every_class::<f32>();
    every_class::<f64>();
    every_class::<c32>();
    every_class::<c64>();
}

#[test]
fn invalid_rntm_is_refused() {
    let e = Rntm::new().with_num_threads(0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRntm);
    let e = Rntm::new().with_num_threads(1_000_000).unwrap_err();
    assert!(e.message().contains("between 1 and"), "{e}");
    let zero_jr = Ways {
        jc: 1,
        pc: 1,
        ic: 1,
        jr: 0,
        ir: 1,
    };
    assert!(
        Rntm::new()
            .with_ways(zero_jr)
            .unwrap_err()
            .message()
            .contains("jr")
    );
}

#[test]
fn empty_problems_are_valid_calls() {
    let empty: [f64; 0] = [];
    let mut c = [f64::NAN; 4];
    // k = 0 with beta = 0: C := 0, A and B (empty) never read.
    let a = MatRef::col_major(&empty, 2, 0, 2).unwrap();
    let b = MatRef::col_major(&empty, 0, 2, 1).unwrap();
    gemm(
        1.0,
        &a,
        &b,
        0.0,
        &mut MatMut::col_major(&mut c, 2, 2, 2).unwrap(),
    )
    .unwrap();
    assert_eq!(c, [0.0; 4]);
    // m = 0: nothing to do, nothing touched.
    let mut none: [f64; 0] = [];
    let a = MatRef::col_major(&empty, 0, 3, 1).unwrap();
    let three = [1.0; 6];
    let b = MatRef::col_major(&three, 3, 2, 3).unwrap();
    gemm(
        1.0,
        &a,
        &b,
        0.0,
        &mut MatMut::col_major(&mut none, 0, 2, 1).unwrap(),
    )
    .unwrap();
}

/// Not bad input: LAPACK updates a trailing block of an array with a panel of the same
/// array (same leading dimension, interleaved byte ranges, no element in common). The
/// overlap check must tell that apart from aliasing, and the product must be right.
#[test]
fn disjoint_blocks_of_one_array_are_not_aliases() {
    let ld = 13;
    let mut x: Vec<f64> = (0..ld * 5).map(|v| (v % 7) as f64 - 3.0).collect();
    let orig = x.clone();
    let p = x.as_mut_ptr();
    // C = rows 0..4 of columns 0..5 (4×5), A = rows 4..8 of columns 0..3 (4×3), B = rows
    // 8..11 of columns 0..5 (3×5): every column holds a piece of two or three of them.
    // SAFETY: all three blocks lie inside `x` and are pairwise disjoint.
    let (a, b, mut c) = unsafe {
        (
            MatRef::from_raw_parts(p.add(4).cast_const(), 4, 3, 1, ld as isize).unwrap(),
            MatRef::from_raw_parts(p.add(8).cast_const(), 3, 5, 1, ld as isize).unwrap(),
            MatMut::from_raw_parts(p, 4, 5, 1, ld as isize).unwrap(),
        )
    };
    gemm(1.0, &a, &b, 1.0, &mut c).expect("disjoint blocks are valid operands");
    for j in 0..5 {
        for i in 0..ld {
            let want = if i < 4 {
                let dot: f64 = (0..3)
                    .map(|p| orig[4 + i + p * ld] * orig[8 + p + j * ld])
                    .sum();
                orig[i + j * ld] + dot
            } else {
                orig[i + j * ld]
            };
            assert_eq!(x[i + j * ld], want, "element ({i}, {j})");
        }
    }
}
