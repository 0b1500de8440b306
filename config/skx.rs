//! `skx`: AVX-512 CPUs (Skylake-X, Cascade Lake, Ice Lake, Sapphire Rapids without AMX, Zen
//! 4), chosen by CPU features alone. AVX-512 kernels for every dtype: packed and sup for f32,
//! f64, c32 and c64; gemv for all four; tall-A, dots (short, wide C) and short-k (k ≤ 16) for
//! f32 and f64.
//!
//! Blocksizes: started from the textbook reasoning (the B micropanel, KC×12, in the 32 KiB
//! L1 while A micropanels stream from L2, the A block, MC×KC, in the 1 MiB L2, NC·KC a share
//! of the L3) and BLIS's skx values (KC 384, MC 480 / 240), then swept on the development
//! machine (single thread, square 256…3072; docs/Performance.md). sgemm KC 512 / MC 256 was
//! best or tied at every size (106–107 GFLOPS against 102–106 for 384/480). dgemm: KC 384 /
//! MC 240 until session 32; KC 768 / MC 256 (an A block of 1.5 MiB, past the L2) is 2–5 %
//! faster from 768³ up, NN, TN and NT, and level below (blasbench, alternated: 1024³ 50.8 →
//! 53.7, 3072³ 51.6 → 53.4 GFLOPS). Large problems run the packed-A path, whose sup kernel
//! reads B in place; a deeper k block halves the tiles' C updates and loop starts. KC 256 or
//! 320 lost 1–3 %, 512 / 256 gained less, 1024 / 256 tied. sgemm KC 768 or 1024 gained
//! 1–3 % at 1024³…3072³ but lost 4–5 % at k = 200…256, so stays. The complex blocks follow
//! the cache reasoning (A micropanel 16×256 or 8×256 complex = 32 KiB, A block 384 KiB),
//! not yet swept.

use crate::cntx::{
    Blocksizes, Cntx, GemmKernel, PackAOnly, PackBRows, SupKernel, SupLimits, TallKernel,
    TallLimits, ThreadPrefs, TransposedRemainder, TtTransposed,
};
use crate::config::{Features, SubConfig, generic};
use crate::kernels::{haswell, skx};

/// The `skx` sub-configuration.
pub const SKX: SubConfig = SubConfig {
    name: "skx",
    requires: Features::AVX512F
        .union(Features::AVX512DQ)
        .union(Features::AVX512BW)
        .union(Features::AVX512VL),
    context,
    os_check: None,
};

/// Multiply-adds (m·n·k) per thread before automatic threading adds a thread: 2^18 (64×64×64).
/// Two threads against one on the 2-vCPU VM (sgemm / dgemm GFLOPS), once the sup path and
/// outer products ran on teams: 64×64×128 106 → 170 / 55 → 92, 96³ 114 → 207 / 56 → 98,
/// 128³ 97 → 175 / 57 → 100, 16×256×256 104 → 189 / 58 → 108 (docs/Performance.md, "Small
/// problems on two threads"). Under 2^19 (80³) two threads did not pay.
const MIN_WORK_PER_THREAD: usize = 1 << 18;

