//! The AMX tile kernels on the software model of the tile unit (CI has no AMX; the hardware
//! path ran on AMX machines lent to sessions 29 and 30: `docs/Performance.md`).
//!
//! 1. The model's instructions against hand-computed cases: strided loads and stores of
//!    partial tiles and the zeroing rules, `tdpbf16ps`'s accumulation order, rounding ties,
//!    DAZ/FTZ and tininess after rounding, `tdpbssd`/`tdpbusd` sign handling and
//!    wrap-around, and the faults the hardware would raise (as panics).
//! 2. The model-backed kernels planted into a context and run through the whole gemm over a
//!    grid (op, storage, alpha/beta, sizes around MR = NR = 32 and around a small KC = 64,
//!    k not a multiple of the tile depth, 0 and 1, several thread layouts), against the
//!    reference: i8 exact, bf16 within f32's bound (exact on small integers).
//! 3. Where the CPU has AMX (never in CI), the hardware kernels against the model kernels,
//!    bit for bit (passed on the machine lent to session 30).

mod harness;

use harness::low_precision::{LpCase, LpElement, Pair, check};
use oxblis::check::{Op, Storage};
use oxblis::kernels::sapphirerapids::{
    AMX_MODEL_CONTEXT, TileConfig, TileModel, TileUnit, gemm_b16_amx_32x32_model,
    gemm_i8_amx_32x32_model, gemm_u8i8_amx_32x32_model,
};
use oxblis::kernels::{GemmUkr, GemmUkrArgs};
use oxblis::{
    Blocksizes, Cntx, Element, GemmKernel, GemmPair, I32Acc, MatMut, MatRef, Rntm, Ways, bf16,
    gemm_with_cntx,
};

// ---------------------------------------------------------------------------------------
// 1. Instructions
// ---------------------------------------------------------------------------------------

/// Loads `cfg` into this thread's model.
fn configure(cfg: &TileConfig) {
    // SAFETY: the model's ldtilecfg reads only `cfg`.
    unsafe { TileModel::load_config(cfg) };
}

/// Palette 1 with the given (tile, rows, colsb) and every other tile unconfigured.
fn config(shapes: &[(usize, u8, u16)]) -> TileConfig {
    let mut all = [(0, 0); 8];
    for &(t, rows, colsb) in shapes {
        all[t] = (rows, colsb);
    }
    TileConfig::palette1(all)
}

#[test]
fn loads_and_stores_follow_the_configured_shape_and_stride() {
    configure(&config(&[(0, 3, 8)]));
    let src: Vec<u8> = (0..100).collect();
    // SAFETY: rows r < 3 of 8 bytes at src + 24·r lie inside `src`.
    unsafe { TileModel::load::<0>(src.as_ptr(), 24) };
    let reg = TileModel::register(0);
    for (r, row) in reg.iter().enumerate() {
        for (c, &byte) in row.iter().enumerate() {
            let want = if r < 3 && c < 8 {
                (24 * r + c) as u8
            } else {
                0
            };
            assert_eq!(byte, want, "row {r} byte {c}");
        }
    }
    // Store with another stride, and a negative one: exactly 3 rows of 8 bytes change.
    let mut dst = vec![0xAAu8; 200];
    // SAFETY: rows r < 3 of 8 bytes at 40·r are inside `dst`.
    unsafe { TileModel::store::<0>(dst.as_mut_ptr(), 40) };
    for (i, &byte) in dst.iter().enumerate() {
        let (r, c) = (i / 40, i % 40);
        let want = if r < 3 && c < 8 {
            (24 * r + c) as u8
        } else {
            0xAA
        };
        assert_eq!(byte, want, "byte {i}");
    }
    let mut dst = vec![0xAAu8; 200];
    // SAFETY: rows at 150 − 50·r (r < 3), 8 bytes each, are inside `dst`.
    unsafe { TileModel::store::<0>(dst.as_mut_ptr().add(150), -50) };
    for r in 0..3 {
        assert_eq!(&dst[150 - 50 * r..158 - 50 * r], &src[24 * r..24 * r + 8]);
    }
    assert_eq!(dst.iter().filter(|&&b| b != 0xAA).count(), 3 * 8);
}

