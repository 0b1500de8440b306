//! One SIMD register of one element type on one ISA: the small vocabulary the x86 kernel
//! bodies (`gemm_real.rs`, `sup_real.rs`, `gemm_complex.rs`) are written in, so each body is
//! written once and instantiated per ISA and dtype by the kernel files in `kernels/skx/` and
//! `kernels/haswell/`.
//!
//! Every method is `#[inline(always)]` and calls one intrinsic. They are only sound, and only
//! fast, inside a function compiled with the ISA's target features: the kernels' public
//! entry points are `#[target_feature]` shells, into which everything here inlines.

use std::arch::x86_64::*;

/// A SIMD register of `LANES` elements of `Elem`.
///
/// # Safety
/// Implementations call intrinsics of one ISA; every method requires the CPU to have it and
/// the caller to be compiled with it (see the module docs). Pointer arguments must be valid
/// for the lanes accessed.
pub(crate) unsafe trait Simd: Copy {
    /// The element type.
    type Elem: Copy;
    /// A mask selecting leading lanes.
    type Mask: Copy;
    /// Elements per register.
    const LANES: usize;
    /// Registers of this width the ISA has (16 ymm with AVX2, 32 zmm with AVX-512): how
    /// many accumulators a body can keep without spilling.
    const REGISTERS: usize;

    /// All lanes zero.
    unsafe fn zero() -> Self;
    /// All lanes `x`.
    unsafe fn splat(x: Self::Elem) -> Self;
    /// `LANES` elements from `p` (unaligned).
    unsafe fn load(p: *const Self::Elem) -> Self;
    /// `LANES` elements to `p` (unaligned).
    unsafe fn store(p: *mut Self::Elem, v: Self);
    /// `a·b + c`, fused.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
    /// `a·b`.
    unsafe fn mul(a: Self, b: Self) -> Self;
    /// `a + b`.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// The first `lanes` lanes (0..=LANES).
    unsafe fn mask(lanes: usize) -> Self::Mask;
    /// The masked lanes from `p`, zero elsewhere; masked-off lanes are not read.
    unsafe fn load_masked(p: *const Self::Elem, m: Self::Mask) -> Self;
    /// The masked lanes to `p`; masked-off lanes are not written.
    unsafe fn store_masked(p: *mut Self::Elem, m: Self::Mask, v: Self);
    /// Swaps each pair of lanes (re, im) → (im, re).
    unsafe fn swap_pairs(v: Self) -> Self;
    /// `a·b − c` in even lanes, `a·b + c` in odd lanes.
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self;
    /// The sum of the lanes, halving the register each step (log2(LANES) dependent adds,
    /// not LANES − 1).
    unsafe fn sum_lanes(v: Self) -> Self::Elem;
}

/// What the dots body (`dots_real.rs`) needs beyond [`Simd`]: sums across registers, runs of
/// four elements, and a transposing load of four rows. For the 256-bit types, the only ones
/// a dots kernel uses: on Zen 4 their FMAs are as fast as 512-bit ones (two a cycle against
/// one) and their sums cheaper (docs/Performance.md, session 26).
///
/// `LANES` is a multiple of 4 and at most 16.
///
/// # Safety
/// As [`Simd`].
pub(crate) unsafe trait DotSimd: Simd {
    /// A register from `LANES / 4` runs of four elements, lanes 4g..4g + 4 from `at[g]`
    /// (`at.len() == LANES / 4`): a column block of four rows of a column-stored C.
    unsafe fn load_fours(at: &[*const Self::Elem]) -> Self;
    /// Lanes 4g..4g + 4 of `v` to `at[g]` (`at.len() == LANES / 4`), the inverse of
    /// [`DotSimd::load_fours`].
    unsafe fn store_fours(v: Self, at: &[*mut Self::Elem]);
    /// A register from `LANES / 2` runs of two elements, lanes 2g..2g + 2 from `at[g]`
    /// (`at.len() == LANES / 2`): two columns of `LANES / 2` rows of a row-stored C.
    unsafe fn load_pairs(at: &[*const Self::Elem]) -> Self;
    /// Lanes 2g..2g + 2 of `v` to `at[g]` (`at.len() == LANES / 2`), the inverse of
    /// [`DotSimd::load_pairs`].
    unsafe fn store_pairs(v: Self, at: &[*mut Self::Elem]);
    /// Four registers from `LANES` runs of four elements (`at.len() == LANES`): register i
    /// holds element i of each run, lane q from `at[q]`. Loads four rows of a column-stored
    /// matrix, LANES columns wide, as rows.
    unsafe fn rows_of_four(at: &[*const Self::Elem]) -> [Self; 4];
    /// The sums of the lanes of `LANES` registers, as one register: lane i is the sum of
    /// `v[i]`'s lanes (`v.len() == LANES`). The 256-bit types reduce them together, each
    /// step adding lanes of two registers at once (horizontal adds): 8 f32 sums in 9
    /// instructions, where [`Simd::sum_lanes`] spends 6 on each.
    unsafe fn lane_sums(v: &[Self]) -> Self;
}