/// When the sup kernels beat packing. Measured on the development machine (skx kernels,
/// single thread, sup against packed, docs/Performance.md): sup wins by 5–120 % up to 384³
/// (and 512³ in f32), on 16×4096×4096, 64×64×4096 and 64×2048×2048, and loses (14 against
/// 33 GFLOPS) on 4096×16×4096 and 4096×4096×16, where A's columns are 16 KiB apart and each
/// k step of a tile touches a new page; f64 512³ (4 KiB apart) also goes to packing.
/// k is split when A passes 512 KiB, into blocks whose slice of A is 256 KiB, a quarter of
/// the L2: 64×64×4096 dgemm 44 → 49 GFLOPS, 128×128×2048 49 → 52, 64×2048×2048 42 → 44;
/// 16×4096×4096 (A 512 KiB, stays whole) lost 47 → 41–43 when split.
/// Past these limits, one thread packs only A where B reads well in place: against the
/// loop nest (interleaved runs, medians) dgemm 384³–2000³ −0.6 … +5.5 % (mostly +2–5 %),
/// cgemm 384³–1200³ +2–3 %, zgemm +2.5–6 %; B at a 4 KiB multiple stride (512³, 1024³)
/// loses 5–24 %, hence the check, and 4096×4096×16/64 2–5 %, hence k ≥ min(KC/2, 256)
/// (docs/Performance.md, "Packing only A").
/// Within the limits, a problem whose k would be split with C over 512 KiB (half the L2)
/// packs only A too: against the sup path dgemm 256×512×512 and 256×1024×1024 +4–6 %,
/// sgemm 512³ +3–4 %, zgemm 128×1024×1024 +9 %; below it the sup path stays ahead, by up to
/// 10 % where n is small (docs/Performance.md, "Sup or packed A").
/// k is also split so that a block of B spans at most 512 KiB along k: B with long rows
/// (row-stored, NT) otherwise touches a new page every k step of every tile (sgemm NT
/// 16×4096×4096 37 → 65 GFLOPS, 64×2048×2048 50 → 102, 64×4096×1024 62 → 97; dgemm 17 → 39,
/// 38 → 43, 24 → 41; 1 MiB was better for m = 64 and worse for m = 16, 256 KiB the other
/// way round; docs/Performance.md, "Row-stored B").
/// A's columns further apart than 2 KiB are still read in place for C of 5–64 columns, where
/// they spread over the L1's sets (session 31, one thread, GFLOPS, before → after, with the
/// sup path's row blocks): dgemm 3000×5×50 38.2 → 53.9 (OpenBLAS 54.0), 1000×16×300
/// 47.6 → 55.4, 3000×32×50 46.4 → 56.2; sgemm 3000×5×50 84.4 → 110.9, 1000×16×300 88.8 →
/// 111.9; 48–64 columns +5–13 % (dgemm 2000×64×200 level); NT sgemm 8×1000×1000, solved
/// transposed, 63.8 → 101.6. 3–4 columns stay with the gemv columns kernel (one pass over A;
/// sup 0.90–1.10), and 96–128 gained in f32 only (dgemm 0.97–1.00). Columns 4 KiB apart
/// (and 6 KiB) share L1 sets, and there the sup kernel lost: dgemm 512×8×200 0.82,
/// 2048×16×64 0.77 (docs/Performance.md, "Far-apart columns of A in place").
const SUP_LIMITS: SupLimits = SupLimits {
    max_a_col_stride_bytes: 2048,
    max_a_bytes: 4 << 20,
    far_a_min_n: 5,
    far_a_max_n: 64,
    // Session 55 (one thread, transposed sup against the gemv columns kernel through its
    // buffer; TT, and NT from the short, wide rule's k): 3 rows of C gained 1.06–1.22×
    // (dgemm TT 3×1000×16 1.19, sgemm NT 3×600×64 1.22), 4 rows 1.11–1.53× (dgemm TT
    // 4×1000×16 1.31, sgemm TT 4×2000×8 1.53, NT 4×2000×32 1.30); 2 rows lost (sgemm TT
    // 2×1000×16 0.88, 2×1000×128 0.90). C's columns (NN 1000×4×k) stay with the columns
    // kernel: the sup kernel lost there (0.62–0.91).
    far_a_min_n_c_rows: 3,
    // Session 55 (one thread, NN, two alternated runs, in place against packed A, k = 4–32,
    // n = 50–300): dgemm 323×n 1.0–1.24×, 515×n 1.07–1.19×, 1000×n 1.0–1.33×; sgemm 515×n
    // 1.10–1.47×, 1000×n 1.0–1.40×, 1536×n 1.0–1.24×. At 4 KiB multiples (16 columns' lines
    // in one set: dgemm 512, 1024, 1536 rows; sgemm 1024, 2048) it was mixed (0.85–1.22×),
    // hence `sup::columns_fit_l1_ways`. From k = 48 not measured apart.
    far_a_max_short_k: 32,
    k_block_bytes: 256 << 10,
    max_c_bytes_if_k_split: 512 << 10,
    // Not measured on AVX-512 hardware (session 52 measured haswell's on a Zen 3).
    c_block_bytes_if_k_split: usize::MAX,
    max_b_k_span_bytes: 512 << 10,
    pack_a_only: PackAOnly::WhenBSpreadsOverL1,
    // Measured up to 256 bytes (sgemm m = 63, dgemm m = 31): 1.04–1.43× as it is (session 34;
    // docs/Performance.md, "TT transposed past 60 bytes").
    max_transposed_partial_column_bytes: 256,
    // Session 54 (one thread, two alternated runs, transposed against as it is; NT with C's
    // last vector neither whole nor half: sgemm m % 8 ≠ 0, dgemm m % 4 ≠ 0): k = 32–40
    // sgemm 9×n 1.49–1.56×, 10×n 1.36–1.47×, 12×n 1.18–1.21×, 13×48 1.04–1.06×, 17×n
    // 1.36–1.42×; dgemm 5×n 1.39–1.40×, 6×n 1.20–1.22×, 7×n 1.06–1.11×, 9×n 1.38–1.41× (n = 48,
    // 300); k = 64–200 sgemm 17×300×200 1.46×, 50×300×200 1.09×, dgemm 9×300×200 1.45×,
    // 25×64×64 1.12×; none under 0.97. At k = 15 it lost (sgemm 13×64×15 0.86, 50×64×15
    // 0.90), at k = 4–8 most m did (sgemm 40×64×4 0.65), and a last vector of half width
    // (sgemm 24, 40; dgemm 12, 20) was level or lost (sgemm 40×n×32 0.90–0.93): hence the
    // rule's test on a quarter of MR (docs/Performance.md, "NT C of partial vectors").
    nt_partial_column_min_k: 32,
    // Session 35 (docs/Performance.md, "TT squares and tall TT transposed"): k ≥ n gained
    // 1.00–1.26× on dgemm (32³ 41.2 → 52.0) and up to 1.28× on sgemm (96×16×96), with sgemm
    // squares of 64³–300³ level; k < n lost (sgemm 96×96×32 0.91, 500×500×64 0.94).
    // On two threads sgemm TT 400³ and 500³ lost (0.92, 0.90; 300³ gained 1.26, dgemm 300³–
    // 800³ level), and one thread gains little past 512 KiB (500³ 1.01). From k = 1: 2³–28³
    // gained 1.23–1.55×.
    tt_transposed: Some(SUP_TT_TRANSPOSED),
    pack_b_rows: &PACK_B_ROWS,
    // Session 41 (a Zen 4, one thread, docs/Performance.md "op(A) by blocks on skx"): from
    // 1 MiB, dgemm TN and TT 64×64×4096, 32×32×8192, 128×128×2048, 64×32×8192, 96×96×4096,
    // 200×200×2048 gained 1.14–1.74×, sgemm 1.04–1.25×; sgemm with fewer rows than MR lost
    // (16×16×16384 0.82), which `SupKernel::packs_a_by_blocks` now leaves whole.
    a_by_blocks_min_copy_bytes: 1 << 20,
    // Never: the rule was measured with haswell's kernels on a Zen 3 (session 47), not here.
    pack_b_panels_min_k: usize::MAX,
    // Never: measured with haswell's kernels on a Zen 3 (session 48), not here.
    in_place_a_by_blocks_min_bytes: usize::MAX,
    in_place_a_by_blocks_min_col_bytes: usize::MAX,
};