#[test]
fn loads_zero_everything_outside_the_shape_and_ldtilecfg_keeps_data() {
    configure(&TileConfig::FULL);
    let ones = [0xFFu8; 64 * 16];
    // SAFETY: 16 rows of 64 bytes at stride 64 are inside `ones`.
    unsafe { TileModel::load::<5>(ones.as_ptr(), 64) };
    assert!(TileModel::register(5).iter().flatten().all(|&b| b == 0xFF));
    // Palette 1 leaves tile data alone (the SDM zeroes it only for palette 0)...
    configure(&config(&[(5, 2, 12)]));
    assert!(TileModel::register(5).iter().flatten().all(|&b| b == 0xFF));
    // ...and a load of a 2×12 tile zeroes the rest of the register.
    let small = [7u8; 64];
    // SAFETY: 2 rows of 12 bytes at stride 16 are inside `small`.
    unsafe { TileModel::load::<5>(small.as_ptr(), 16) };
    let reg = TileModel::register(5);
    for (r, row) in reg.iter().enumerate() {
        for (c, &byte) in row.iter().enumerate() {
            assert_eq!(
                byte,
                if r < 2 && c < 12 { 7 } else { 0 },
                "row {r} byte {c}"
            );
        }
    }
    // tilezero clears it all; tilerelease returns to INIT (no configuration, zero data).
    // SAFETY: no memory involved.
    unsafe { TileModel::zero::<5>() };
    assert!(TileModel::register(5).iter().flatten().all(|&b| b == 0));
    configure(&TileConfig::FULL);
    // SAFETY: 16 rows of 64 bytes at stride 64 are inside `ones`.
    unsafe { TileModel::load::<2>(ones.as_ptr(), 64) };
    // SAFETY: no memory involved.
    unsafe { TileModel::release() };
    assert_eq!(TileModel::config(), None);
    assert!(TileModel::register(2).iter().flatten().all(|&b| b == 0));
}

fn bf(x: f32) -> u16 {
    let b = bf16::from_f32(x);
    assert_eq!(b.to_f32(), x, "{x} is not a bf16");
    b.to_bits()
}

/// One `tdpbf16ps` on an M×N f32 C (`c`, row-major), an M×K-pair A (`a[m][2k+e]`) and a
/// K×N-pair B (`b[k][2n+e]`), all given as bits; returns C's bits after.
fn tdpbf16ps(c: &[Vec<u32>], a: &[Vec<u16>], b: &[Vec<u16>]) -> Vec<Vec<u32>> {
    let (m, n, k) = (c.len(), c[0].len(), b.len());
    configure(&config(&[
        (0, m as u8, 4 * n as u16),
        (1, m as u8, 4 * k as u16),
        (2, k as u8, 4 * n as u16),
    ]));
    let flat32 = |rows: &[Vec<u32>]| -> Vec<u8> {
        rows.iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect()
    };
    let flat16 = |rows: &[Vec<u16>]| -> Vec<u8> {
        rows.iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect()
    };
    let (cb, ab, bb) = (flat32(c), flat16(a), flat16(b));
    let mut out = vec![0u8; cb.len()];
    // SAFETY: each buffer holds its tile's rows back to back at the stride given.
    unsafe {
        TileModel::load::<0>(cb.as_ptr(), 4 * n as isize);
        TileModel::load::<1>(ab.as_ptr(), 4 * k as isize);
        TileModel::load::<2>(bb.as_ptr(), 4 * n as isize);
        TileModel::dpbf16ps::<0, 1, 2>();
        TileModel::store::<0>(out.as_mut_ptr(), 4 * n as isize);
    }
    out.chunks(4 * n)
        .map(|row| {
            row.chunks(4)
                .map(|x| u32::from_le_bytes(x.try_into().unwrap()))
                .collect()
        })
        .collect()
}

fn p2(e: i32) -> f32 {
    2f32.powi(e)
}

/// A 1×1 `tdpbf16ps`: C (one f32) plus the pairs (a, b) of each k, as f32 values.
fn dot1(c: f32, pairs: &[([f32; 2], [f32; 2])]) -> f32 {
    let a = vec![pairs.iter().flat_map(|(a, _)| a.map(bf)).collect()];
    let b: Vec<Vec<u16>> = pairs.iter().map(|(_, b)| b.map(bf).to_vec()).collect();
    f32::from_bits(tdpbf16ps(&[vec![c.to_bits()]], &a, &b)[0][0])
}