/// How a packed element type reaches a register of `V`: f32 and f64 as they are, bf16 widened
/// to f32 (exactly: a bf16 is the upper half of an f32's bits). Lets the packed kernel body
/// (`gemm_real.rs`) serve bf16 → f32 with the f32 register file and epilogue.
///
/// # Safety
/// As [`Simd`]: `V`'s ISA must be present and compiled in; pointers valid for the elements
/// read.
pub(crate) unsafe trait Packed<V: Simd>: Copy {
    /// `V::LANES` elements from `p`, as a register.
    unsafe fn load_vec(p: *const Self) -> V;
    /// The element at `p`, in every lane.
    unsafe fn splat_from(p: *const Self) -> V;
}

/// A register type whose registers, taken as the columns of a block, come back as the block's
/// rows in registers: how the sup kernels turn their accumulators (columns of a tile) into the
/// rows of a row-stored C (`sup_real.rs`, `write_rows`). A block is `LANES` rows by
/// `Row::LANES` columns (8 f32 or 4 f64). The 256-bit types transpose a square (f32 8 × 8 in
/// 24 shuffles, f64 4 × 4 in 8); the 512-bit ones a block twice as tall, as the squares of
/// their registers' two halves. The accumulators need not go through memory.
///
/// # Safety
/// As [`Simd`].
pub(crate) unsafe trait ColumnsToRows: Simd {
    /// One row of a block: 8 f32 or 4 f64, a 256-bit register.
    type Row: Simd<Elem = Self::Elem>;
    /// Whether a block of fewer columns (C's last columns in a tile) is worth the same
    /// transpose, its rows written under a mask: with AVX-512, where the rows' masked stores
    /// compile to mask-register stores (skx: sgemm TT 4×64×48 and 6×64×64 1.16×, NT 3×96×96
    /// 1.15×, dgemm 1.01–1.06×, against element by element; sgemm TT 2×64×64 0.97–0.98).
    /// With AVX2's `vmaskmov` stores they lost (haswell sgemm TT 2×64×64 0.62, 12×48×40 0.78,
    /// dgemm 0.90–1.01): there the columns go element by element.
    const MASKED_ROWS: bool;
    /// Lane r of `cols[c]` into lane c of `rows[r]`, for c < `Row::LANES` and r < `LANES`
    /// (`rows` at least that long, `cols` not empty). Past the end of a shorter `cols` its
    /// last column repeats (a partial block, whose extra lanes the caller does not store).
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Self::Row]);
}

/// `cols[c]`, or the last of `cols` past its end (`ColumnsToRows::columns_to_rows`). A
/// function, not a closure, as everything the kernels inline.
#[inline(always)]
fn column<T: Copy>(cols: &[T], c: usize) -> T {
    cols[c.min(cols.len() - 1)]
}

/// A block's eight columns by value, the last of `cols` repeated past its end.
#[inline(always)]
fn eight_columns<T: Copy>(cols: &[T]) -> [T; 8] {
    [
        column(cols, 0),
        column(cols, 1),
        column(cols, 2),
        column(cols, 3),
        column(cols, 4),
        column(cols, 5),
        column(cols, 6),
        column(cols, 7),
    ]
}

/// 16 × f32 in a zmm register (AVX-512 F).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Zmm32(__m512);
/// 8 × f64 in a zmm register (AVX-512 F).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Zmm64(__m512d);
/// 8 × f32 in a ymm register (AVX2, FMA).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Ymm32(__m256);
/// 4 × f64 in a ymm register (AVX2, FMA).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Ymm64(__m256d);

/// The mask of [`Ymm32`] and [`Ymm64`]: the first `lanes` lanes, as AVX's vector mask for
/// masked loads (`vmaskmov`) and as a count for masked stores, which go in whole 128-, 64-
/// and 32-bit pieces ([`store_leading_ps`], [`store_leading_pd`]). AVX's masked store took
/// about 14 cycles on Zen 3 (an sgemm short-k kernel's one store per column of C: 2×500×2
/// ran in 2157 ns with it and 432 without, session 62), where the pieces take one to three
/// stores and two predictable branches; a mask of all lanes is one plain store.
#[derive(Clone, Copy)]
pub(crate) struct LeadingLanes {
    vector: __m256i,
    lanes: usize,
}

/// The first `lanes` (0..=8) lanes of `v` to `p`, in whole pieces ([`LeadingLanes`]).
///
/// # Safety
/// AVX; `p` valid for `lanes` writes.
#[inline(always)]
unsafe fn store_leading_ps(p: *mut f32, lanes: usize, v: __m256) {
    // SAFETY: each store writes lanes below `lanes` (the caller's contract).
    unsafe {
        if lanes == 8 {
            return _mm256_storeu_ps(p, v);
        }
        let (mut p, mut rest, mut x) = (p, lanes, _mm256_castps256_ps128(v));
        if rest >= 4 {
            _mm_storeu_ps(p, x);
            (p, rest, x) = (p.add(4), rest - 4, _mm256_extractf128_ps::<1>(v));
        }
        if rest >= 2 {
            _mm_storel_pd(p.cast(), _mm_castps_pd(x));
            (p, rest, x) = (p.add(2), rest - 2, _mm_movehl_ps(x, x));
        }
        if rest == 1 {
            _mm_store_ss(p, x);
        }
    }
}

