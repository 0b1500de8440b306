//! Packing kernels for AVX: 8×8 block transposes (the [`crate::kernels::TransposeUkr`]
//! contract) for 4-byte elements (f32) and 8-byte elements (f64, c32), whole or of fewer
//! columns. Used by packing for row-stored A and column-stored B in every configuration with
//! AVX (haswell, skx).
//!
//! The technique keeps most of the work off the shuffle port: each 256-bit register is
//! loaded as two 128-bit halves from two different rows (`vinsertf128` from memory goes to
//! the load ports), so one in-lane transpose of four such registers yields four full output
//! columns. f32: 16 loads, 16 in-lane shuffles, 8 stores per 64 elements; f64: 4×4 blocks
//! of 8 loads, 4 shuffles, 4 stores. The scalar loop it replaces ran at about 2 cycles per
//! element (measured with `perf annotate`, docs/Performance.md).
//!
//! **Blocks of fewer columns** (k's remainder past the whole blocks, all of k where k < 8):
//! f32 the same way on masked loads (`vmaskmov`, which never touches a masked-off lane's
//! memory, so nothing past a row's `cols` elements is read), storing only the `cols`
//! columns; f64 by whole blocks of four columns and the rest element by element. The
//! packer's element loop had taken 2 cycles an element on the Zen 3 of session 61, two
//! thirds of an sgemm TN 248×2×5 call (all of k the remainder).

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

/// [`halves_ps`] of the lanes `mask` selects (zero elsewhere), reading nothing else.
///
/// # Safety
/// The selected lanes' elements readable at each pointer; AVX.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn masked_halves_ps(lo: *const f32, hi: *const f32, mask: __m128i) -> __m256 {
    // SAFETY: the caller's; masked-off lanes are not accessed.
    unsafe {
        let low = _mm256_castps128_ps256(_mm_maskload_ps(lo, mask));
        _mm256_insertf128_ps::<1>(low, _mm_maskload_ps(hi, mask))
    }
}

/// Four columns of the in-lane transpose of `r`, where `r[i]` holds row i of a 4-column
/// block in its low half and row i + 4 in its high half: column q holds rows 0..4 | 4..8.
#[inline]
#[target_feature(enable = "avx")]
fn columns_of_four_ps(r: [__m256; 4]) -> [__m256; 4] {
    let t0 = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
    let t1 = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
    let t2 = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
    let t3 = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
    [
        _mm256_unpacklo_pd(t0, t2),
        _mm256_unpackhi_pd(t0, t2),
        _mm256_unpacklo_pd(t1, t3),
        _mm256_unpackhi_pd(t1, t3),
    ]
    .map(|column| _mm256_castpd_ps(column))
}

/// The four columns of a 4×4 f64 block from `r0` = row 0 | row 2 and `r1` = row 1 | row 3
/// (columns 0..2) and `r2`, `r3` the same for columns 2..4.
#[inline]
#[target_feature(enable = "avx")]
fn columns_of_four_pd([r0, r1, r2, r3]: [__m256d; 4]) -> [__m256d; 4] {
    [
        _mm256_unpacklo_pd(r0, r1),
        _mm256_unpackhi_pd(r0, r1),
        _mm256_unpacklo_pd(r2, r3),
        _mm256_unpackhi_pd(r2, r3),
    ]
}

/// The mask of 32-bit lanes `0..width` of four (`width` may be anything).
#[inline]
#[target_feature(enable = "avx")]
fn first_lanes_32(width: usize) -> __m128i {
    let width = width.min(4) as i32;
    _mm_cmpgt_epi32(_mm_set1_epi32(width), _mm_setr_epi32(0, 1, 2, 3))
}

/// 8×8 f32 transpose, or 8×`cols`. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_f32_8x8(
    src: *const f32,
    rs_src: isize,
    dst: *mut f32,
    ld_dst: usize,
    cols: usize,
) {
    if cols < 8 {
        // SAFETY: the caller's.
        unsafe { transpose_f32_partial(src, rs_src, dst, ld_dst, cols) };
        return;
    }
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
            let columns = columns_of_four_ps(r);
            for (q, column) in columns.into_iter().enumerate() {
                _mm256_storeu_ps(dst.add((first_col + q) * ld_dst), column);
            }
        }
    }
}

/// [`transpose_f32_8x8`] for `cols` < 8: the same shuffles on masked loads, a 4-column half
/// left out where it has no columns, and only the `cols` columns stored. A separate
/// function: one body for both, choosing the loads per half, made the narrow path's copies
/// slower (session 61, sgemm TN 2000×2×12 7331 → 9742 ns, 1000×3×13 5394 → 6887).
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
unsafe fn transpose_f32_partial(
    src: *const f32,
    rs_src: isize,
    dst: *mut f32,
    ld_dst: usize,
    cols: usize,
) {
    // SAFETY: every load reads, of a source row i < 8, only columns below `cols` (the masks),
    // every store writes the 8 elements of a destination column p < cols.
    unsafe {
        let row = |i: isize| src.offset(i * rs_src);
        for first_col in (0..cols).step_by(4) {
            let mask = first_lanes_32(cols - first_col);
            let r: [__m256; 4] = std::array::from_fn(|i| {
                masked_halves_ps(
                    row(i as isize).add(first_col),
                    row(i as isize + 4).add(first_col),
                    mask,
                )
            });
            let columns = columns_of_four_ps(r);
            for (q, column) in columns.into_iter().take(cols - first_col).enumerate() {
                _mm256_storeu_ps(dst.add((first_col + q) * ld_dst), column);
            }
        }
    }
}