#[test]
fn tdpbf16ps_accumulates_even_and_odd_chains_then_adds_c() {
    // even product 2^-24, odd product 2^-24: chains meet as 2^-23, then 1 + 2^-23 exactly.
    // Adding each product to C in turn (the intrinsics guide's order) would give 1.
    let x = p2(-12);
    assert_eq!(dot1(1.0, &[([x, x], [x, x])]), 1.0 + p2(-23));
    // Within a chain, over k: 1, then + 2^-23, then + 2^-24 (a tie, to even: 1 + 2^-22).
    let r = dot1(
        0.0,
        &[
            ([1.0, 0.0], [1.0, 0.0]),
            ([p2(-23), 0.0], [1.0, 0.0]),
            ([p2(-24), 0.0], [1.0, 0.0]),
        ],
    );
    assert_eq!(r, 1.0 + p2(-22));
    // The last add to C rounds to even as well: 1 + 2^-24 → 1.
    assert_eq!(dot1(1.0, &[([p2(-24), 0.0], [1.0, 0.0])]), 1.0);
}

#[test]
fn tdpbf16ps_denormals_are_zero_in_and_flushed_out() {
    // A bf16 denormal times 2^126 would be 2^-7; read as zero, it contributes nothing.
    let a = vec![vec![0x0001, bf(0.0)]];
    let b = vec![vec![bf(p2(126)), bf(0.0)]];
    assert_eq!(f32::from_bits(tdpbf16ps(&[vec![0]], &a, &b)[0][0]), 0.0);
    // A denormal C is read as zero.
    let r = tdpbf16ps(
        &[vec![1]],
        &[vec![bf(0.0), bf(0.0)]],
        &[vec![bf(0.0), bf(0.0)]],
    );
    assert_eq!(r[0][0], 0);
    // 2^-63 · 2^-64 = 2^-127, a denormal result: flushed.
    assert_eq!(dot1(0.0, &[([p2(-63), 0.0], [p2(-64), 0.0])]), 0.0);
    // Tininess after rounding: 2^-126 − 1.5·2^-151 rounds to 2^-126 − 2^-150 (tiny, so 0),
    // where gradual underflow would round it to 2^-126.
    let r = dot1(
        0.0,
        &[
            ([p2(-63), 0.0], [p2(-63), 0.0]),
            ([-1.5 * p2(-75), 0.0], [p2(-76), 0.0]),
        ],
    );
    assert_eq!(r, 0.0);
    // A product below 2^-126 is not flushed inside the FMA: 2^-125 + 2^-130 is exact.
    let r = dot1(
        0.0,
        &[
            ([p2(-63), 0.0], [p2(-62), 0.0]),
            ([p2(-65), 0.0], [p2(-65), 0.0]),
        ],
    );
    assert_eq!(r, p2(-125) + p2(-130));
    // ∞·0 is NaN.
    assert!(dot1(0.0, &[([f32::INFINITY, 0.0], [0.0, 0.0])]).is_nan());
}

#[test]
fn tdpbf16ps_tile_shapes_map_rows_and_columns() {
    // 2×3 C from 2×2-pair A and 2×3-pair B with distinct small integers: exact.
    let (m, n, k) = (2, 3, 2);
    let av = |i: usize, p: usize| (i * 4 + p) as f32 - 3.0;
    let bv = |p: usize, j: usize| (p * 3 + j) as f32 * 0.5 - 2.0;
    let a: Vec<Vec<u16>> = (0..m)
        .map(|i| (0..2 * k).map(|p| bf(av(i, p))).collect())
        .collect();
    let b: Vec<Vec<u16>> = (0..k)
        .map(|q| (0..2 * n).map(|x| bf(bv(2 * q + x % 2, x / 2))).collect())
        .collect();
    let c: Vec<Vec<u32>> = (0..m)
        .map(|i| (0..n).map(|j| ((i + j) as f32).to_bits()).collect())
        .collect();
    let r = tdpbf16ps(&c, &a, &b);
    for (i, row) in r.iter().enumerate() {
        for (j, &bits) in row.iter().enumerate() {
            let want = (i + j) as f32 + (0..2 * k).map(|p| av(i, p) * bv(p, j)).sum::<f32>();
            assert_eq!(f32::from_bits(bits), want, "C[{i}][{j}]");
        }
    }
    assert_eq!((r.len(), r[0].len()), (m, n));
}

