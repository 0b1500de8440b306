//! The software model of the AMX tile unit: the eight 16×64-byte tile registers and the
//! tile configuration of the calling thread, and the instructions of [`TileUnit`] acting on
//! them exactly as the Intel SDM's pseudo-code says (Intel® 64 and IA-32 Architectures
//! Software Developer's Manual, vol. 2: LDTILECFG, TILERELEASE, TILEZERO, TILELOADD,
//! TILESTORED, TDPBF16PS, TDPBSSD/TDPBUSD, and §2.10's AMX exception classes). Tests run the
//! kernels' tile program on it; the development machines and CI have no AMX (see [`super::Amx`]).
//!
//! State is per thread (`thread_local!`), as the hardware's is, so a model-backed kernel is
//! an ordinary [`crate::kernels::GemmUkr`] and the loop nest's per-thread
//! [`crate::cntx::HwContext`] (load the configuration / release) drives it as it would
//! drive the hardware.
//!
//! **What is modelled**
//! * `ldtilecfg`: palette 0 = INIT (configuration cleared, every tile zeroed); palette 1
//!   takes the shapes and leaves tile data as it is (the SDM zeroes data only for palette
//!   0). Faults (#GP) as the SDM lists them: palette > 1, reserved bytes non-zero, colsb >
//!   64, rows > 16, a shape for tiles 8..16, rows and colsb not both zero or both non-zero.
//! * `tilerelease`: INIT state.
//! * `tilezero`: all 16 rows × 64 bytes of the tile become zero.
//! * `tileloadd`: rows from `start_row` up are zeroed, then rows `start_row..rows` get colsb
//!   bytes from `src + r·stride` and zeros after them; `start_row` becomes 0.
//! * `tilestored`: rows `start_row..rows`, colsb bytes each, go to `dst + r·stride`;
//!   `start_row` becomes 0.
//! * `tdpbf16ps`: per row m of C, two f32 accumulators per column n, one for the even and
//!   one for the odd element of each bf16 pair, both starting at 0; for each pair index k
//!   (in order) `even[n] = fma(A[m][2k]·B[k][2n] + even[n])` and likewise odd, each a
//!   single-rounding FP32 FMA with DAZ/FTZ/RNE; then `C[m][n] = C[m][n] + (even[n] +
//!   odd[n])`, two more DAZ/FTZ/RNE additions. So the pairs' two products are *not* summed
//!   before accumulation: two chains run over the whole tile depth and meet at the end,
//!   and C is added last. (Intel's intrinsics guide shows a different order, C first and
//!   each product added in turn; the model follows the SDM.) The FP32 rules are in
//!   `model_fp32.rs`.
//! * `tdpbssd` / `tdpbusd`: `C[m][n] += Σ_k Σ_{e<4} A[m][4k+e]·B[k][4n+e]`, bytes
//!   sign-extended (A zero-extended for `tdpbusd`), the i32 sum wrapping modulo 2^32.
//! * Dot products write C's rows with zeros past colsb and zero the rows past `rows` (the
//!   SDM's `write_row_and_zero` / `zero_upper_rows`).
//!
//! **Faults** (each a panic naming the instruction and the SDM's exception; only the
//! model checks, the hardware path would fault or misbehave): any tile instruction but
//! `ldtilecfg`/`tilerelease` with no configuration loaded (#UD); a load, store or dot
//! product on a tile that is not configured (#UD); for dot products (class AMX-E4, #UD)
//! C, A, B not distinct, a colsb not a multiple of 4, M (`C.rows != A.rows`), N
//! (`C.colsb != B.colsb`) or K (`A.colsb/4 != B.rows`) inconsistent, or N or K above the
//! TMUL limit of 16.
//!
//! **Not modelled:** which NaN the hardware returns (the model returns a NaN), faults of
//! the memory operand (the caller's pointers are trusted, as the hardware would trust
//! them until the page fault), `tileloaddt1`, and interrupted instructions (a non-zero
//! `start_row` is honoured on entry but never produced).

use std::cell::RefCell;

