//! The interface every AMX tile program is written against: the palette-1 tile
//! configuration ([`TileConfig`], the 64 bytes `ldtilecfg` reads) and the tile unit
//! ([`TileUnit`]: the instructions the kernels use). Two implementations: the hardware
//! ([`super::Amx`], `asm!`) and the exact software model ([`super::TileModel`]).
//!
//! Tiles are named by const generic indices 0..8 (`tmm0`..`tmm7`): the hardware must name
//! them in the instruction text, so the index has to be known at compile time.

/// Palette 1 (the only palette besides the INIT palette 0): 8 tile registers.
pub const TILES: usize = 8;
/// Palette 1: at most 16 rows per tile.
pub const MAX_ROWS: usize = 16;
/// Palette 1: at most 64 bytes per tile row.
pub const BYTES_PER_ROW: usize = 64;

/// The tile configuration as `ldtilecfg` reads it from memory (64 bytes, little endian):
///
/// | bytes  | field                                                        |
/// |--------|--------------------------------------------------------------|
/// | 0      | `palette`: 0 = INIT state (releases the tiles), 1 = 8 tiles |
/// | 1      | `start_row`: restart point of an interrupted load/store; 0   |
/// | 2..16  | reserved, zero                                               |
/// | 16..48 | `colsb[t]`: bytes per row of tile t (only t < 8 may be set)  |
/// | 48..64 | `rows[t]`: rows of tile t (only t < 8 may be set)            |
///
/// A tile is configured ("valid") when both its rows and colsb are non-zero; one zero and
/// not the other, rows > 16, colsb > 64, or anything in the reserved bytes makes
/// `ldtilecfg` fault (#GP).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileConfig {
    /// 0 (INIT) or 1.
    pub palette: u8,
    /// Row at which an interrupted `tileloadd`/`tilestored` resumes; 0 for a fresh start.
    pub start_row: u8,
    /// Must be zero.
    pub reserved: [u8; 14],
    /// Bytes per row of each tile; entries 8.. must be zero in palette 1.
    pub colsb: [u16; 16],
    /// Rows of each tile; entries 8.. must be zero in palette 1.
    pub rows: [u8; 16],
}

const _: () = assert!(size_of::<TileConfig>() == 64);
const _: () = assert!(std::mem::offset_of!(TileConfig, colsb) == 16);
const _: () = assert!(std::mem::offset_of!(TileConfig, rows) == 48);

impl TileConfig {
    /// Palette 0: loading it returns the tiles to their INIT state (like `tilerelease`).
    pub const INIT: TileConfig = TileConfig {
        palette: 0,
        start_row: 0,
        reserved: [0; 14],
        colsb: [0; 16],
        rows: [0; 16],
    };

    /// Palette 1 with tile t shaped `shapes[t] = (rows, colsb)`; (0, 0) leaves it
    /// unconfigured.
    pub const fn palette1(shapes: [(u8, u16); TILES]) -> TileConfig {
        let mut cfg = TileConfig {
            palette: 1,
            ..TileConfig::INIT
        };
        let mut t = 0;
        while t < TILES {
            cfg.rows[t] = shapes[t].0;
            cfg.colsb[t] = shapes[t].1;
            t += 1;
        }
        cfg
    }

    /// Palette 1 with all eight tiles full: 16 rows of 64 bytes.
    pub const FULL: TileConfig =
        TileConfig::palette1([(MAX_ROWS as u8, BYTES_PER_ROW as u16); TILES]);
}

/// The AMX instructions the tile kernels use, as plain functions. The tile program of a
/// kernel is written once against this trait and instantiated with the hardware
/// ([`super::Amx`]) or with the model ([`super::TileModel`]).
///
/// Tiles are const generic indices `T`, `C`, `A`, `B` in 0..8. The dot products compute
/// `C += A·B` for tiles configured as C: M rows × N·4 bytes, A: M rows × K·4 bytes,
/// B: K rows × N·4 bytes (each 4-byte group being a pair of bf16 or a quad of bytes).
///
/// # Safety (all functions)
/// On hardware: the CPU has AMX-TILE (and AMX-BF16 / AMX-INT8 for the dot products), the
/// OS has granted this thread the tile state (Linux: `ARCH_REQ_XCOMP_PERM`), a palette-1
/// configuration is loaded on this thread (except for `load_config`), every tile used is
/// configured with shapes that fit the instruction, the three tiles of a dot product are
/// distinct, and each pointer covers the configured rows at the stride given. Violations
/// fault (#UD, #GP, SIGSEGV) or read/write out of bounds. The model checks all of these
/// except the pointers and panics instead; memory is its caller's promise as well.
pub trait TileUnit {
    /// `ldtilecfg`: makes `cfg` this thread's tile configuration (palette 0: INIT state).
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn load_config(cfg: &TileConfig);
    /// `tilerelease`: returns the tiles and the configuration to the INIT state.
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn release();
    /// `tilezero tmmT`: every byte of tile T becomes zero.
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn zero<const T: u8>();
    /// `tileloadd tmmT, [src + stride·1]`: row r of tile T (r < rows) := the colsb bytes
    /// at `src + r·stride`; the rest of the register is zeroed.
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn load<const T: u8>(src: *const u8, stride: isize);
    /// `tilestored [dst + stride·1], tmmT`: the colsb bytes at `dst + r·stride` := row r of
    /// tile T, for r < rows. Nothing else is written.
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn store<const T: u8>(dst: *mut u8, stride: isize);
    /// `tdpbf16ps tmmC, tmmA, tmmB`: C (f32) += A (bf16 pairs) · B (bf16 pairs).
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn dpbf16ps<const C: u8, const A: u8, const B: u8>();
    /// `tdpbssd tmmC, tmmA, tmmB`: C (i32, wrapping) += A (i8 quads) · B (i8 quads).
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn dpbssd<const C: u8, const A: u8, const B: u8>();
    /// `tdpbusd tmmC, tmmA, tmmB`: C (i32, wrapping) += A (u8 quads) · B (i8 quads).
    ///
    /// # Safety
    /// The trait's contract (see [`TileUnit`]).
    unsafe fn dpbusd<const C: u8, const A: u8, const B: u8>();
}