/// sgemm tiles of 17–22 rows (16 + r) with B's rows contiguous: the r rows computed
/// transposed (`sup::split_remainder_transposed`, where the measurements are). r = 7 and 8
/// were level or lost (23×9×200 0.93, 24×10×200 0.92, 24×12×48 0.95).
const S_TRANSPOSED_REMAINDER: TransposedRemainder = TransposedRemainder {
    max_rows: 6,
    max_columns: 12,
};

/// dgemm tiles of 9–11 rows (8 + r) and at most 10 columns with B's rows contiguous: the r
/// rows computed transposed (`sup::split_remainder_transposed`).
const D_TRANSPOSED_REMAINDER: TransposedRemainder = TransposedRemainder {
    max_rows: 3,
    max_columns: 10,
};

/// When op(B)'s contiguous rows go to the loop nest (`SupLimits::pack_b_rows`), for every
/// dtype; both rules for rows at least 12 KiB apart, past 384 KiB of B and with four row
/// tiles per thread. Session 53 (a Zen 4, NT and TT, in place → loop nest, ratio to
/// OpenBLAS; docs/Performance.md, "B's far-apart rows to the loop nest on skx"):
/// * Rows in few L1 sets, C of any height: read in place they ran 0.25–0.5 of OpenBLAS from 8
///   row tiles (one thread: dgemm 128×8192×128 0.26 → 1.52, 256×8192×1024 0.25 → 1.23,
///   192×8192×128 0.24 → 1.46, 256×4096×256 0.47–0.69 → 1.29; sgemm 256×8192×128 0.38 →
///   1.10, 512×8192×64 0.43 → 1.10, 512×4096×256 0.67 → 1.05; TT dgemm 256×8192×128 0.31 →
///   1.42; zgemm 128×8192×128 0.51 → 1.14, cgemm 0.75–0.79 → 1.14), and from 4 gained less
///   (dgemm 64×8192×128 1.12 → 1.52, 128×4096×1024 1.21 → 1.44). Rows 8 KiB apart lost
///   packed at 4–8 row tiles (dgemm 64×1024×1024 1.63 → 1.45, sgemm 128×2048×1000 1.17 →
///   1.11); 12 KiB gained in dgemm (256×3072×512 0.93 → 1.28, 128×3072×512 1.22 → 1.42;
///   64×1536×1024 1.59 → 1.52) and was level in sgemm. 128 KiB lost where B was 384 KiB
///   (dgemm 128×4096×12 1.23 → 1.12), 1 MiB kept 256×8192×16 in place (0.75 against 1.57).
///   On two threads the loop nest's team lost where C had fewer than four row tiles per
///   thread (sgemm 128×4096×256 0.69, 192×4096×512 0.87, dgemm 64×1536×1024 0.93 of in
///   place) and gained from four (dgemm 128×4096×1024 1.11, 256×8192×128 2.9).
/// * Any rows, C of 128 rows or more: dgemm 172×7548×517 0.84 → 1.36, 172×7548×256 0.65 →
///   1.38, 256×6000×300 0.64 → 1.24, 256×7548×60 0.37 → 1.57, 256×7548×16 0.74 → 1.42;
///   sgemm 256×7548×517 0.93 → 1.07, 256×7548×120 0.68 → 1.11, 256×7548×32 0.93 → 1.14. With
///   64–80 rows dgemm lost (64×2500×3000 1.86 → 1.53, 64×4500×1200 1.64 → 1.50), and rows
///   under 12 KiB apart were mixed (dgemm 200×700×700 −7 %, sgemm 300×2900×500 +11 %). Two
///   threads: dgemm 128×7548×517 +34 %, sgemm 256×6000×300 +25 %, 256×3000×2000 −5 %.
///   Session 41 had tried haswell's rule (past 4 MiB, up to 128 rows), which C of one or two
///   row tiles lost (0.44–1.00 of reading B in place: dgemm 8×8192×2048 0.44).
const PACK_B_ROWS: [PackBRows; 2] = [
    PackBRows {
        b_bytes_over: 384 << 10,
        min_row_stride_bytes: 12 << 10,
        only_in_few_l1_sets: true,
        min_m: 0,
        max_m: usize::MAX,
        min_row_tiles_per_thread: 4,
    },
    PackBRows {
        b_bytes_over: 384 << 10,
        min_row_stride_bytes: 12 << 10,
        only_in_few_l1_sets: false,
        min_m: 128,
        max_m: usize::MAX,
        min_row_tiles_per_thread: 4,
    },
];