/// The first `lanes` (0..=4) lanes of `v` to `p`, in whole pieces ([`LeadingLanes`]).
///
/// # Safety
/// AVX; `p` valid for `lanes` writes.
#[inline(always)]
unsafe fn store_leading_pd(p: *mut f64, lanes: usize, v: __m256d) {
    // SAFETY: each store writes lanes below `lanes` (the caller's contract).
    unsafe {
        if lanes == 4 {
            return _mm256_storeu_pd(p, v);
        }
        let (mut p, mut rest, mut x) = (p, lanes, _mm256_castpd256_pd128(v));
        if rest >= 2 {
            _mm_storeu_pd(p, x);
            (p, rest, x) = (p.add(2), rest - 2, _mm256_extractf128_pd::<1>(v));
        }
        if rest == 1 {
            _mm_store_sd(p, x);
        }
    }
}

// SAFETY: AVX-512 F intrinsics only; callers guarantee the feature (module docs).
unsafe impl Simd for Zmm32 {
    type Elem = f32;
    type Mask = __mmask16;
    const LANES: usize = 16;
    const REGISTERS: usize = 32;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_setzero_ps()) }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_set1_ps(x)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm512_storeu_ps(p, v.0) }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_fmadd_ps(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_mul_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_add_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask(lanes: usize) -> __mmask16 {
        ((1u32 << lanes.min(16)) - 1) as __mmask16
    }
    #[inline(always)]
    unsafe fn load_masked(p: *const f32, m: __mmask16) -> Self {
        // SAFETY: the trait's contract; masked-off lanes do not fault.
        unsafe { Zmm32(_mm512_maskz_loadu_ps(m, p)) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f32, m: __mmask16, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm512_mask_storeu_ps(p, m, v.0) }
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_permute_ps::<0b1011_0001>(v.0)) }
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm32(_mm512_fmaddsub_ps(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: Self) -> f32 {
        // SAFETY: the trait's contract.
        unsafe { _mm512_reduce_add_ps(v.0) }
    }
}

