//! Packing kernels for AVX: 8×8 block transposes (the [`crate::kernels::TransposeUkr`]
//! contract) for 4-byte elements (f32) and 8-byte elements (f64, c32). Used by packing for
//! row-stored A and column-stored B in every configuration with AVX (haswell, skx).
//!
//! The technique keeps most of the work off the shuffle port: each 256-bit register is
//! loaded as two 128-bit halves from two different rows (`vinsertf128` from memory goes to
//! the load ports), so one in-lane transpose of four such registers yields four full output
//! columns. f32: 16 loads, 16 in-lane shuffles, 8 stores per 64 elements; f64: 4×4 blocks
//! of 8 loads, 4 shuffles, 4 stores. The scalar loop it replaces ran at about 2 cycles per
//! element (measured with `perf annotate`, docs/Performance.md).

use std::arch::x86_64::*;

use crate::types::c32;

/// Two 128-bit halves, from `lo` and `hi`, as one 256-bit register of f32.
///
/// # Safety
/// 16 readable bytes at each pointer; AVX.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn halves_ps(lo: *const f32, hi: *const f32) -> __m256 {
    // SAFETY: the caller's.
    unsafe { _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi)) }
}

/// Two 128-bit halves, from `lo` and `hi`, as one 256-bit register of f64.
///
/// # Safety
/// 16 readable bytes at each pointer; AVX.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn halves_pd(lo: *const f64, hi: *const f64) -> __m256d {
    // SAFETY: the caller's.
    unsafe { _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(_mm_loadu_pd(lo)), _mm_loadu_pd(hi)) }
}

/// 8×8 f32 transpose. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_f32_8x8(src: *const f32, rs_src: isize, dst: *mut f32, ld_dst: usize) {
    // SAFETY: every load reads 4 of the 8 elements of a source row i < 8, every store
    // writes the 8 elements of a destination column p < 8: all inside the contract's blocks.
    unsafe {
        let row = |i: isize| src.offset(i * rs_src);
        for first_col in [0, 4] {
            // r[i] = row i, columns first_col..+4 | row i+4, the same columns.
            let r: [__m256; 4] = std::array::from_fn(|i| {
                halves_ps(
                    row(i as isize).add(first_col),
                    row(i as isize + 4).add(first_col),
                )
            });
            let t0 = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
            let t1 = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
            let t2 = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
            let t3 = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
            let columns = [
                _mm256_unpacklo_pd(t0, t2),
                _mm256_unpackhi_pd(t0, t2),
                _mm256_unpacklo_pd(t1, t3),
                _mm256_unpackhi_pd(t1, t3),
            ];
            for (q, column) in columns.into_iter().enumerate() {
                _mm256_storeu_ps(dst.add((first_col + q) * ld_dst), _mm256_castpd_ps(column));
            }
        }
    }
}

/// 8×8 f64 transpose, as four 4×4 blocks. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_f64_8x8(src: *const f64, rs_src: isize, dst: *mut f64, ld_dst: usize) {
    // SAFETY: every load reads 2 elements of a source row i < 8 at columns < 8, every store
    // writes 4 elements of a destination column p < 8 at rows < 8: inside the blocks.
    unsafe {
        for (first_row, first_col) in [(0, 0), (0, 4), (4, 0), (4, 4)] {
            let row = |i: usize| src.offset((first_row + i) as isize * rs_src).add(first_col);
            // r0 = row 0 | row 2 and r1 = row 1 | row 3, columns 0..2; r2, r3 columns 2..4.
            let r0 = halves_pd(row(0), row(2));
            let r1 = halves_pd(row(1), row(3));
            let r2 = halves_pd(row(0).add(2), row(2).add(2));
            let r3 = halves_pd(row(1).add(2), row(3).add(2));
            let columns = [
                _mm256_unpacklo_pd(r0, r1),
                _mm256_unpackhi_pd(r0, r1),
                _mm256_unpacklo_pd(r2, r3),
                _mm256_unpackhi_pd(r2, r3),
            ];
            for (q, column) in columns.into_iter().enumerate() {
                _mm256_storeu_pd(dst.add((first_col + q) * ld_dst + first_row), column);
            }
        }
    }
}

/// 8×8 c32 transpose: a c32 is 8 bytes (two f32, `repr(C)`), moved whole like an f64.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_c32_8x8(src: *const c32, rs_src: isize, dst: *mut c32, ld_dst: usize) {
    // SAFETY: the same blocks, seen as f64 bit patterns (unaligned loads and stores; the
    // values are only moved, never computed on).
    unsafe { transpose_f64_8x8(src.cast(), rs_src, dst.cast(), ld_dst) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Copy + PartialEq + std::fmt::Debug>(
        make: impl Fn(usize) -> T,
        transpose: unsafe fn(*const T, isize, *mut T, usize),
    ) {
        let (rs, ld) = (11usize, 13usize);
        let src: Vec<T> = (0..8 * rs).map(&make).collect();
        let sentinel = make(10_000);
        let mut dst = vec![sentinel; 8 * ld];
        // SAFETY: 8 rows of 8 at stride 11 and 8 columns of 8 at stride 13 are in range; the
        // test runs only where AVX is present.
        unsafe { transpose(src.as_ptr(), rs as isize, dst.as_mut_ptr(), ld) };
        for p in 0..8 {
            for i in 0..ld {
                let want = if i < 8 { src[i * rs + p] } else { sentinel };
                assert_eq!(dst[p * ld + i], want, "p {p} i {i}");
            }
        }
    }

    #[test]
    fn transposes_match_the_definition() {
        if !is_x86_feature_detected!("avx") {
            return;
        }
        check(|x| x as f32, transpose_f32_8x8);
        check(|x| x as f64, transpose_f64_8x8);
        check(|x| c32::new(x as f32, -(x as f32)), transpose_c32_8x8);
    }
}