/// [`SUP_LIMITS`] for cgemm, whose TT problems stay as they are: transposed, squares lost
/// (32³–96³ 0.91–0.95 in session 35, `cargo bench --bench compare -- --dtype c --trans TT`),
/// though 96×16×96 gained 1.10. op(A) by blocks not measured for complex on skx (on haswell
/// it lost): copied whole.
const C32_SUP_LIMITS: SupLimits = SupLimits {
    tt_transposed: None,
    far_a_min_n_c_rows: SUP_LIMITS.far_a_min_n,
    far_a_max_short_k: 0,
    a_by_blocks_min_copy_bytes: usize::MAX,
    ..SUP_LIMITS
};

/// [`SUP_LIMITS`] for dgemm, whose TT problems with a C at least 4 times as tall as it is
/// wide also go transposed when k < n. As it is, op(A) (m·k elements, its rows contiguous)
/// is copied first, element by element where k is short, for a short k loop; transposed, the
/// kernel reads both operands in place and writes Cᵀ by rows. Session 55 (one thread, two
/// alternated runs, transposed against as it is, k = 2–30 < n): m = 791 and 2000, n = 7–64
/// 1.09–1.81× (791×7×5 1.81×, 2000×30×5 1.26×, 2000×64×30 1.09×); m = 48–400, n = 4–16
/// 1.27–1.93× (64×16×13 1.40×, 400×7×5 1.90×), except at m = 100, k = 2 (0.86–1.01) and
/// 200×17×2–5 (0.98).
const D_SUP_LIMITS: SupLimits = SupLimits {
    tt_transposed: Some(TtTransposed {
        min_rows_per_column: 4,
        ..SUP_TT_TRANSPOSED
    }),
    ..SUP_LIMITS
};

