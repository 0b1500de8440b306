//! `haswell`: AVX2 + FMA CPUs (Haswell and later Intel, Zen 1–3), chosen by CPU features
//! alone. AVX2 kernels for every dtype: packed and sup for f32, f64, c32 and c64; gemv for
//! all four; dots (short, wide C) for f32 and f64.
//!
//! Blocksizes: KC so an A and a B micropanel stay in L1 (16×384 + 384×6 floats; 8×256 +
//! 256×6 doubles), MC·KC in a 1 MiB L2 (240×384×4 B = 360 KiB; 240×256×8 B = 480 KiB), NC·KC
//! in the shared L3. Starting points from BLIS's haswell values scaled to the larger L2,
//! checked with `cargo bench --bench gemm` (docs/Performance.md).

use crate::cntx::{
    Blocksizes, Cntx, GemmKernel, PackAOnly, PackBRows, SupKernel, SupLimits, TallKernel,
    TallLimits, ThreadPrefs,
};
use crate::config::{Features, SubConfig, generic};
use crate::kernels::haswell;

/// The `haswell` sub-configuration.
pub const HASWELL: SubConfig = SubConfig {
    name: "haswell",
    requires: Features::AVX.union(Features::AVX2).union(Features::FMA),
    context,
    os_check: None,
};

/// Multiply-adds (m·n·k) per thread before automatic threading adds a thread, as on skx
/// (config/skx.rs). Checked with these kernels on the development VM, sgemm / dgemm GFLOPS one
/// → two threads: 64×64×128 87 → 137 / 45 → 68, 96³ 88 → 150 / 45 → 88.
const MIN_WORK_PER_THREAD: usize = 1 << 18;