use super::model_fp32::{add_daz_ftz, bf16_daz, fma_daz_ftz};
use super::tile::{BYTES_PER_ROW, MAX_ROWS, TILES, TileConfig, TileUnit};

/// One tile register: 16 rows of 64 bytes.
pub type TileRegister = [[u8; BYTES_PER_ROW]; MAX_ROWS];

/// The software model of the tile unit (state per thread). See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct TileModel;

/// The calling thread's tile state.
#[derive(Clone, Copy)]
struct State {
    /// The loaded palette-1 configuration; `None` is the INIT state (palette 0).
    config: Option<TileConfig>,
    tiles: [TileRegister; TILES],
}

impl State {
    const INIT: State = State {
        config: None,
        tiles: [[[0; BYTES_PER_ROW]; MAX_ROWS]; TILES],
    };
}

thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::INIT) };
}

/// Raises the fault the hardware would: a panic naming the instruction and the reason.
fn fault(instruction: &str, exception: &str, why: String) -> ! {
    panic!("AMX model: {instruction}: {exception}: {why}")
}

/// A configured tile's shape.
#[derive(Clone, Copy, Debug)]
struct Shape {
    rows: usize,
    colsb: usize,
}

/// The loaded configuration, or the #UD of an instruction run without one.
fn configured(state: &State, instruction: &str) -> TileConfig {
    match state.config {
        Some(cfg) => cfg,
        None => fault(
            instruction,
            "#UD",
            "no tile configuration loaded on this thread (ldtilecfg first)".into(),
        ),
    }
}

/// Tile `t`'s shape, or #UD if it is not configured (rows and colsb zero).
fn shape(cfg: &TileConfig, t: u8, instruction: &str) -> Shape {
    let t = usize::from(t);
    assert!(t < TILES, "tile index {t} out of range");
    let shape = Shape {
        rows: usize::from(cfg.rows[t]),
        colsb: usize::from(cfg.colsb[t]),
    };
    if shape.rows == 0 {
        fault(instruction, "#UD", format!("tmm{t} is not configured"));
    }
    shape
}

/// Checks an `ldtilecfg` operand the way the SDM does (#GP on any violation).
fn check_config(cfg: &TileConfig) {
    let bad = |why: String| fault("ldtilecfg", "#GP", why);
    if cfg.palette > 1 {
        bad(format!("palette {} (only 0 and 1 exist)", cfg.palette));
    }
    if cfg.palette == 0 {
        return;
    }
    if cfg.reserved.iter().any(|&b| b != 0) {
        bad("reserved bytes 2..16 are not zero".into());
    }
    for t in 0..16 {
        let (rows, colsb) = (usize::from(cfg.rows[t]), usize::from(cfg.colsb[t]));
        if t >= TILES && (rows != 0 || colsb != 0) {
            bad(format!("tile {t} configured, palette 1 has {TILES} tiles"));
        }
        if rows > MAX_ROWS {
            bad(format!("tmm{t}: {rows} rows, at most {MAX_ROWS}"));
        }
        if colsb > BYTES_PER_ROW {
            bad(format!(
                "tmm{t}: {colsb} bytes per row, at most {BYTES_PER_ROW}"
            ));
        }
        if (rows == 0) != (colsb == 0) {
            bad(format!(
                "tmm{t}: rows {rows} and colsb {colsb}: both zero or neither"
            ));
        }
    }
}