/// One 1×1 integer dot product with one quad: C + Σ a[e]·b[e] via `tdpbssd` or `tdpbusd`.
fn int_dot1(signed_a: bool, c: i32, a: [u8; 4], b: [u8; 4]) -> i32 {
    configure(&config(&[(3, 1, 4), (4, 1, 4), (6, 1, 4)]));
    let mut out = [0u8; 4];
    // SAFETY: one row of 4 bytes each.
    unsafe {
        TileModel::load::<3>(c.to_le_bytes().as_ptr(), 4);
        TileModel::load::<4>(a.as_ptr(), 4);
        TileModel::load::<6>(b.as_ptr(), 4);
        if signed_a {
            TileModel::dpbssd::<3, 4, 6>();
        } else {
            TileModel::dpbusd::<3, 4, 6>();
        }
        TileModel::store::<3>(out.as_mut_ptr(), 4);
    }
    i32::from_le_bytes(out)
}

#[test]
fn int8_dot_products_extend_bytes_and_wrap() {
    let m1 = (-1i8) as u8;
    let m128 = (-128i8) as u8;
    // Signed × signed: (−1)(−1) + (−128)(−128) + 127·(−128) + 2·3.
    assert_eq!(
        int_dot1(true, 10, [m1, m128, 127, 2], [m1, m128, m128, 3]),
        10 + 1 + 16384 - 16256 + 6
    );
    // Unsigned A: 0xFF is 255, 0x80 is 128.
    assert_eq!(
        int_dot1(false, 0, [m1, m128, 127, 2], [m1, m128, m128, 3]),
        -255 - 16384 - 16256 + 6
    );
    // Wrap-around modulo 2^32.
    assert_eq!(
        int_dot1(true, i32::MAX, [1, 0, 0, 0], [1, 0, 0, 0]),
        i32::MIN
    );
    assert_eq!(
        int_dot1(false, i32::MIN, [255, 0, 0, 0], [m1, 0, 0, 0]),
        i32::MAX - 254
    );
}

#[test]
fn a_16_deep_int8_tile_accumulates_every_quad() {
    // Full shapes: 16×16 C, 16×64 A, 16×64 B; C[m][n] = Σ_k Σ_e A[m][4k+e]·B[k][4n+e].
    configure(&TileConfig::FULL);
    let a: Vec<u8> = (0..1024).map(|x| (x * 7 % 251) as u8).collect();
    let b: Vec<u8> = (0..1024).map(|x| (x * 13 % 241) as u8).collect();
    let mut c = [0u8; 1024];
    // SAFETY: 16 rows of 64 bytes at stride 64 in each buffer.
    unsafe {
        TileModel::zero::<0>();
        TileModel::load::<1>(a.as_ptr(), 64);
        TileModel::load::<2>(b.as_ptr(), 64);
        TileModel::dpbssd::<0, 1, 2>();
        TileModel::store::<0>(c.as_mut_ptr(), 64);
    }
    for m in 0..16 {
        for n in 0..16 {
            let want: i32 = (0..16)
                .flat_map(|k| (0..4).map(move |e| (k, e)))
                .map(|(k, e)| {
                    i32::from(a[m * 64 + 4 * k + e] as i8) * i32::from(b[k * 64 + 4 * n + e] as i8)
                })
                .sum();
            let got = i32::from_le_bytes(c[m * 64 + 4 * n..m * 64 + 4 * n + 4].try_into().unwrap());
            assert_eq!(got, want, "C[{m}][{n}]");
        }
    }
}

// Faults: what the hardware would answer with #UD / #GP, the model panics on.

#[test]
#[should_panic(expected = "tileloadd: #UD: no tile configuration loaded")]
fn a_load_without_a_configuration_faults() {
    let buf = [0u8; 64];
    // SAFETY: the model faults before reading.
    unsafe { TileModel::load::<0>(buf.as_ptr(), 64) };
}