/// When the sup kernels read A in place: A's columns of at most 512 bytes, the same for every
/// dtype, each measured against packing (forced haswell on the development VM, one thread,
/// GFLOPS; docs/Performance.md):
/// * f32 16×6 and f64 8×6, since session 23 ("Half-width vectors and unmasked tiles"; their
///   tiles of full rows now run without masks). Against the loop nest, with column-stored B
///   they win up to 256³ in f32 (64³ 105–109 against 70–74, 128³ 103 against 89–90, 256³
///   103 against 100) and up to 96³ in f64 (96³ 53 against 47); with row-stored B (NT) only
///   up to 128³ in f32 (96³ 84–99 against 64–80, 128³ 68–85 against 63–79, 192³ 67–85
///   against 76–88, 256³ 52–62 against 66–78) and 96³ in f64 (128³ level). Hence 128 f32 or
///   64 f64 (sgemm's limit was 64 elements before session 23, when full tiles ran masked and
///   the sup kernels lost from 128³: 64 against 70).
/// * c32 8×3 and c64 4×3 (8×2 and 4×2 until session 45, when these figures were taken): the
///   tile is only a few columns wide, so each A column is read in place once per two (now
///   three) columns of C, several times as often as with the real tiles. They win
///   at 32³ (cgemm 68.6 → 85–93 GFLOPS, zgemm 38.0 → 50–52) and on 16×4096×4096 (35 → 67,
///   21 → 29) but lose from A columns of 1 KiB up (cgemm 128³ 96 → 88, zgemm 128³ 48 → 37;
///   cgemm 256³ 101 → 66).
///
/// Past the limits haswell packs both A and B. Packing only A with B in place won for sgemm
/// NN from 384³ (96–110 against 98–103) but lost with NT (512³ 58–62 against 73–81) and for
/// dgemm (256³ 31–47 against 35–48), and the rule that picks it does not tell B's layouts
/// apart finely enough here.
/// k blocks as in skx, but sized for the smaller L2 of AVX2 CPUs (256–512 KiB): 128 KiB, a
/// guess, until session 52 measured on a Zen 3 with 512 KiB (C already in column blocks of
/// 128 KiB; one thread, ratio to OpenBLAS, two runs, 128 → 160 KiB): dgemm NN 48×4096×2048
/// 1.06–1.17 → 1.13–1.29, 40×1000×1000 1.16–1.30 → 1.35–1.40, TN 48×4096×2048 1.09–1.16 →
/// 1.27–1.29; sgemm NN level or better (80×1000×1000 1.17 → 1.16–1.24), but TN 48×2048×2048
/// 1.04–1.09 → 0.90–1.02. 192 KiB leaves an A of up to 384 KiB whole, three quarters of
/// the L2, and sgemm TN 48×4096×2048 then read anywhere from 0.65 to 1.58 from one process
/// to the next (docs/Performance.md, "C in column blocks").
/// B with long rows (row-stored, NT) is walked in k blocks spanning at most 2 MiB (forced
/// haswell, sgemm NT 16×4096×4096 21 → 64 GFLOPS, 64×4096×1024 35 → 66, dgemm 11 → 27,
/// the rest level or better; 512 KiB, skx's value, lost up to 19 % on dgemm
/// 64×4096×1024; docs/Performance.md, "Row-stored B").
/// A's columns further apart than 512 bytes are still read in place for C of 4–64 columns,
/// where they spread over the L1's sets (session 31, forced haswell, one thread, GFLOPS,
/// before → after): dgemm 3000×5×50 31.3 → 48.4, 2000×12×200 31.6 → 46.9, 1000×4×300
/// 32.7 → 43.1, 3000×64×50 48.6 → 52.8; sgemm 3000×5×50 68.2 → 101.8, 3000×4×50 74.8 → 97.2,
/// 600×48×600 95.3 → 105.9; only sgemm 1000×8×300 lost (88.4 → 85.4). At 3 columns sgemm
/// lost (98.6 → 80.3), so the gemv columns kernel keeps 1–3 (docs/Performance.md, "Far-apart
/// columns of A in place").
const SUP_LIMITS: SupLimits = SupLimits {
    max_a_col_stride_bytes: 512,
    max_a_bytes: 4 << 20,
    far_a_min_n: 4,
    far_a_max_n: 64,
    // As for C's columns: not measured apart.
    far_a_min_n_c_rows: 4,
    // Never: measured on skx only (session 55).
    far_a_max_short_k: 0,
    k_block_bytes: 160 << 10,
    // Inert while haswell never packs only A.
    max_c_bytes_if_k_split: usize::MAX,
    // Session 52 (the Zen 3, 512 KiB L2, one thread, all of C per k block → blocks of 128
    // KiB, with A's slices of 128 KiB then; ratio to OpenBLAS): sgemm NN
    // 100×4096×1000 0.86 → 1.09, 128×2048×1000 0.96 → 1.10, TN 64×4096×2048 1.13 → 1.27;
    // dgemm NN 48×4096×2048 0.90 → 1.19, 32×4096×1100 1.11 → 1.35; NT level; blocks of
    // 240–720 columns read alike. Inside row blocks (a tall A) it lost: dgemm NN
    // 1000×200×1000 0.95–0.97 → 0.90, so those keep all columns (docs/Performance.md, "C in
    // column blocks where the sup path splits k").
    c_block_bytes_if_k_split: 128 << 10,
    max_b_k_span_bytes: 2 << 20,
    pack_a_only: PackAOnly::Never,
    // Forced haswell, session 34: 1.07–1.37× as it is up to dgemm m = 18 and sgemm m = 27,
    // but sgemm 33×64×40 0.89 and 63×96×96 0.93 (docs/Performance.md, "TT transposed past
    // 60 bytes").
    max_transposed_partial_column_bytes: 128,
    // Never: with haswell's kernels forced on a Zen 4 (session 54, not their hardware) skx's
    // rule at k ≥ 32 was mixed (dgemm NT 5×48×32 3.2×, sgemm 9×48×32 1.76×, but sgemm
    // 17×300×32 0.80, dgemm 9×300×200 0.88, 13×64×64 0.95).
    nt_partial_column_min_k: usize::MAX,
    // Forced haswell, session 35: TT transposed won with few columns (2³–24³ 1.03–1.5×,
    // 96×16×96 1.05–1.29, 128×32×128 1.09–1.11) and lost on squares from 32³ (sgemm 32³–128³
    // 0.82–0.91, dgemm 32³–64³ 0.93–0.98; sgemm 16³ 0.97) and at n = 48–64 whatever k (sgemm
    // 200×100×200 0.88). No rule in k and n alone was found: never.
    tt_transposed: None,
    pack_b_rows: &PACK_B_ROWS,
    // Session 39 (the Zen 3, 1 MiB L2; `cblas_{s,d}gemm` TN, one thread, by blocks against
    // copied whole): dgemm 64×64×4096 1.11–1.64, 64×32×8192 1.49–2.07, 32×64×4096
    // 1.06–1.09, 48×200×4096 1.09–1.19, 128×{64,128}×2048 0.99–1.01, 200×16×4096 0.94–1.02;
    // sgemm 64×64×4096 1.08–1.22, 64×32×8192 1.14–1.21, 128×64×2048 1.11–1.16, 200×16×4096
    // 0.97–1.05. Smaller copies were mixed: 16×200×4096 0.96 in both dtypes, sgemm
    // 128×32×1024 1.12–1.15. Those runs packed in KC slices; in the sup path's k slices,
    // kept for the bits' sake, dgemm read 1.41 and 1.87 on the first two (docs/Performance.md,
    // "Copies of A by blocks").
    a_by_blocks_min_copy_bytes: 1 << 20,
    // Session 47 (the Zen 3, one thread, NT, GFLOPS, in place → copied, C of 4+ row tiles):
    // sgemm 64×64×4096 49.5 → 52.6, 64×64×1024 44.9 → 50.3, 128×128×1024 58.7 → 63.5,
    // 64×256×1024 40.0 → 47.5; dgemm 64×64×1024 25.5 → 27.9, 64×64×256 32.4 → 37.3,
    // 64×256×1024 27.3 → 32.6; the rest level. A prototype copying from k = 32 lost on
    // small problems (sgemm 32³ −9 %, 200×8×200 −7 %; docs/Performance.md, "B's panels
    // copied").
    pack_b_panels_min_k: 256,
    // Session 48 (the Zen 3, one thread, NT and NN, call by call, A in place → by blocks):
    // dgemm (A's columns 512 bytes apart) 64×64×4096 (2 MiB) +5–10 %, 64×32×8192 +14–18 %,
    // but 64×64×2048 (1 MiB) −9–11 %; sgemm with columns 512 bytes apart 128×128×4096
    // +7–12 %, 128×64×4096 +2 %, but 256 bytes apart 64×64×8192 −5 %, 64×32×16384 −7 %
    // (docs/Performance.md, "A in place packed by blocks").
    in_place_a_by_blocks_min_bytes: 2 << 20,
    in_place_a_by_blocks_min_col_bytes: 512,
};