/// 8×8 f64 transpose, as four 4×4 blocks, or 8×`cols`. See the module docs.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_f64_8x8(
    src: *const f64,
    rs_src: isize,
    dst: *mut f64,
    ld_dst: usize,
    cols: usize,
) {
    if cols < 8 {
        // SAFETY: the caller's.
        unsafe { transpose_f64_partial(src, rs_src, dst, ld_dst, cols) };
        return;
    }
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
            let columns = columns_of_four_pd([r0, r1, r2, r3]);
            for (q, column) in columns.into_iter().enumerate() {
                _mm256_storeu_pd(dst.add((first_col + q) * ld_dst + first_row), column);
            }
        }
    }
}

/// [`transpose_f64_8x8`] for `cols` < 8: a whole block of four columns as in the 8×8
/// transpose, the columns past it element by element. Vector loads of the fewer columns
/// (masked, or of one or two elements) were no faster than that on the Zen 3 of session 61:
/// dgemm TN 300×4×3 654 ns element by element, 754–767 with them (the kernel took 26
/// cycles a block of 8×3, as long as the loop). Apart from [`transpose_f64_8x8`], whose fixed
/// four blocks this loop over whole blocks could serve: as one function the 8×8 blocks of
/// dgemm TN 2000×2×12 and 1000×3×13 copies ran 6–13 % slower (session 61, two runs).
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
unsafe fn transpose_f64_partial(
    src: *const f64,
    rs_src: isize,
    dst: *mut f64,
    ld_dst: usize,
    cols: usize,
) {
    let whole = cols / 4 * 4;
    // SAFETY: every load reads 2 elements of a source row i < 8 at columns below `whole`
    // (≤ cols), every store writes 4 elements of a destination column p < whole at rows < 8.
    unsafe {
        for first_col in (0..whole).step_by(4) {
            for first_row in [0, 4] {
                let row = |i: usize| src.offset((first_row + i) as isize * rs_src).add(first_col);
                let r0 = halves_pd(row(0), row(2));
                let r1 = halves_pd(row(1), row(3));
                let r2 = halves_pd(row(0).add(2), row(2).add(2));
                let r3 = halves_pd(row(1).add(2), row(3).add(2));
                let columns = columns_of_four_pd([r0, r1, r2, r3]);
                for (q, column) in columns.into_iter().enumerate() {
                    _mm256_storeu_pd(dst.add((first_col + q) * ld_dst + first_row), column);
                }
            }
        }
    }
    for p in whole..cols {
        for i in 0..8 {
            // SAFETY: row i < 8 at column p < cols, and column p < cols at row i < 8.
            unsafe { *dst.add(p * ld_dst + i) = *src.offset(i as isize * rs_src).add(p) };
        }
    }
}

/// 8×8 c32 transpose: a c32 is 8 bytes (two f32, `repr(C)`), moved whole like an f64.
///
/// # Safety
/// The [`crate::kernels::TransposeUkr`] contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub unsafe fn transpose_c32_8x8(
    src: *const c32,
    rs_src: isize,
    dst: *mut c32,
    ld_dst: usize,
    cols: usize,
) {
    // SAFETY: the same blocks, seen as f64 bit patterns (unaligned loads and stores; the
    // values are only moved, never computed on).
    unsafe { transpose_f64_8x8(src.cast(), rs_src, dst.cast(), ld_dst, cols) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Copy + PartialEq + std::fmt::Debug>(
        make: impl Fn(usize) -> T,
        transpose: unsafe fn(*const T, isize, *mut T, usize, usize),
    ) {
        let (rs, ld) = (11usize, 13usize);
        for cols in 1..=8 {
            // The last row ends at the buffer's end: a read past its `cols` elements would
            // read past the buffer (caught by the sanitizers, not here), and the elements
            // between rows hold values that must not appear in the output.
            let src: Vec<T> = (0..7 * rs + cols).map(&make).collect();
            let sentinel = make(10_000);
            let mut dst = vec![sentinel; 8 * ld];
            // SAFETY: 8 rows of `cols` at stride 11 and 8 columns of 8 at stride 13 are in
            // range; the test runs only where AVX is present.
            unsafe { transpose(src.as_ptr(), rs as isize, dst.as_mut_ptr(), ld, cols) };
            for p in 0..8 {
                for i in 0..ld {
                    let want = if i < 8 && p < cols {
                        src[i * rs + p]
                    } else {
                        sentinel
                    };
                    assert_eq!(dst[p * ld + i], want, "cols {cols} p {p} i {i}");
                }
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