#[test]
#[should_panic(expected = "tdpbf16ps: #UD: no tile configuration loaded")]
fn a_dot_product_after_release_faults() {
    configure(&TileConfig::FULL);
    // SAFETY: no memory involved.
    unsafe {
        TileModel::release();
        TileModel::dpbf16ps::<0, 1, 2>();
    }
}

#[test]
#[should_panic(expected = "tdpbssd: #UD: M:")]
fn inconsistent_m_faults() {
    configure(&config(&[(0, 4, 16), (1, 3, 16), (2, 4, 16)]));
    // SAFETY: no memory involved.
    unsafe { TileModel::dpbssd::<0, 1, 2>() };
}

#[test]
#[should_panic(expected = "tdpbf16ps: #UD: N:")]
fn inconsistent_n_faults() {
    configure(&config(&[(0, 4, 16), (1, 4, 16), (2, 4, 32)]));
    // SAFETY: no memory involved.
    unsafe { TileModel::dpbf16ps::<0, 1, 2>() };
}

#[test]
#[should_panic(expected = "tdpbusd: #UD: K:")]
fn inconsistent_k_faults() {
    configure(&config(&[(0, 4, 16), (1, 4, 16), (2, 5, 16)]));
    // SAFETY: no memory involved.
    unsafe { TileModel::dpbusd::<0, 1, 2>() };
}

#[test]
#[should_panic(expected = "must be distinct")]
fn aliased_tiles_fault() {
    configure(&TileConfig::FULL);
    // SAFETY: no memory involved.
    unsafe { TileModel::dpbssd::<1, 1, 2>() };
}

#[test]
#[should_panic(expected = "tilestored: #UD: tmm7 is not configured")]
fn storing_an_unconfigured_tile_faults() {
    configure(&config(&[(0, 16, 64)]));
    let mut buf = [0u8; 64];
    // SAFETY: the model faults before writing.
    unsafe { TileModel::store::<7>(buf.as_mut_ptr(), 64) };
}

#[test]
#[should_panic(expected = "ldtilecfg: #GP: tmm3: 17 rows")]
fn a_configuration_beyond_the_palette_faults() {
    configure(&config(&[(3, 17, 64)]));
}

#[test]
#[should_panic(expected = "ldtilecfg: #GP: tmm2: rows 4 and colsb 0")]
fn half_configured_tiles_fault() {
    configure(&config(&[(2, 4, 0)]));
}

#[test]
#[should_panic(expected = "tilezero: #UD: no tile configuration loaded")]
fn a_model_kernel_without_its_context_faults() {
    let (a, b) = ([bf16::ZERO; 32 * 32], [bf16::ZERO; 32 * 32]);
    let mut c = [0f32; 32 * 32];
    let args = GemmUkrArgs {
        k: 32,
        alpha: 1.0,
        a: a.as_ptr(),
        b: b.as_ptr(),
        beta: 0.0,
        c: c.as_mut_ptr(),
        rs_c: 1,
        cs_c: 32,
        a_next: a.as_ptr(),
        b_next: b.as_ptr(),
    };
    // SAFETY: the panels and C are 32×32, k = 32; the model faults at its first tile op.
    unsafe { gemm_b16_amx_32x32_model(&args) };
}

// ---------------------------------------------------------------------------------------
// 2. The kernels through the whole gemm
// ---------------------------------------------------------------------------------------

/// A context with `T`'s entry replaced by the model-backed AMX kernel, KC = 64 (two bf16
/// tile steps, one i8 step per k block), MC = 64, NC = 64, and no sup or gemv kernel, so
/// every shape takes the packed path and edges go through the scratch tile.
fn model_context<A: GemmPair<B>, B: Element>(
    name: &'static str,
    ukr: GemmUkr<A, B>,
    groups: (usize, usize),
) -> Cntx {
    let base = oxblis::supported_contexts()[0].clone();
    let bs = Blocksizes {
        mr: 32,
        nr: 32,
        kc: 64,
        mc: 64,
        nc: 64,
    };
    // SAFETY: the model kernels implement the contract for 32×32 tiles in the k-grouped
    // layout `groups`, with the model's per-thread context, on any x86-64.
    let kernel = unsafe {
        GemmKernel::new(name, ukr, true, bs)
            .with_k_groups(groups.0, groups.1)
            .with_hw_context(AMX_MODEL_CONTEXT)
    };
    base.with_kernel(kernel).unwrap()
}