/// When op(B)'s contiguous rows go to the loop nest (`SupLimits::pack_b_rows`), for every
/// dtype:
/// * Any rows past 4 MiB, for C of at most 128 rows. Session 37 (a Zen 3, one thread, NT):
///   dgemm 8×4096×4096 3.9 → 4.9 GFLOPS, 32×2048×2048 12.4 → 15.0, 32×8192×256 8.3 → 17.1,
///   sgemm 64×2048×2048 28.5 → 40.5; C of 5–128 rows and 2048–8192 columns gained 1.08–2.07×,
///   96 rows of 1024 columns read 0.97–1.03 and 240 rows 0.95, hence the 128 (docs/
///   Performance.md, "One A block: B blocks of its size").
/// * Rows in few L1 sets past 384 KiB, for C of four row tiles per thread up to 128 rows.
///   Session 49 (the Zen 3, one thread, NT, in place → loop nest): sgemm 128×4096×256
///   1.23–1.70, 64×2048×512 1.40–1.55, 100×1024×1000 1.30–1.52, 128×1024×1024 1.12, dgemm
///   64×2048×128 1.22–1.30, 64×1024×64 (512 KiB) 1.17; at 384 KiB sgemm 64×1024×96 0.97, at
///   256 KiB level; with fewer row tiles packing lost (sgemm 16×4096×256 0.79, dgemm
///   16×2048×256 0.90), past 128 rows it was level; cgemm and zgemm gained alike (cgemm
///   64×2048×256 1.84, zgemm 32×512×256 1.76, none lost; "B's rows in few L1 sets"). Teams
///   were not measured; their row tiles are counted per thread as skx measured (session 53).
const PACK_B_ROWS: [PackBRows; 2] = [
    PackBRows {
        b_bytes_over: 4 << 20,
        min_row_stride_bytes: 0,
        only_in_few_l1_sets: false,
        min_m: 0,
        max_m: 128,
        min_row_tiles_per_thread: 0,
    },
    PackBRows {
        b_bytes_over: 384 << 10,
        min_row_stride_bytes: 0,
        only_in_few_l1_sets: true,
        min_m: 0,
        max_m: 128,
        min_row_tiles_per_thread: 4,
    },
];