/// `SUP_LIMITS.tt_transposed` (measured: there), which [`D_SUP_LIMITS`] extends.
const SUP_TT_TRANSPOSED: TtTransposed = TtTransposed {
    min_k: 1,
    min_k_per_column: 1,
    // Tall C at short k gained only in dgemm ([`D_SUP_LIMITS`]); sgemm lost from 17 columns
    // (session 55, transposed against as it is: 200×17×2 0.62, 791×64×2 0.74, 2000×64×5
    // 0.90), and gained below 8 (791×7×5 1.51, 2000×7×5 1.52) but for 200×7×2 (0.74).
    min_rows_per_column: 0,
    max_b_bytes: 512 << 10,
};

/// [`SUP_LIMITS`] for zgemm, whose TT problems go transposed from k = 16: 16³ 1.10, 24³
/// 1.04, 32×8×8 1.15, 32³ 0.98, 64³–96³ 1.03–1.04, 96×16×96 1.23, but 4³ 0.77, 8³ 0.85, 12³
/// 0.92 (session 35, through `cblas_zgemm`). op(A) copied whole, as for cgemm.
const C64_SUP_LIMITS: SupLimits = SupLimits {
    far_a_min_n_c_rows: SUP_LIMITS.far_a_min_n,
    far_a_max_short_k: 0,
    tt_transposed: Some(TtTransposed {
        min_k: 16,
        min_k_per_column: 1,
        min_rows_per_column: 0,
        max_b_bytes: 512 << 10,
    }),
    a_by_blocks_min_copy_bytes: usize::MAX,
    ..SUP_LIMITS
};