// SAFETY: AVX-512 F intrinsics only; callers guarantee the feature (module docs).
unsafe impl Simd for Zmm64 {
    type Elem = f64;
    type Mask = __mmask8;
    const LANES: usize = 8;
    const REGISTERS: usize = 32;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_setzero_pd()) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_set1_pd(x)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_loadu_pd(p)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm512_storeu_pd(p, v.0) }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_fmadd_pd(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_mul_pd(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_add_pd(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask(lanes: usize) -> __mmask8 {
        ((1u32 << lanes.min(8)) - 1) as __mmask8
    }
    #[inline(always)]
    unsafe fn load_masked(p: *const f64, m: __mmask8) -> Self {
        // SAFETY: the trait's contract; masked-off lanes do not fault.
        unsafe { Zmm64(_mm512_maskz_loadu_pd(m, p)) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f64, m: __mmask8, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm512_mask_storeu_pd(p, m, v.0) }
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_permute_pd::<0b0101_0101>(v.0)) }
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Zmm64(_mm512_fmaddsub_pd(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: Self) -> f64 {
        // SAFETY: the trait's contract.
        unsafe { _mm512_reduce_add_pd(v.0) }
    }
}

// SAFETY: AVX2 and FMA intrinsics only; callers guarantee the features (module docs).
unsafe impl Simd for Ymm32 {
    type Elem = f32;
    type Mask = LeadingLanes;
    const LANES: usize = 8;
    const REGISTERS: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_setzero_ps()) }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_set1_ps(x)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm256_storeu_ps(p, v.0) }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_fmadd_ps(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_mul_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_add_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask(lanes: usize) -> LeadingLanes {
        let lanes = lanes.min(8);
        // SAFETY: the trait's contract.
        let vector = unsafe {
            let count = _mm256_set1_epi32(lanes as i32);
            _mm256_cmpgt_epi32(count, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
        };
        LeadingLanes { vector, lanes }
    }
    #[inline(always)]
    unsafe fn load_masked(p: *const f32, m: LeadingLanes) -> Self {
        // SAFETY: the trait's contract; masked-off lanes do not fault.
        unsafe { Ymm32(_mm256_maskload_ps(p, m.vector)) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f32, m: LeadingLanes, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { store_leading_ps(p, m.lanes, v.0) }
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_permute_ps::<0b1011_0001>(v.0)) }
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_fmaddsub_ps(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: Self) -> f32 {
        // SAFETY: the trait's contract.
        unsafe {
            let half = _mm_add_ps(_mm256_castps256_ps128(v.0), _mm256_extractf128_ps::<1>(v.0));
            let quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
            _mm_cvtss_f32(_mm_add_ss(quarter, _mm_movehdup_ps(quarter)))
        }
    }
}

// SAFETY: AVX intrinsics only; callers guarantee the features (module docs).
unsafe impl DotSimd for Ymm32 {
    #[inline(always)]
    unsafe fn lane_sums(v: &[Self]) -> Self {
        debug_assert_eq!(v.len(), 8);
        // SAFETY: the trait's contract.
        unsafe {
            // [a01 a23 b01 b23 | a45 a67 b45 b67] for each pair, then
            // [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7] for each four: the halves of
            // those two, crossed, add up to the eight sums.
            let ab = _mm256_hadd_ps(v[0].0, v[1].0);
            let cd = _mm256_hadd_ps(v[2].0, v[3].0);
            let ef = _mm256_hadd_ps(v[4].0, v[5].0);
            let gh = _mm256_hadd_ps(v[6].0, v[7].0);
            let abcd = _mm256_hadd_ps(ab, cd);
            let efgh = _mm256_hadd_ps(ef, gh);
            Ymm32(_mm256_add_ps(
                _mm256_blend_ps::<0xf0>(abcd, efgh),
                _mm256_permute2f128_ps::<0x21>(abcd, efgh),
            ))
        }
    }
    #[inline(always)]
    unsafe fn rows_of_four(at: &[*const f32]) -> [Self; 4] {
        debug_assert_eq!(at.len(), 8);
        // SAFETY: the trait's contract.
        unsafe {
            // Runs q and q + 4 in the two halves of one register, then a 4×4 transpose in
            // each half (unpack pairs, then shuffle pairs of pairs).
            let r: [__m256; 4] = std::array::from_fn(|q| _mm256_loadu2_m128(at[q + 4], at[q]));
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            [
                Ymm32(_mm256_shuffle_ps::<0x44>(t0, t2)),
                Ymm32(_mm256_shuffle_ps::<0xee>(t0, t2)),
                Ymm32(_mm256_shuffle_ps::<0x44>(t1, t3)),
                Ymm32(_mm256_shuffle_ps::<0xee>(t1, t3)),
            ]
        }
    }
    #[inline(always)]
    unsafe fn load_fours(at: &[*const f32]) -> Self {
        debug_assert_eq!(at.len(), 2);
        // SAFETY: the trait's contract.
        unsafe { Ymm32(_mm256_loadu2_m128(at[1], at[0])) }
    }
    #[inline(always)]
    unsafe fn store_fours(v: Self, at: &[*mut f32]) {
        debug_assert_eq!(at.len(), 2);
        // SAFETY: the trait's contract.
        unsafe { _mm256_storeu2_m128(at[1], at[0], v.0) }
    }
    #[inline(always)]
    unsafe fn load_pairs(at: &[*const f32]) -> Self {
        debug_assert_eq!(at.len(), 4);
        // SAFETY: the trait's contract: 8 readable bytes at each pointer, read unaligned as
        // the bits of one i64 (a move; nothing is interpreted).
        unsafe {
            let pair = |g: usize| std::ptr::read_unaligned(at[g].cast::<i64>());
            Ymm32(_mm256_castsi256_ps(_mm256_set_epi64x(
                pair(3),
                pair(2),
                pair(1),
                pair(0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn store_pairs(v: Self, at: &[*mut f32]) {
        debug_assert_eq!(at.len(), 4);
        // SAFETY: the trait's contract: 8 writable bytes at each pointer, written unaligned
        // as the bits of one i64.
        unsafe {
            let q = _mm256_castps_si256(v.0);
            std::ptr::write_unaligned(at[0].cast::<i64>(), _mm256_extract_epi64::<0>(q));
            std::ptr::write_unaligned(at[1].cast::<i64>(), _mm256_extract_epi64::<1>(q));
            std::ptr::write_unaligned(at[2].cast::<i64>(), _mm256_extract_epi64::<2>(q));
            std::ptr::write_unaligned(at[3].cast::<i64>(), _mm256_extract_epi64::<3>(q));
        }
    }
}

// SAFETY: AVX2 and FMA intrinsics only; callers guarantee the features (module docs).
unsafe impl Simd for Ymm64 {
    type Elem = f64;
    type Mask = LeadingLanes;
    const LANES: usize = 4;
    const REGISTERS: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_setzero_pd()) }
    }
    #[inline(always)]
    unsafe fn splat(x: f64) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_set1_pd(x)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_loadu_pd(p)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f64, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm256_storeu_pd(p, v.0) }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_fmadd_pd(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_mul_pd(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_add_pd(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask(lanes: usize) -> LeadingLanes {
        let lanes = lanes.min(4);
        // SAFETY: the trait's contract.
        let vector = unsafe {
            let count = _mm256_set1_epi64x(lanes as i64);
            _mm256_cmpgt_epi64(count, _mm256_setr_epi64x(0, 1, 2, 3))
        };
        LeadingLanes { vector, lanes }
    }
    #[inline(always)]
    unsafe fn load_masked(p: *const f64, m: LeadingLanes) -> Self {
        // SAFETY: the trait's contract; masked-off lanes do not fault.
        unsafe { Ymm64(_mm256_maskload_pd(p, m.vector)) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut f64, m: LeadingLanes, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { store_leading_pd(p, m.lanes, v.0) }
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_permute_pd::<0b0101>(v.0)) }
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_fmaddsub_pd(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: Self) -> f64 {
        // SAFETY: the trait's contract.
        unsafe {
            let half = _mm_add_pd(_mm256_castpd256_pd128(v.0), _mm256_extractf128_pd::<1>(v.0));
            _mm_cvtsd_f64(_mm_add_sd(half, _mm_unpackhi_pd(half, half)))
        }
    }
}

// SAFETY: AVX intrinsics only; callers guarantee the features (module docs).
unsafe impl DotSimd for Ymm64 {
    #[inline(always)]
    unsafe fn lane_sums(v: &[Self]) -> Self {
        debug_assert_eq!(v.len(), 4);
        // SAFETY: the trait's contract.
        unsafe {
            // [a01 b01 a23 b23] and [c01 d01 c23 d23]; then [a01 b01 c23 d23] plus
            // [a23 b23 c01 d01] is [a b c d].
            let ab = _mm256_hadd_pd(v[0].0, v[1].0);
            let cd = _mm256_hadd_pd(v[2].0, v[3].0);
            Ymm64(_mm256_add_pd(
                _mm256_blend_pd::<0b1100>(ab, cd),
                _mm256_permute2f128_pd::<0x21>(ab, cd),
            ))
        }
    }
    #[inline(always)]
    unsafe fn rows_of_four(at: &[*const f64]) -> [Self; 4] {
        debug_assert_eq!(at.len(), 4);
        // SAFETY: the trait's contract.
        unsafe {
            // A 4×4 transpose: unpack pairs of runs, then cross the 128-bit halves.
            let r: [__m256d; 4] = std::array::from_fn(|q| _mm256_loadu_pd(at[q]));
            let t0 = _mm256_unpacklo_pd(r[0], r[1]);
            let t1 = _mm256_unpackhi_pd(r[0], r[1]);
            let t2 = _mm256_unpacklo_pd(r[2], r[3]);
            let t3 = _mm256_unpackhi_pd(r[2], r[3]);
            [
                Ymm64(_mm256_permute2f128_pd::<0x20>(t0, t2)),
                Ymm64(_mm256_permute2f128_pd::<0x20>(t1, t3)),
                Ymm64(_mm256_permute2f128_pd::<0x31>(t0, t2)),
                Ymm64(_mm256_permute2f128_pd::<0x31>(t1, t3)),
            ]
        }
    }
    #[inline(always)]
    unsafe fn load_fours(at: &[*const f64]) -> Self {
        debug_assert_eq!(at.len(), 1);
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_loadu_pd(at[0])) }
    }
    #[inline(always)]
    unsafe fn store_fours(v: Self, at: &[*mut f64]) {
        debug_assert_eq!(at.len(), 1);
        // SAFETY: the trait's contract.
        unsafe { _mm256_storeu_pd(at[0], v.0) }
    }
    #[inline(always)]
    unsafe fn load_pairs(at: &[*const f64]) -> Self {
        debug_assert_eq!(at.len(), 2);
        // SAFETY: the trait's contract.
        unsafe { Ymm64(_mm256_loadu2_m128d(at[1], at[0])) }
    }
    #[inline(always)]
    unsafe fn store_pairs(v: Self, at: &[*mut f64]) {
        debug_assert_eq!(at.len(), 2);
        // SAFETY: the trait's contract.
        unsafe { _mm256_storeu2_m128d(at[1], at[0], v.0) }
    }
}

/// A 256-bit register `Y` (`Ymm32`, `Ymm64`) inside the AVX-512 kernels, where it holds the
/// short last rows of a sup tile (`sup_real.rs`, `sup_complex.rs`): Y's arithmetic, with
/// masked loads through AVX-512VL mask registers and masked stores through AVX's vector
/// masks (`vmaskmov`), the faster of each on Zen 4 (whole pieces, as [`Ymm32`] stores
/// them for Zen 3's sake, not measured there). Measured there (session 23): an sgemm
/// sup tile of 7 rows, 12 columns and k = 64 took 152 ns with `vmaskmov` loads of A and
/// 130 ns with mask-register loads, as long as a tile of 8 full rows; four masked 256-bit
/// stores took 1.4 ns with `vmaskmov` and 6.8 ns under a mask register.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Vl<Y>(Y);

/// The lanes a [`Vl`] masks: as a mask register (loads) and as AVX's vector mask (stores).
#[derive(Clone, Copy)]
pub(crate) struct VlMask<M> {
    lanes: __mmask8,
    vector: M,
}

/// The two operations [`Vl`] needs from its 256-bit type beyond [`Simd`].
///
/// # Safety
/// As [`Simd`], and the CPU must have AVX-512 VL, compiled in.
pub(crate) unsafe trait LoadUnderMaskRegister: Simd {
    /// The lanes selected by `lanes` from `p`, zero elsewhere; unselected lanes are not
    /// read.
    unsafe fn load_under(p: *const Self::Elem, lanes: __mmask8) -> Self;
    /// The lanes `m` selects to `p` by AVX's masked store (`vmaskmov`); others not written.
    unsafe fn store_vmaskmov(p: *mut Self::Elem, m: Self::Mask, v: Self);
}

// SAFETY: AVX shuffles on registers only.
unsafe impl ColumnsToRows for Ymm32 {
    type Row = Ymm32;
    const MASKED_ROWS: bool = false;
    #[inline(always)]
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Self]) {
        // Written out, without closures: a closure (`array::from_fn`'s too) is compiled
        // without the caller's target features, and its intrinsics became calls (measured:
        // a tile's epilogue took twice as long as the element loop it replaced).
        // SAFETY: registers only; AVX, which every caller's ISA includes.
        unsafe {
            let [
                Ymm32(r0),
                Ymm32(r1),
                Ymm32(r2),
                Ymm32(r3),
                Ymm32(r4),
                Ymm32(r5),
                Ymm32(r6),
                Ymm32(r7),
            ] = eight_columns(cols);
            let r = [r0, r1, r2, r3, r4, r5, r6, r7];
            // Rows interleaved in pairs, per 128-bit lane.
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            // Quads: u_q holds column q (lane 0) and q + 4 (lane 1) of rows 0..4, v_q of
            // rows 4..8.
            let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let v0 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let v1 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let v2 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let v3 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            // The lanes exchanged: whole columns.
            rows[0].0 = _mm256_permute2f128_ps::<0x20>(u0, v0);
            rows[1].0 = _mm256_permute2f128_ps::<0x20>(u1, v1);
            rows[2].0 = _mm256_permute2f128_ps::<0x20>(u2, v2);
            rows[3].0 = _mm256_permute2f128_ps::<0x20>(u3, v3);
            rows[4].0 = _mm256_permute2f128_ps::<0x31>(u0, v0);
            rows[5].0 = _mm256_permute2f128_ps::<0x31>(u1, v1);
            rows[6].0 = _mm256_permute2f128_ps::<0x31>(u2, v2);
            rows[7].0 = _mm256_permute2f128_ps::<0x31>(u3, v3);
        }
    }
}

// SAFETY: AVX shuffles on registers only.
unsafe impl ColumnsToRows for Ymm64 {
    type Row = Ymm64;
    const MASKED_ROWS: bool = false;
    #[inline(always)]
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Self]) {
        // SAFETY: registers only; AVX, which every caller's ISA includes.
        unsafe {
            let r = [
                column(cols, 0).0,
                column(cols, 1).0,
                column(cols, 2).0,
                column(cols, 3).0,
            ];
            let t = [
                _mm256_unpacklo_pd(r[0], r[1]),
                _mm256_unpackhi_pd(r[0], r[1]),
                _mm256_unpacklo_pd(r[2], r[3]),
                _mm256_unpackhi_pd(r[2], r[3]),
            ];
            rows[0].0 = _mm256_permute2f128_pd::<0x20>(t[0], t[2]);
            rows[1].0 = _mm256_permute2f128_pd::<0x20>(t[1], t[3]);
            rows[2].0 = _mm256_permute2f128_pd::<0x31>(t[0], t[2]);
            rows[3].0 = _mm256_permute2f128_pd::<0x31>(t[1], t[3]);
        }
    }
}