/// [`SUP_LIMITS`] for cgemm and zgemm:
/// * They copy op(A) whole: by blocks they read 0.83–0.94 at cgemm TN 64×64×{2048,4096} and
///   level or mixed elsewhere (session 39).
/// * Far-apart columns of A are read in place only for C of 4–16 columns: the complex tiles
///   are 3 columns wide, so each A column is read once per 3 columns of C, twice as often as
///   with the real tiles the 64-column limit was measured with. Session 46 (a Zen 3, one
///   thread, NN and NT, GFLOPS, in place → packed): zgemm 64×64×4096 21.1 → 26.9 and 16.9 →
///   24.3, 64×64×512 24.0 → 32.4, 300×24×300 25.8 → 30.1, 200×32×400 24.5 → 29.5; cgemm
///   600×48×600 44.0 → 63.7, 128×64×4096 40.0 → 54.6, 300×24×300 53.1 → 59.6. With few
///   columns, in place still wins (packed → in place): cgemm 200×8×200 NT 42.3 → 56.4,
///   zgemm 3000×5×50 NN 17.2 → 21.2, 100×16×300 level or better (docs/Performance.md,
///   "Far-apart columns of a complex A").
const COMPLEX_SUP_LIMITS: SupLimits = SupLimits {
    a_by_blocks_min_copy_bytes: usize::MAX,
    far_a_max_n: 16,
    // Not measured with the complex kernels: B's panels stay in place, and so does A.
    pack_b_panels_min_k: usize::MAX,
    in_place_a_by_blocks_min_bytes: usize::MAX,
    in_place_a_by_blocks_min_col_bytes: usize::MAX,
    ..SUP_LIMITS
};

/// When the tall-A kernels (one ymm of rows by up to 12 columns, A read in place) beat
/// packing: A of at least 4 MiB, where the sup path stops (forced haswell on the development
/// machine, session 32; docs/Performance.md). Up to 12 MiB in KC blocks (`TALL_KC`); past
/// that, from memory, by k blocks of 8 columns down all the rows, C of up to 24 columns
/// (frame/l3/tall.rs). Measured on a Zen 3 (session 40, one thread, against packing, which
/// served A past 24 MiB since session 38, and OpenBLAS; docs/Performance.md, "The tall path
/// from memory by narrow k blocks"):
/// * 4096×n×4096 dgemm, n = 2–16: 1.09–1.99× packing, 0.97–1.71× OpenBLAS; sgemm
///   (n = 4–16) 1.30–2.08×, 1.06–1.56×. n = 24 (two groups of 12): 1.01–1.08× packing,
///   0.89–0.93 of OpenBLAS.
/// * k blocks of 4 or 16 columns ran 0.56–0.86 of 8's; passes of 2048 rows 0.89–0.97 of
///   4096's; groups of 8 columns for n = 16 0.99–1.02 of 12 + 4.
/// * Between 4 and 24 MiB the narrow blocks against KC blocks: dgemm 1448×12×1448 (16.8 MB)
///   1.62, 1500×5×1500 1.24, 1700×8×1700 1.40, sgemm 2400×8×2400 1.70, 2000×16×2000 1.18,
///   but sgemm 1448×12×1448 (8.4 MB) 0.78, 1200–1700 (6–12 MB) 0.90–0.92 and dgemm
///   1000×4×1000 0.97: hence 12 MiB (dgemm 1200×8×1200, 11 MiB, read 1.48 and stays below).
const TALL_LIMITS: TallLimits = TallLimits {
    min_a_bytes: 4 << 20,
    max_a_bytes: 12 << 20,
    from_memory_kc: 8,
};
/// k block of the tall-A path (as skx's), and the prefetch one tile ahead: at that tile's
/// last row, 63 bytes on, which is the next line where columns start on one. Two tiles (the
/// line after) and four lost (forced haswell, one thread: dgemm 4096×12×4096 30.0 against
/// 24.8 and 23.6 GFLOPS, 4096×8×4096 24.6 against 18.8 and 16.6; sgemm 3–9 %).
const TALL_KC: usize = 256;
const TALL_PREFETCH_TILES: usize = 1;