/// The widest C computed by the gemv columns kernel (four columns a call, each vector of A
/// serving all four) where A's columns are too far apart for the sup kernels, instead of
/// packing A. Measured in session 30 (through `cblas_{s,d}gemm` NN, one thread, GFLOPS,
/// packing A → columns): dgemm 1000×2×100 13.1 → 40.8, 1000×4×100 22.8 → 54.2, 3000×5×50
/// 24.9 → 38.2, 1000×8×300 29.6 → 49.0, 1000×16×300 39.3 → 47.7, 600×32×600 44.6 → 50.8;
/// sgemm 1000×4×100 42.1 → 107.8, 1000×8×300 58.3 → 106.1, 1000×16×300 77.5 → 88.5,
/// 600×32×600 90.2 → 107.4 (docs/Performance.md). Past 32 columns not measured. Since
/// session 31 the sup kernels take 5–64 columns where A's columns spread over the L1's sets
/// (`SUP_LIMITS`), so past 4 columns this kernel serves only columns 4 or 6 KiB apart.
const GEMV_COLUMNS_MAX_N: usize = 32;

/// The largest op(A) of a tall TN C (up to 28 columns) that the dots kernels take whatever
/// its rows (`GemmKernel::with_tall_dots`): 1.15–1.63× the tile path up to 8 MiB (sgemm
/// 2000×16×1000 1.31×, dgemm 1000×16×1000 1.25×), 1.09× at 16 MiB (sgemm 4000×16×1000), lost
/// at 32–36 MiB (dgemm 4000×16×1000 0.67, sgemm 3000×28×3000 0.65); `frame/l3/dots.rs`.
const TALL_DOTS_MAX_A_BYTES: usize = 8 << 20;

/// The longest rows (bytes) of a wide TN C of 9–28 rows that do not fill the sup kernel's
/// vectors that the dots kernels take (`GemmKernel::with_wide_dots`): sgemm n ≤ 200, dgemm
/// n ≤ 100. Session 58, two runs, dots against the tile path: sgemm 13–28×64–200×1000
/// 1.10–1.69× (17×64×1000 1.69×, 20×200×1000 1.32×), dgemm 13–28×64–100×1000 1.07–1.27×;
/// dgemm at 200 columns was level or lost (20×200×1000 0.97, 13×200 1.04). Rows that fill
/// the vectors (sgemm 16; dgemm 16, 24) stay on the tile path (sgemm 16×200×256 0.94 as
/// dots, dgemm 16×64×2048 0.89); `frame/l3/dots.rs`.
const WIDE_DOTS_MAX_ROW_BYTES: usize = 800;

/// When the tall-A kernels beat packing: C with at most 24 columns (NT; 16 until session 32,
/// when 17–24 columns went from packing to the kernels: dgemm 4096×24×4096 31.6 → 47.2
/// GFLOPS, sgemm 64.4 → 96.3) and A of at least this many bytes (measured:
/// docs/Performance.md, "Skinny shapes"). Up to 24 MiB by KC blocks; past it from memory by
/// k blocks of 8 columns (up to 2·NT = 48 columns of C), measured in session 41 on a Zen 4
/// (AMD EPYC family 25 model 17, one thread, against packing A; docs/Performance.md, "skx
/// reads A from memory too"):
/// * dgemm 4096×n×4096, n = 2–48: 1.11–2.49× packing, 1.04–2.09× OpenBLAS (Cooperlake
///   kernels); sgemm n = 2–32: 1.22–2.29×; n = 48 0.99×. Two threads: dgemm 1.04–2.87×,
///   sgemm 0.95–2.57× (n = 48 the low end).
/// * k blocks of 4 columns ran 0.75–0.98 of 8's; of 16, 0.69–0.96 for n ≤ 8, 0.93–0.98 for
///   n = 16 and 1.00–1.06 for n = 24–40.
/// * Narrow blocks against KC blocks between 4 and 24 MiB lost in 12 of 15 shapes (sgemm
///   0.76–0.94, dgemm 0.79–1.27: 1700×8×1700, 23 MB, the best), so the maximum stays at
///   24 MiB.
///
/// Unmeasured on Intel: on the lent Xeon (session 38, family 6 model 207) A past 24 MiB by
/// KC blocks lost to packing (1.06–2.08×); these narrow blocks were never run there.
const TALL_LIMITS: TallLimits = TallLimits {
    min_a_bytes: 4 << 20,
    max_a_bytes: 24 << 20,
    from_memory_kc: 8,
};
/// k block of the tall-A path: 256 columns (a page each, at most, in the TLB; B's 256×W
/// block in L1), A prefetched 1 tile (the next 64-byte line of each column) ahead; swept on
/// the development machine (docs/Performance.md: 2 tiles, the best before session 32, lost
/// 3–10 % once the kernels computed only W columns).
const TALL_KC: usize = 256;
const TALL_PREFETCH_TILES: usize = 1;