/// The two 256-bit halves of a zmm of f32 (closures would be compiled without the caller's
/// target features, so these are functions).
#[inline(always)]
unsafe fn halves_ps(v: __m512) -> (__m256, __m256) {
    // SAFETY: registers only; AVX-512 F, which the caller has.
    unsafe {
        (
            _mm512_castps512_ps256(v),
            _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v))),
        )
    }
}

/// The two 256-bit halves of a zmm of f64.
#[inline(always)]
unsafe fn halves_pd(v: __m512d) -> (__m256d, __m256d) {
    // SAFETY: registers only; AVX-512 F, which the caller has.
    unsafe { (_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd::<1>(v)) }
}

// SAFETY: AVX-512 F and AVX shuffles on registers only.
unsafe impl ColumnsToRows for Zmm32 {
    type Row = Ymm32;
    const MASKED_ROWS: bool = true;
    #[inline(always)]
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Ymm32]) {
        // SAFETY: registers only; AVX-512 F, which every caller of a zmm type has.
        unsafe {
            let mut lo = [Ymm32(_mm256_setzero_ps()); 8];
            let mut hi = [Ymm32(_mm256_setzero_ps()); 8];
            for j in 0..8 {
                let (l, h) = halves_ps(column(cols, j).0);
                lo[j] = Ymm32(l);
                hi[j] = Ymm32(h);
            }
            Ymm32::columns_to_rows(&lo, &mut rows[..8]);
            Ymm32::columns_to_rows(&hi, &mut rows[8..]);
        }
    }
}