/// The shapes (M, K, N) of a dot product `C += A·B`, after the SDM's AMX-E4 checks.
fn dot_shape(cfg: &TileConfig, instruction: &str, c: u8, a: u8, b: u8) -> (usize, usize, usize) {
    let ud = |why: String| fault(instruction, "#UD", why);
    if c == a || c == b || a == b {
        ud(format!("tiles tmm{c}, tmm{a}, tmm{b} must be distinct"));
    }
    let (sc, sa, sb) = (
        shape(cfg, c, instruction),
        shape(cfg, a, instruction),
        shape(cfg, b, instruction),
    );
    for (t, s) in [(c, sc), (a, sa), (b, sb)] {
        if !s.colsb.is_multiple_of(4) {
            ud(format!("tmm{t}: colsb {} is not a multiple of 4", s.colsb));
        }
    }
    let (m, k, n) = (sc.rows, sa.colsb / 4, sc.colsb / 4);
    if sa.rows != m {
        ud(format!(
            "M: C (tmm{c}) has {m} rows, A (tmm{a}) {}",
            sa.rows
        ));
    }
    if sb.colsb != sc.colsb {
        ud(format!(
            "N: C (tmm{c}) has {} bytes per row, B (tmm{b}) {}",
            sc.colsb, sb.colsb
        ));
    }
    if sb.rows != k {
        ud(format!(
            "K: A (tmm{a}) has {k} four-byte columns, B (tmm{b}) {} rows",
            sb.rows
        ));
    }
    if n > 16 || k > 16 {
        ud(format!("N = {n} or K = {k} above the TMUL limit of 16"));
    }
    (m, k, n)
}

/// Writes the result rows of a dot product into C: rows below `m` from `rows` (4·n bytes
/// each, zeros after), rows from `m` on zeroed.
fn write_result(tile: &mut TileRegister, rows: &[[u8; BYTES_PER_ROW]], m: usize) {
    for (r, row) in tile.iter_mut().enumerate() {
        *row = if r < m { rows[r] } else { [0; BYTES_PER_ROW] };
    }
}

fn dword(row: &[u8; BYTES_PER_ROW], i: usize) -> [u8; 4] {
    [row[4 * i], row[4 * i + 1], row[4 * i + 2], row[4 * i + 3]]
}

fn bf16_at(row: &[u8; BYTES_PER_ROW], i: usize) -> f32 {
    bf16_daz(u16::from_le_bytes([row[2 * i], row[2 * i + 1]]))
}

/// `tdpbssd` (A signed) or `tdpbusd` (A unsigned), B signed.
fn int8_dot(instruction: &str, a_signed: bool, c: u8, a: u8, b: u8) {
    STATE.with_borrow_mut(|s| {
        let cfg = configured(s, instruction);
        let (m, k, n) = dot_shape(&cfg, instruction, c, a, b);
        let (ta, tb) = (&s.tiles[usize::from(a)], &s.tiles[usize::from(b)]);
        let tc = &s.tiles[usize::from(c)];
        let mut out = [[0u8; BYTES_PER_ROW]; MAX_ROWS];
        for (i, out_row) in out.iter_mut().enumerate().take(m) {
            for j in 0..n {
                let mut acc = i32::from_le_bytes(dword(&tc[i], j));
                for (p, b_row) in tb.iter().take(k).enumerate() {
                    let (x, y) = (dword(&ta[i], p), dword(b_row, j));
                    let quad: i32 = (0..4)
                        .map(|e| {
                            let xe = if a_signed {
                                i32::from(x[e] as i8)
                            } else {
                                i32::from(x[e])
                            };
                            xe * i32::from(y[e] as i8)
                        })
                        .sum();
                    acc = acc.wrapping_add(quad);
                }
                out_row[4 * j..4 * j + 4].copy_from_slice(&acc.to_le_bytes());
            }
        }
        write_result(&mut s.tiles[usize::from(c)], &out, m);
        if let Some(cfg) = &mut s.config {
            cfg.start_row = 0;
        }
    });
}

impl TileModel {
    /// Tile register `t` of the calling thread as it is, all 16 rows of 64 bytes (also the
    /// parts outside the configured shape): for tests of the zeroing rules.
    pub fn register(t: u8) -> TileRegister {
        STATE.with_borrow(|s| s.tiles[usize::from(t)])
    }

    /// The calling thread's configuration, `None` in the INIT state.
    pub fn config() -> Option<TileConfig> {
        STATE.with_borrow(|s| s.config)
    }
}

impl TileUnit for TileModel {
    unsafe fn load_config(cfg: &TileConfig) {
        check_config(cfg);
        STATE.with_borrow_mut(|s| {
            if cfg.palette == 0 {
                *s = State::INIT;
            } else {
                s.config = Some(*cfg);
            }
        });
    }