/// The widest C computed by the gemv columns kernel where A's columns are too far apart for
/// the sup kernels, instead of packing A. With 16 registers this kernel takes 2 columns of A
/// per pass for 3–4 columns of C (skx: 4). Measured in session 30 (through
/// `cblas_{s,d}gemm` NN, one thread, GFLOPS, packing A → columns): dgemm 1000×2×100 10.3 →
/// 35.4, 1000×4×100 18.9 → 36.6, 1000×8×300 25.1 → 32.5, but 1000×16×300 36.1 → 32.2 and
/// 600×32×600 41.2 → 39.2; sgemm 1000×8×300 50.3 → 85.7, 1000×16×300 72.8 → 85.5
/// (docs/Performance.md). Since session 31 the sup kernels take 4–64 columns where A's
/// columns spread over the L1's sets (`SUP_LIMITS`), so past 3 columns this kernel serves
/// only columns 4 or 6 KiB apart.
const GEMV_COLUMNS_MAX_N: usize = 8;

/// The largest op(A) of a tall TN C (up to 28 columns) that the dots kernels take whatever
/// its rows (`GemmKernel::with_tall_dots`). Measured with these kernels forced on a Zen 4
/// (session 58; not this configuration's own hardware): 1.04–1.34× the tile path up to 2 MiB
/// (sgemm 64×13×1166 1.16×, 200×10×1000 1.34×, 500×12×500 1.26×, dgemm 500×12×500 1.26×),
/// and lost from 4 MiB (sgemm 1000×28×1000 0.83, 2000×16×1000 0.90, dgemm 500×28×1000 0.95).
const TALL_DOTS_MAX_A_BYTES: usize = 2 << 20;

/// The longest rows (bytes) of a wide TN C of 9–28 rows that do not fill the sup kernel's
/// vectors that the dots kernels take (`GemmKernel::with_wide_dots`), as on skx. Measured
/// with these kernels forced on a Zen 4 (session 58; not this configuration's own
/// hardware), dots against the tile path: sgemm 13×64×1000 1.15×, 12×100×500 1.34×,
/// 10×200×1000 1.31×, 20×200×1000 1.02×; dgemm 13×64×1000 1.20×, 17×100×1000 1.10×; none
/// lost (rows that fill the 256-bit vectors, dgemm 12, 20, 28, stay on the tile path).
const WIDE_DOTS_MAX_ROW_BYTES: usize = 800;