// SAFETY: AVX-512 F and AVX shuffles on registers only.
unsafe impl ColumnsToRows for Zmm64 {
    type Row = Ymm64;
    const MASKED_ROWS: bool = true;
    #[inline(always)]
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Ymm64]) {
        // SAFETY: registers only; AVX-512 F, which every caller of a zmm type has.
        unsafe {
            let (l0, h0) = halves_pd(column(cols, 0).0);
            let (l1, h1) = halves_pd(column(cols, 1).0);
            let (l2, h2) = halves_pd(column(cols, 2).0);
            let (l3, h3) = halves_pd(column(cols, 3).0);
            Ymm64::columns_to_rows(
                &[Ymm64(l0), Ymm64(l1), Ymm64(l2), Ymm64(l3)],
                &mut rows[..4],
            );
            Ymm64::columns_to_rows(
                &[Ymm64(h0), Ymm64(h1), Ymm64(h2), Ymm64(h3)],
                &mut rows[4..],
            );
        }
    }
}

// SAFETY: one AVX-512 VL intrinsic and one AVX one (the trait's requirement).
unsafe impl LoadUnderMaskRegister for Ymm32 {
    #[inline(always)]
    unsafe fn load_under(p: *const f32, lanes: __mmask8) -> Self {
        // SAFETY: the trait's contract; unselected lanes do not fault.
        unsafe { Ymm32(_mm256_maskz_loadu_ps(lanes, p)) }
    }
    #[inline(always)]
    unsafe fn store_vmaskmov(p: *mut f32, m: LeadingLanes, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm256_maskstore_ps(p, m.vector, v.0) }
    }
}