    unsafe fn release() {
        STATE.with_borrow_mut(|s| *s = State::INIT);
    }

    unsafe fn zero<const T: u8>() {
        STATE.with_borrow_mut(|s| {
            configured(s, "tilezero");
            s.tiles[usize::from(T)] = [[0; BYTES_PER_ROW]; MAX_ROWS];
            if let Some(cfg) = &mut s.config {
                cfg.start_row = 0;
            }
        });
    }

    unsafe fn load<const T: u8>(src: *const u8, stride: isize) {
        STATE.with_borrow_mut(|s| {
            let cfg = configured(s, "tileloadd");
            let Shape { rows, colsb } = shape(&cfg, T, "tileloadd");
            let start = usize::from(cfg.start_row);
            let tile = &mut s.tiles[usize::from(T)];
            for (r, row) in tile.iter_mut().enumerate().skip(start) {
                *row = [0; BYTES_PER_ROW];
                if r < rows {
                    // SAFETY: the caller promises the configured rows are readable at
                    // `src + r·stride` (the trait's contract).
                    let bytes = unsafe {
                        std::slice::from_raw_parts(src.offset(r as isize * stride), colsb)
                    };
                    row[..colsb].copy_from_slice(bytes);
                }
            }
            if let Some(cfg) = &mut s.config {
                cfg.start_row = 0;
            }
        });
    }

    unsafe fn store<const T: u8>(dst: *mut u8, stride: isize) {
        STATE.with_borrow_mut(|s| {
            let cfg = configured(s, "tilestored");
            let Shape { rows, colsb } = shape(&cfg, T, "tilestored");
            let tile = &s.tiles[usize::from(T)];
            for (r, row) in tile
                .iter()
                .enumerate()
                .take(rows)
                .skip(usize::from(cfg.start_row))
            {
                // SAFETY: the caller promises the configured rows are writable at
                // `dst + r·stride` (the trait's contract); the tile is not memory they alias.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        row.as_ptr(),
                        dst.offset(r as isize * stride),
                        colsb,
                    )
                };
            }
            if let Some(cfg) = &mut s.config {
                cfg.start_row = 0;
            }
        });
    }

    unsafe fn dpbf16ps<const C: u8, const A: u8, const B: u8>() {
        STATE.with_borrow_mut(|s| {
            let cfg = configured(s, "tdpbf16ps");
            let (m, k, n) = dot_shape(&cfg, "tdpbf16ps", C, A, B);
            let (ta, tb) = (&s.tiles[usize::from(A)], &s.tiles[usize::from(B)]);
            let tc = &s.tiles[usize::from(C)];
            let mut out = [[0u8; BYTES_PER_ROW]; MAX_ROWS];
            for (i, out_row) in out.iter_mut().enumerate().take(m) {
                let (mut even, mut odd) = ([0f32; 16], [0f32; 16]);
                for (p, b_row) in tb.iter().take(k).enumerate() {
                    let (a_even, a_odd) = (bf16_at(&ta[i], 2 * p), bf16_at(&ta[i], 2 * p + 1));
                    for j in 0..n {
                        even[j] = fma_daz_ftz(even[j], a_even, bf16_at(b_row, 2 * j));
                        odd[j] = fma_daz_ftz(odd[j], a_odd, bf16_at(b_row, 2 * j + 1));
                    }
                }
                for j in 0..n {
                    let old = f32::from_le_bytes(dword(&tc[i], j));
                    let new = add_daz_ftz(old, add_daz_ftz(even[j], odd[j]));
                    out_row[4 * j..4 * j + 4].copy_from_slice(&new.to_le_bytes());
                }
            }
            write_result(&mut s.tiles[usize::from(C)], &out, m);
            if let Some(cfg) = &mut s.config {
                cfg.start_row = 0;
            }
        });
    }

    unsafe fn dpbssd<const C: u8, const A: u8, const B: u8>() {
        int8_dot("tdpbssd", true, C, A, B);
    }

    unsafe fn dpbusd<const C: u8, const A: u8, const B: u8>() {
        int8_dot("tdpbusd", false, C, A, B);
    }
}