fn context() -> Cntx {
    #[rustfmt::skip]
    let (s, d, c, z) = (
        //           MR        NR        KC         MC         NC
        Blocksizes { mr: 32, nr: 12, kc: 512, mc: 256, nc: 3072 },
        Blocksizes { mr: 16, nr: 12, kc: 768, mc: 256, nc: 3072 },
        Blocksizes { mr: 16, nr: 6,  kc: 256, mc: 192, nc: 3072 },
        Blocksizes { mr: 8,  nr: 6,  kc: 256, mc: 96,  nc: 3072 },
    );
    // SAFETY: each kernel implements the GemmUkr contract for exactly these MR×NR and needs
    // only AVX-512 F, which this configuration requires.
    let (sgemm, dgemm, cgemm, zgemm) = unsafe {
        (
            GemmKernel::new("skx_f32_32x12", skx::gemm_f32_32x12, false, s),
            GemmKernel::new("skx_f64_16x12", skx::gemm_f64_16x12, false, d),
            GemmKernel::new("skx_c32_16x6", skx::gemm_c32_16x6, false, c),
            GemmKernel::new("skx_c64_8x6", skx::gemm_c64_8x6, false, z),
        )
    };
    // bf16 → f32: with the BF16 extension, `vdpbf16ps` on pair-grouped panels; otherwise the
    // sgemm body widening bf16 on load. The sgemm tile and blocks (the packed bf16 blocks take
    // half the bytes; not tuned separately).
    let cpu = Features::detect();
    let reference = generic::reference_context("skx");
    let bgemm = if cpu.contains(Features::AVX512_BF16) {
        // SAFETY: implements GemmUkr for 32×12 in the 2-grouped layout with AVX-512 F and
        // BF16 (checked just above).
        unsafe {
            GemmKernel::new("skx_b16_32x12_dpbf16", skx::gemm_b16dp_32x12, false, s).with_k_group(2)
        }
    } else {
        // SAFETY: implements GemmUkr for 32×12 with AVX-512 F.
        unsafe { GemmKernel::new("skx_b16_32x12", skx::gemm_b16_32x12, false, s) }
    };
    // i8 × i8 and u8 × i8 → i32 with VNNI where the CPU has it (Cascade Lake and later;
    // Skylake-X keeps the reference kernels): packed in groups of 4 k; KC so a B panel
    // (12·1024 bytes) stays in L1 and an A block (256·1024) in L2.
    let int8 = Blocksizes {
        mr: 32,
        nr: 12,
        kc: 1024,
        mc: 256,
        nc: 3072,
    };
    let vnni = cpu.contains(Features::AVX512_VNNI);
    // SAFETY: both implement GemmUkr for 32×12 in the 4-grouped layout with AVX-512 F, BW
    // (required by skx) and VNNI (checked by `vnni`).
    let (igemm, ugemm) = unsafe {
        (
            vnni.then(|| {
                GemmKernel::new("skx_i8_32x12_vnni", skx::gemm_i8_32x12, false, int8)
                    .with_k_group(4)
            }),
            vnni.then(|| {
                GemmKernel::new("skx_u8i8_32x12_vnni", skx::gemm_u8i8_32x12, false, int8)
                    .with_k_group(4)
            }),
        )
    };
    // SAFETY: each implements the sup contract for exactly these tiles and needs AVX-512 F
    // and VL, both required by this configuration.
    let (s_sup, d_sup) = unsafe {
        (
            // Both compute their tiles 6 columns at a time (`kernels/x86/sup_real.rs`).
            SupKernel::new("skx_sup_f32_32x12", skx::sup_f32_32x12, 32, 12, SUP_LIMITS)
                .with_b_group(6)
                .with_transposed_remainder(S_TRANSPOSED_REMAINDER),
            SupKernel::new(
                "skx_sup_f64_16x12",
                skx::sup_f64_16x12,
                16,
                12,
                D_SUP_LIMITS,
            )
            .with_b_group(6)
            .with_transposed_remainder(D_TRANSPOSED_REMAINDER),
        )
    };
    // SAFETY: as above, for the sup contract with the complex tiles (the packed kernels'
    // MR×NR, so they serve the packed path's edge tiles too).
    let (c_sup, z_sup) = unsafe {
        (
            SupKernel::new("skx_sup_c32_16x6", skx::sup_c32_16x6, 16, 6, C32_SUP_LIMITS),
            SupKernel::new("skx_sup_c64_8x6", skx::sup_c64_8x6, 8, 6, C64_SUP_LIMITS),
        )
    };
    // SAFETY: as above, for the tall-A contract with these tiles.
    let (s_tall, d_tall) = unsafe {
        (
            TallKernel::new(
                "skx_tall_f32_16x24",
                skx::tall_f32_16x24,
                (16, 24),
                TALL_KC,
                TALL_PREFETCH_TILES,
                TALL_LIMITS,
            ),
            TallKernel::new(
                "skx_tall_f64_8x24",
                skx::tall_f64_8x24,
                (8, 24),
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
        // SAFETY: the gemv, columns, dots and short-k kernels implement the GemvUkr,
        // GemvColumnsUkr, DotsUkr and ShortKUkr contracts, and the (AVX) packing kernels the
        // TransposeUkr contract, with this configuration's features.
        sgemm: unsafe {
            sgemm
                .with_sup(s_sup)
                .with_tall(s_tall)
                .with_gemv(skx::gemv_f32)
                .with_gemv_columns(skx::gemv_columns_f32, GEMV_COLUMNS_MAX_N)
                .with_dots(skx::dots_f32)
                .with_tall_dots(TALL_DOTS_MAX_A_BYTES)
                .with_wide_dots(WIDE_DOTS_MAX_ROW_BYTES)
                .with_short_k(skx::short_k_f32)
                .with_pack_transposes(transpose_f32_8x8, transpose_f32_8x8)
        },
        // SAFETY: as above.
        dgemm: unsafe {
            dgemm
                .with_sup(d_sup)
                .with_tall(d_tall)
                .with_gemv(skx::gemv_f64)
                .with_gemv_columns(skx::gemv_columns_f64, GEMV_COLUMNS_MAX_N)
                .with_dots(skx::dots_f64)
                .with_tall_dots(TALL_DOTS_MAX_A_BYTES)
                .with_wide_dots(WIDE_DOTS_MAX_ROW_BYTES)
                .with_short_k(skx::short_k_f64)
                .with_pack_transposes(transpose_f64_8x8, transpose_f64_8x8)
        },
        // SAFETY: as above.
        cgemm: unsafe {
            cgemm
                .with_sup(c_sup)
                .with_gemv(skx::gemv_c32)
                .with_pack_transposes(transpose_c32_8x8, transpose_c32_8x8)
        },
        // SAFETY: the complex gemv kernel implements GemvUkr with this configuration's
        // features (c64 packs with the portable loop: 16-byte elements move whole anyway).
        zgemm: unsafe { zgemm.with_sup(z_sup).with_gemv(skx::gemv_c64) },
        bgemm,
        igemm: igemm.unwrap_or(reference.igemm),
        ugemm: ugemm.unwrap_or(reference.ugemm),
        threads: ThreadPrefs {
            min_work_per_thread: MIN_WORK_PER_THREAD,
        },
        ..reference
    }
}