// SAFETY: one AVX-512 VL intrinsic and one AVX one (the trait's requirement).
unsafe impl LoadUnderMaskRegister for Ymm64 {
    #[inline(always)]
    unsafe fn load_under(p: *const f64, lanes: __mmask8) -> Self {
        // SAFETY: the trait's contract; unselected lanes do not fault.
        unsafe { Ymm64(_mm256_maskz_loadu_pd(lanes, p)) }
    }
    #[inline(always)]
    unsafe fn store_vmaskmov(p: *mut f64, m: LeadingLanes, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { _mm256_maskstore_pd(p, m.vector, v.0) }
    }
}

// SAFETY: Y's intrinsics and one AVX-512 VL load; callers guarantee AVX-512 VL with Y's
// features (the type's docs).
unsafe impl<Y: LoadUnderMaskRegister> Simd for Vl<Y> {
    type Elem = Y::Elem;
    type Mask = VlMask<Y::Mask>;
    const LANES: usize = Y::LANES;
    // EVEX encodings reach all 32 vector registers at 256 bits too.
    const REGISTERS: usize = 32;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::zero()) }
    }
    #[inline(always)]
    unsafe fn splat(x: Self::Elem) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::splat(x)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const Self::Elem) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::load(p)) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut Self::Elem, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { Y::store(p, v.0) }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::fma(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn mul(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::mul(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn add(a: Self, b: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::add(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask(lanes: usize) -> Self::Mask {
        // SAFETY: the trait's contract.
        unsafe {
            VlMask {
                lanes: ((1u32 << lanes.min(Y::LANES)) - 1) as __mmask8,
                vector: Y::mask(lanes),
            }
        }
    }
    #[inline(always)]
    unsafe fn load_masked(p: *const Self::Elem, m: Self::Mask) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::load_under(p, m.lanes)) }
    }
    #[inline(always)]
    unsafe fn store_masked(p: *mut Self::Elem, m: Self::Mask, v: Self) {
        // SAFETY: the trait's contract.
        unsafe { Y::store_vmaskmov(p, m.vector, v.0) }
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::swap_pairs(v.0)) }
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: Self, b: Self, c: Self) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::fmaddsub(a.0, b.0, c.0)) }
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: Self) -> Self::Elem {
        // SAFETY: the trait's contract.
        unsafe { Y::sum_lanes(v.0) }
    }
}

// SAFETY: Y's shuffles; `Vl<Y>` is a transparent wrapper of Y.
unsafe impl<Y: LoadUnderMaskRegister + ColumnsToRows> ColumnsToRows for Vl<Y> {
    type Row = Y::Row;
    // Only the AVX-512 kernels use `Vl`.
    const MASKED_ROWS: bool = true;
    #[inline(always)]
    unsafe fn columns_to_rows(cols: &[Self], rows: &mut [Y::Row]) {
        // The wrapped registers by value, without reading the slice through a pointer cast.
        // A block has at most 8 columns; past `cols` the last one repeats.
        let [
            Vl(y0),
            Vl(y1),
            Vl(y2),
            Vl(y3),
            Vl(y4),
            Vl(y5),
            Vl(y6),
            Vl(y7),
        ] = eight_columns(cols);
        let ys = [y0, y1, y2, y3, y4, y5, y6, y7];
        // SAFETY: the trait's contract.
        unsafe { Y::columns_to_rows(&ys, rows) }
    }
}