fn bf16_context() -> Cntx {
    model_context::<bf16, bf16>("amx_model_b16_32x32", gemm_b16_amx_32x32_model, (32, 2))
}

fn i8_context() -> Cntx {
    model_context::<i8, i8>("amx_model_i8_32x32", gemm_i8_amx_32x32_model, (64, 4))
}

fn u8i8_context() -> Cntx {
    model_context::<u8, i8>("amx_model_u8i8_32x32", gemm_u8i8_amx_32x32_model, (64, 4))
}

/// Sizes around MR = NR = 32, and depths around the tile step (32 bf16, 64 i8) and
/// KC = 64, including 0 and 1.
const SIZES: [usize; 6] = [0, 1, 31, 33, 64, 65];
const DEPTHS: [usize; 7] = [0, 1, 31, 33, 64, 65, 130];

fn grid<A: Pair<B>, B: LpElement<Acc = A::Acc>>(cntx: &Cntx) {
    let mut seed = 0;
    for (op_a, op_b) in [
        (Op::N, Op::N),
        (Op::N, Op::T),
        (Op::T, Op::N),
        (Op::T, Op::T),
    ] {
        for storage in [
            [Storage::Col; 3],
            [Storage::Row; 3],
            [Storage::Gen; 3],
            [Storage::Col, Storage::Row, Storage::Gen],
            [Storage::Neg, Storage::Gen, Storage::Row],
        ] {
            for (alpha, beta) in [(1.0, 0.0), (-0.75, 1.25), (1.0, 1.0), (0.0, 2.0)] {
                for (s, &m) in SIZES.iter().enumerate() {
                    seed += 1;
                    let n = SIZES[(s + seed as usize) % SIZES.len()];
                    let k = DEPTHS[(s + 2 * seed as usize) % DEPTHS.len()];
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

#[test]
fn bf16_model_kernel_matches_the_reference_over_the_grid() {
    grid::<bf16, bf16>(&bf16_context());
}

#[test]
fn i8_model_kernel_matches_the_reference_exactly_over_the_grid() {
    grid::<i8, i8>(&i8_context());
}

#[test]
fn u8i8_model_kernel_matches_the_reference_exactly_over_the_grid() {
    grid::<u8, i8>(&u8i8_context());
}

#[test]
fn every_depth_and_edge_is_covered() {
    // The grid samples (m, n, k); here every depth meets a full tile and an edge tile once.
    let mut seed = 500;
    for &k in &DEPTHS {
        for (m, n) in [(32, 32), (33, 31), (1, 65)] {
            seed += 1;
            let case = LpCase {
                m,
                n,
                k,
                op_a: Op::N,
                op_b: Op::N,
                storage: [Storage::Col; 3],
                alpha: 1.0,
                beta: 0.0,
            };
            check::<bf16, bf16>(&bf16_context(), None, &case, seed);
            check::<i8, i8>(&i8_context(), None, &case, seed);
            check::<u8, i8>(&u8i8_context(), None, &case, seed);
        }
    }
}

#[test]
fn model_kernels_with_threads() {
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
    for ways in layouts {
        let rntm = Rntm::new().with_ways(ways).unwrap();
        for (m, n, k) in [(1, 1, 1), (70, 40, 150), (65, 97, 64)] {
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
            check::<bf16, bf16>(&bf16_context(), Some(&rntm), &case, seed);
            check::<i8, i8>(&i8_context(), Some(&rntm), &case, seed);
            check::<u8, i8>(&u8i8_context(), Some(&rntm), &case, seed);
        }
    }
}

#[test]
fn i8_model_kernel_wraps_modulo_2_to_the_32() {
    // 127·127·200 = 3 225 800 per element, times alpha = 2^12: past i32; beta·C wraps too.
    let (m, n, k) = (33, 34, 200);
    let a = vec![127i8; m * k];
    let b = vec![127i8; k * n];
    let mut c = vec![std::num::Wrapping(i32::MAX); m * n];
    let av = MatRef::col_major(&a, m, k, m)
        .unwrap()
        .scaled(std::num::Wrapping(1 << 12));
    let bv = MatRef::col_major(&b, k, n, k).unwrap();
    let mut cv = MatMut::col_major(&mut c, m, n, m)
        .unwrap()
        .with_beta(std::num::Wrapping(3));
    gemm_with_cntx(&av, &bv, &mut cv, &i8_context(), None).unwrap();
    let exact = (1i64 << 12) * 127 * 127 * 200 + 3 * i64::from(i32::MAX);
    let want = exact.rem_euclid(1 << 32) as u32 as i32;
    assert!(
        c.iter().all(|&x| x == std::num::Wrapping(want)),
        "{:?} vs {want}",
        c[0]
    );
}

#[test]
fn the_model_context_is_released_after_a_call() {
    gemm_case_on_this_thread();
    assert_eq!(
        TileModel::config(),
        None,
        "the loop nest must release the tiles"
    );
}

fn gemm_case_on_this_thread() {
    let case = LpCase {
        m: 40,
        n: 40,
        k: 40,
        op_a: Op::N,
        op_b: Op::N,
        storage: [Storage::Col; 3],
        alpha: 1.0,
        beta: 1.0,
    };
    let one_thread = Rntm::new().with_num_threads(1).unwrap();
    check::<bf16, bf16>(&bf16_context(), Some(&one_thread), &case, 7);
}

// ---------------------------------------------------------------------------------------
// 3. Hardware against the model, where the CPU has AMX
// ---------------------------------------------------------------------------------------

/// The hardware kernels against the model kernels, bit for bit, with the hardware
/// configuration's own blocksizes (so both add the same KC blocks in the same order). This is
/// the check that the model rounds as the silicon does (`tdpbf16ps`'s rounding, DAZ and FTZ).
/// It runs only where `sapphirerapids` is usable: on CI and the development machines it
/// prints why it was skipped and passes without checking anything.
#[test]
fn hardware_kernels_equal_the_model_bit_for_bit() {
    let hw = match oxblis::context_named("sapphirerapids") {
        Ok(cntx) => cntx.clone(),
        Err(why) => {
            eprintln!("skipped, no usable AMX here: {why}");
            return;
        }
    };
    let b16_model = with_model_kernel::<bf16, bf16>(&hw, gemm_b16_amx_32x32_model, (32, 2));
    let i8_model = with_model_kernel::<i8, i8>(&hw, gemm_i8_amx_32x32_model, (64, 4));
    let u8_model = with_model_kernel::<u8, i8>(&hw, gemm_u8i8_amx_32x32_model, (64, 4));
    let mut bits = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        bits ^= bits << 13;
        bits ^= bits >> 7;
        bits ^= bits << 17;
        bits
    };
    // Shapes: edges around 32, k over one and several KC = 1024 blocks, k not a multiple of
    // the tile depth. C column-stored with alpha = 1 takes the tiles-only path, the others
    // the epilogue.
    let shapes = [
        (1, 1, 1),
        (33, 31, 65),
        (64, 64, 1024),
        (70, 45, 2500),
        (200, 96, 777),
    ];
    for &(m, n, k) in &shapes {
        for (alpha, beta, c_rows) in [(1.0, 0.0, false), (1.0, 0.0, true), (-0.5, 1.5, false)] {
            // bf16 operands: random sign, mantissa and a biased exponent of 0 (denormal)
            // about one time in eight, otherwise 57–196, so that products reach f32's
            // denormals and its rounding, but no sum overflows.
            let mut b16 = |len: usize| -> Vec<bf16> {
                (0..len)
                    .map(|_| {
                        let r = next();
                        let exp = if r % 8 == 0 { 0 } else { 57 + (r >> 3) % 140 } as u16;
                        let sign = ((r >> 20) & 1) as u16;
                        bf16::from_bits(sign << 15 | exp << 7 | ((r >> 32) & 0x7f) as u16)
                    })
                    .collect()
            };
            let (a, b) = (b16(m * k), b16(k * n));
            let c0: Vec<f32> = b16(m * n).iter().map(|x| x.to_f32()).collect();
            let run = |cntx: &Cntx| {
                let mut c = c0.clone();
                let av = MatRef::col_major(&a, m, k, m).unwrap().scaled(alpha);
                let bv = MatRef::col_major(&b, k, n, k).unwrap();
                let cv = if c_rows {
                    MatMut::row_major(&mut c, m, n, n)
                } else {
                    MatMut::col_major(&mut c, m, n, m)
                };
                let one = Rntm::new().with_num_threads(1).unwrap();
                gemm_with_cntx(&av, &bv, &mut cv.unwrap().with_beta(beta), cntx, Some(&one))
                    .unwrap();
                c.iter().map(|x| x.to_bits()).collect::<Vec<u32>>()
            };
            let (on_hw, on_model) = (run(&hw), run(&b16_model));
            let differ = on_hw.iter().zip(&on_model).filter(|(h, s)| h != s).count();
            assert_eq!(
                differ, 0,
                "bf16 {m}x{n}x{k} alpha {alpha} beta {beta} row-stored C {c_rows}: \
                 {differ} elements differ from the model"
            );
            for unsigned_a in [false, true] {
                let ints = |len: usize, next: &mut dyn FnMut() -> u64| -> Vec<u8> {
                    (0..len).map(|_| next() as u8).collect()
                };
                let (a, b) = (ints(m * k, &mut next), ints(k * n, &mut next));
                let b: Vec<i8> = b.iter().map(|&x| x as i8).collect();
                let c0: Vec<I32Acc> = (0..m * n)
                    .map(|_| std::num::Wrapping(next() as i32))
                    .collect();
                let alpha = std::num::Wrapping(if alpha == 1.0 { 1 } else { -3 });
                let beta = std::num::Wrapping(beta as i32);
                let int_run = |cntx: &Cntx| -> Vec<I32Acc> {
                    let mut c = c0.clone();
                    let bv = MatRef::col_major(&b, k, n, k).unwrap();
                    let mut cv = if c_rows {
                        MatMut::row_major(&mut c, m, n, n)
                    } else {
                        MatMut::col_major(&mut c, m, n, m)
                    }
                    .unwrap()
                    .with_beta(beta);
                    let one = Rntm::new().with_num_threads(1).unwrap();
                    if unsigned_a {
                        let av = MatRef::col_major(&a, m, k, m).unwrap().scaled(alpha);
                        gemm_with_cntx(&av, &bv, &mut cv, cntx, Some(&one)).unwrap();
                    } else {
                        let a: Vec<i8> = a.iter().map(|&x| x as i8).collect();
                        let av = MatRef::col_major(&a, m, k, m).unwrap().scaled(alpha);
                        gemm_with_cntx(&av, &bv, &mut cv, cntx, Some(&one)).unwrap();
                    }
                    c
                };
                let model = if unsigned_a { &u8_model } else { &i8_model };
                assert!(
                    int_run(&hw) == int_run(model),
                    "{} {m}x{n}x{k}: the hardware differs from the model",
                    if unsigned_a { "u8 x i8" } else { "i8 x i8" }
                );
            }
        }
    }
    eprintln!(
        "checked on AMX hardware: {} shapes, bf16, i8 and u8 x i8",
        shapes.len()
    );
}

/// `cntx` with its `A × B` kernel replaced by the model kernel `ukr`, keeping the hardware
/// kernel's blocksizes and storage preference.
fn with_model_kernel<A: GemmPair<B>, B: Element>(
    cntx: &Cntx,
    ukr: GemmUkr<A, B>,
    groups: (usize, usize),
) -> Cntx {
    let hw = cntx.kernel::<A, B>();
    // SAFETY: the model kernels implement the contract for 32×32 tiles in the k-grouped
    // layout `groups`, with the model's per-thread context, on any x86-64.
    let kernel = unsafe {
        GemmKernel::new("amx_model_twin", ukr, hw.prefers_rows(), hw.blocksizes())
            .with_k_groups(groups.0, groups.1)
            .with_hw_context(AMX_MODEL_CONTEXT)
    };
    cntx.clone().with_kernel(kernel).unwrap()
}