fn context() -> Cntx {
    #[rustfmt::skip]
    let (s, d, c, z) = (
        //           MR        NR       KC         MC         NC
        Blocksizes { mr: 16, nr: 6, kc: 384, mc: 240, nc: 4080 },
        Blocksizes { mr: 8,  nr: 6, kc: 256, mc: 240, nc: 4080 },
        Blocksizes { mr: 8,  nr: 3, kc: 256, mc: 192, nc: 4080 },
        Blocksizes { mr: 4,  nr: 3, kc: 256, mc: 96,  nc: 4080 },
    );
    // SAFETY: each kernel implements the GemmUkr contract for exactly these MR×NR and needs
    // only AVX2 and FMA, which this configuration requires.
    let (sgemm, dgemm, cgemm, zgemm) = unsafe {
        (
            GemmKernel::new("haswell_f32_16x6", haswell::gemm_f32_16x6, false, s),
            GemmKernel::new("haswell_f64_8x6", haswell::gemm_f64_8x6, false, d),
            GemmKernel::new("haswell_c32_8x3", haswell::gemm_c32_8x3, false, c),
            GemmKernel::new("haswell_c64_4x3", haswell::gemm_c64_4x3, false, z),
        )
    };
    // SAFETY: as above, for the sup contract with these tiles.
    let (s_sup, d_sup) = unsafe {
        (
            SupKernel::new(
                "haswell_sup_f32_16x6",
                haswell::sup_f32_16x6,
                16,
                6,
                SUP_LIMITS,
            ),
            SupKernel::new(
                "haswell_sup_f64_8x6",
                haswell::sup_f64_8x6,
                8,
                6,
                SUP_LIMITS,
            ),
        )
    };
    // SAFETY: as above, for the sup contract with the complex tiles (the packed kernels'
    // MR×NR, so they serve the packed path's edge tiles too).
    let (c_sup, z_sup) = unsafe {
        (
            SupKernel::new(
                "haswell_sup_c32_8x3",
                haswell::sup_c32_8x3,
                8,
                3,
                COMPLEX_SUP_LIMITS,
            ),
            SupKernel::new(
                "haswell_sup_c64_4x3",
                haswell::sup_c64_4x3,
                4,
                3,
                COMPLEX_SUP_LIMITS,
            ),
        )
    };
    // SAFETY: as above, for the tall-A contract with these tiles.
    let (s_tall, d_tall) = unsafe {
        (
            TallKernel::new(
                "haswell_tall_f32_8x12",
                haswell::tall_f32_8x12,
                (8, 12),
                TALL_KC,
                TALL_PREFETCH_TILES,
                TALL_LIMITS,
            ),
            TallKernel::new(
                "haswell_tall_f64_4x12",
                haswell::tall_f64_4x12,
                (4, 12),
                TALL_KC,
                TALL_PREFETCH_TILES,
                TALL_LIMITS,
            ),
        )
    };
    // A second thread repays itself from about 2 × 128³ multiply-adds on the development
    // machine (dgemm 128³ ran no faster on two threads than on one; docs/Performance.md).
    use haswell::{transpose_c32_8x8, transpose_f32_8x8, transpose_f64_8x8};
    Cntx {
        // SAFETY: the gemv, columns and dots kernels implement the GemvUkr, GemvColumnsUkr and
        // DotsUkr contracts, and the (AVX) packing kernels the TransposeUkr contract, with
        // this configuration's features.
        sgemm: unsafe {
            sgemm
                .with_sup(s_sup)
                .with_tall(s_tall)
                .with_gemv(haswell::gemv_f32)
                .with_gemv_columns(haswell::gemv_columns_f32, GEMV_COLUMNS_MAX_N)
                .with_dots(haswell::dots_f32)
                .with_tall_dots(TALL_DOTS_MAX_A_BYTES)
                .with_wide_dots(WIDE_DOTS_MAX_ROW_BYTES)
                .with_pack_transposes(transpose_f32_8x8, transpose_f32_8x8)
        },
        // SAFETY: as above.
        dgemm: unsafe {
            dgemm
                .with_sup(d_sup)
                .with_tall(d_tall)
                .with_gemv(haswell::gemv_f64)
                .with_gemv_columns(haswell::gemv_columns_f64, GEMV_COLUMNS_MAX_N)
                .with_dots(haswell::dots_f64)
                .with_tall_dots(TALL_DOTS_MAX_A_BYTES)
                .with_wide_dots(WIDE_DOTS_MAX_ROW_BYTES)
                .with_pack_transposes(transpose_f64_8x8, transpose_f64_8x8)
        },
        // SAFETY: as above.
        cgemm: unsafe {
            cgemm
                .with_sup(c_sup)
                .with_gemv(haswell::gemv_c32)
                .with_pack_transposes(transpose_c32_8x8, transpose_c32_8x8)
        },
        // SAFETY: the complex gemv kernel implements GemvUkr with this configuration's
        // features (c64 packs with the portable loop: 16-byte elements move whole anyway).
        zgemm: unsafe { zgemm.with_sup(z_sup).with_gemv(haswell::gemv_c64) },
        threads: ThreadPrefs {
            min_work_per_thread: MIN_WORK_PER_THREAD,
        },
        ..generic::reference_context("haswell")
    }
}