// SAFETY: forwards to Y's (`Vl<Y>` is a transparent wrapper of Y).
unsafe impl<Y: LoadUnderMaskRegister + DotSimd> DotSimd for Vl<Y> {
    #[inline(always)]
    unsafe fn lane_sums(v: &[Self]) -> Self {
        // SAFETY: the trait's contract; `Vl<Y>` is a transparent wrapper of Y, so the slice
        // reads as Y's.
        unsafe {
            Vl(Y::lane_sums(std::slice::from_raw_parts(
                v.as_ptr().cast::<Y>(),
                v.len(),
            )))
        }
    }
    #[inline(always)]
    unsafe fn rows_of_four(at: &[*const Self::Elem]) -> [Self; 4] {
        // SAFETY: the trait's contract.
        let [r0, r1, r2, r3] = unsafe { Y::rows_of_four(at) };
        [Vl(r0), Vl(r1), Vl(r2), Vl(r3)]
    }
    #[inline(always)]
    unsafe fn load_fours(at: &[*const Self::Elem]) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::load_fours(at)) }
    }
    #[inline(always)]
    unsafe fn store_fours(v: Self, at: &[*mut Self::Elem]) {
        // SAFETY: the trait's contract.
        unsafe { Y::store_fours(v.0, at) }
    }
    #[inline(always)]
    unsafe fn load_pairs(at: &[*const Self::Elem]) -> Self {
        // SAFETY: the trait's contract.
        unsafe { Vl(Y::load_pairs(at)) }
    }
    #[inline(always)]
    unsafe fn store_pairs(v: Self, at: &[*mut Self::Elem]) {
        // SAFETY: the trait's contract.
        unsafe { Y::store_pairs(v.0, at) }
    }
}

/// Types whose packed elements are the register's own: a plain load and broadcast.
macro_rules! packed_as_is {
    ($($elem:ty => $v:ty),*) => {$(
        // SAFETY: forwards to the register type's own load and splat.
        unsafe impl Packed<$v> for $elem {
            #[inline(always)]
            unsafe fn load_vec(p: *const $elem) -> $v {
                // SAFETY: the caller's.
                unsafe { <$v>::load(p) }
            }
            #[inline(always)]
            unsafe fn splat_from(p: *const $elem) -> $v {
                // SAFETY: the caller's.
                unsafe { <$v>::splat(*p) }
            }
        }
    )*};
}
packed_as_is!(f32 => Zmm32, f64 => Zmm64, f32 => Ymm32, f64 => Ymm64);

// SAFETY: AVX-512 F intrinsics only (vpmovzxwd, vpslld), reading 16 (or 1) bf16 at `p`.
unsafe impl Packed<Zmm32> for crate::types::bf16 {
    #[inline(always)]
    unsafe fn load_vec(p: *const Self) -> Zmm32 {
        // SAFETY: the caller's: 16 bf16 = 32 bytes readable at p.
        unsafe {
            let halves = _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast()));
            Zmm32(_mm512_castsi512_ps(_mm512_slli_epi32::<16>(halves)))
        }
    }
    #[inline(always)]
    unsafe fn splat_from(p: *const Self) -> Zmm32 {
        // The bits shifted up, as `load_vec` does (the half crate's `to_f32` also quiets NaNs,
        // with a test and branch per element in this loop: 80 → 93 GFLOPS at 512³ without).
        // SAFETY: the caller's: one bf16 readable at p.
        unsafe {
            Zmm32(_mm512_set1_ps(f32::from_bits(
                u32::from((*p).to_bits()) << 16,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ColumnsToRows, Simd, Ymm32, Ymm64, Zmm32, Zmm64};

    /// `T::columns_to_rows` on distinct values against the definition. Inlined into callers
    /// that enable `T`'s features.
    #[inline(always)]
    unsafe fn check_columns_to_rows<T: ColumnsToRows>(from: fn(usize) -> T::Elem)
    where
        T::Elem: PartialEq + std::fmt::Debug + Default,
    {
        let (height, width) = (T::LANES, T::Row::LANES);
        // Column-major: column c at c·height.
        let input: Vec<T::Elem> = (0..height * width).map(from).collect();
        // SAFETY: the caller enables and has T's features; every load and store covers one
        // vector inside `input` / `output`.
        unsafe {
            let mut cols = Vec::new();
            for c in 0..width {
                cols.push(T::load(input.as_ptr().add(c * height)));
            }
            let mut rows = vec![T::Row::zero(); height];
            T::columns_to_rows(&cols, &mut rows);
            let mut output = vec![T::Elem::default(); height * width];
            for (r, v) in rows.iter().enumerate() {
                T::Row::store(output.as_mut_ptr().add(r * width), *v);
            }
            for r in 0..height {
                for c in 0..width {
                    assert_eq!(
                        output[r * width + c],
                        input[c * height + r],
                        "lane {c} of row {r}, {height} × {width}"
                    );
                }
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn check_256() {
        // SAFETY: the caller checked the features enabled here.
        unsafe {
            check_columns_to_rows::<Ymm32>(|i| i as f32);
            check_columns_to_rows::<Ymm64>(|i| i as f64);
        }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn check_512() {
        // SAFETY: the caller checked the features enabled here.
        unsafe {
            check_columns_to_rows::<Zmm32>(|i| i as f32);
            check_columns_to_rows::<Zmm64>(|i| i as f64);
        }
    }

    #[test]
    fn columns_come_back_as_rows_with_every_lane_moved() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            eprintln!("skipped: no AVX2 and FMA");
            return;
        }
        // SAFETY: the features were just checked.
        unsafe { check_256() };
        if !is_x86_feature_detected!("avx512f") {
            eprintln!("skipped the 512-bit types: no AVX-512 F");
            return;
        }
        // SAFETY: the feature was just checked.
        unsafe { check_512() };
    }
}
