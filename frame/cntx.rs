//! The context: for one configuration, each dtype's microkernel and blocksizes.
//!
//! A `Cntx` is built once per configuration (by its file in `config/`) and never written
//! after: a call reads it and keeps everything call-specific (threads, scalars, edges) in its
//! own stack frame and `Rntm`. That is what makes BLIS's old `cntx_t` race (seed 003)
//! impossible here. Tests and tuners derive modified copies with
//! [`Cntx::with_blocksizes`].

use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{
    DotsUkr, GemmUkr, GemvColumnsUkr, GemvUkr, MAX_TILE_ELEMS, ShortKUkr, SupUkr, TallUkr,
    TransposeUkr,
};
use crate::l3::sup::{columns_fit_l1_ways, columns_spread_over_l1};
use crate::types::{Element, GemmPair, bf16, c32, c64};
use crate::view::MatRef;

/// A kernel's blocksizes, BLIS names: the register tile MR×NR, and the cache blocks KC (depth
/// of a packed panel), MC (rows of packed A), NC (columns of packed B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocksizes {
    /// Rows of the microkernel's tile.
    pub mr: usize,
    /// Columns of the microkernel's tile.
    pub nr: usize,
    /// Depth of the packed panels (the pc loop's step).
    pub kc: usize,
    /// Rows of the packed block of A (the ic loop's step); a multiple of `mr`.
    pub mc: usize,
    /// Columns of the packed block of B (the jc loop's step); a multiple of `nr`.
    pub nc: usize,
}

/// A configuration's preferences for automatic threading (`frame/thread/plan.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadPrefs {
    /// Multiply-adds (m·n·k) each thread should get at least; smaller problems use fewer
    /// threads, because waking one costs microseconds.
    pub min_work_per_thread: usize,
}

/// Packed blocks larger than this are refused (a safety net against absurd blocksizes).
const MAX_PACKED_BYTES: usize = 1 << 30;

/// A sup ("small, unpacked") kernel: reads A and B in place, for problems too small to
/// repay packing (`frame/l3/sup.rs`).
pub struct SupKernel<A: Element, B: Element> {
    name: &'static str,
    ukr: SupUkr<A, B>,
    mr: usize,
    nr: usize,
    b_group: usize,
    remainder: TransposedRemainder,
    limits: SupLimits,
}

/// The rows of a tile past its whole vectors (a vector is MR/2 rows, as every sup kernel's
/// tile is two vectors tall) that the tile loop computes as a tile of their own, transposed,
/// where B's rows are contiguous (`sup::run_sup_tile`): rows 1 to `max_rows` past one whole
/// vector, in a tile of at least that many columns and two more, and at most `max_columns`.
/// As part of the tile, those few rows take a (mostly masked) half-width vector per column
/// and k step; transposed, B's rows are the vectors and one FMA per row and k step covers
/// every column. [`TransposedRemainder::NEVER`] turns it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposedRemainder {
    /// The most rows past the whole vectors taken (0: none).
    pub max_rows: usize,
    /// The widest tile taken.
    pub max_columns: usize,
}

impl TransposedRemainder {
    /// No rows transposed: the whole tile in one kernel call.
    pub const NEVER: Self = TransposedRemainder {
        max_rows: 0,
        max_columns: 0,
    };

    /// Whether a tile of `m` rows (at most MR = `mr`) and `n` columns splits off its last
    /// rows. Returns how many, or 0. Without a division: it is asked of every tile whose B
    /// has contiguous rows, and a tile is at most two vectors, so the rows past the first
    /// are the rest.
    #[inline(always)]
    pub(crate) fn rows_of(&self, mr: usize, m: usize, n: usize) -> usize {
        let vector = mr / 2;
        if m <= vector || m >= mr {
            return 0;
        }
        let rest = m - vector;
        if rest <= self.max_rows && n >= rest + 2 && n <= self.max_columns {
            rest
        } else {
            0
        }
    }
}

/// The fewest columns of C for which `SupLimits::far_a_max_short_k` reads far-apart
/// columns of A in place: measured from 50 (session 55). Fewer go to the gemv columns kernel
/// where the context has one (its 16-column C with columns 4 KiB apart lost half its speed
/// read in place at k = 4), and were not measured apart elsewhere.
pub const FAR_A_SHORT_K_MIN_N: usize = 48;

/// When the sup path beats packing: the kernel streams each column of A in place once per
/// NR-wide panel of C, so A's columns must sit close together (a column stride of a page or
/// more costs a TLB miss per k step) and A must stay in cache across panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupLimits {
    /// Largest column stride of A, in bytes (A is copied with stride m when it is not
    /// column-stored, and then m·size counts).
    pub max_a_col_stride_bytes: usize,
    /// Largest A, m·k·size in bytes.
    pub max_a_bytes: usize,
    /// C with `far_a_min_n..=far_a_max_n` columns reads A in place even when its columns lie
    /// further apart than `max_a_col_stride_bytes` (A as it is, not a copy of op(A)),
    /// provided they spread over the L1's sets (`sup::columns_spread_over_l1`): with few
    /// panels of C, A is read few times, and packing it costs a pass of its own
    /// (`far_a_max_n` = 0: never). Below `far_a_min_n` the gemv columns kernel, where the
    /// context has one, takes C in one pass over A.
    pub far_a_min_n: usize,
    /// See `far_a_min_n`.
    pub far_a_max_n: usize,
    /// `far_a_min_n` where C is row-stored: a short, wide C solved transposed
    /// (`gemm.rs`, `short_and_wide_with_b_rows`), whose A is op(B)ᵀ. There the gemv columns
    /// kernel's alternative writes C's rows through a buffer (`gemv.rs`,
    /// `gemm_by_column_groups_buffered`), so the sup kernel wins from fewer columns.
    /// At most `far_a_min_n`.
    pub far_a_min_n_c_rows: usize,
    /// The longest k for which A's far-apart columns are read in place for C of any number
    /// of columns from [`FAR_A_SHORT_K_MIN_N`], where 16 of them put no more lines in an L1
    /// set than it has ways (`sup::columns_fit_l1_ways`, looser than `far_a_min_n`'s test):
    /// with so few columns of A, a tile's reads of them stay in the L1 (0: never).
    pub far_a_max_short_k: usize,
    /// When A (m·k·size) is more than twice this many bytes, the sup path walks k in blocks
    /// whose slice of A is about this size, so the slice stays in L2 while every column
    /// panel of C reuses it (C is then updated once per block); 0 never splits k.
    pub k_block_bytes: usize,
    /// When k would be split (above), the largest C, m·n·size in bytes, still taken by the
    /// sup path; a larger C goes to the packed-A path instead where `pack_a_only` lets B be
    /// read in place (never to the loop nest). A rule measured on skx: with k split (C then
    /// updated once per block, A's slice read in place by every NR-wide panel) and C past
    /// about half the L2, packing A won; longer k blocks did not close the gap, so the cause
    /// is not pinned down to C's passes (docs/Performance.md; `usize::MAX`: never).
    pub max_c_bytes_if_k_split: usize,
    /// Where the sup path splits k (`k_block_bytes`) but not A's rows, it walks C in blocks of
    /// NR-aligned columns holding about this many bytes (rows·columns·size), each block
    /// through every k block before the next one starts, so that the block is still in L2
    /// for its next k block and each column of B is read in runs that follow one another;
    /// otherwise every k block passes over all of C. Tiles and sums are unchanged, so are the
    /// bits (`usize::MAX`: all of C's columns in one block). A tall A split into row blocks
    /// as well keeps all columns: each of its slices then serves only one column block.
    pub c_block_bytes_if_k_split: usize,
    /// The sup path also splits k so that one k block of B, read in place, spans at most
    /// this many bytes along k (kb·|rs_b|·size): every tile walks its block of B, and a
    /// row-stored B with long rows touches a new page each k step, more pages per tile than
    /// the TLB holds once the block is long (0 or `usize::MAX`: no such split).
    pub max_b_k_span_bytes: usize,
    /// What happens to a one-thread problem past the limits above: the loop nest packs A
    /// and B, or the sup kernel reads B in place with only A packed (`frame/l3/sup.rs`).
    pub pack_a_only: PackAOnly,
    /// A short, wide C with op(A)'s rows and op(B)'s rows contiguous (TT of column-major
    /// operands) whose columns are not a whole number of the kernel's vectors (half its MR)
    /// goes transposed up to this many bytes a column, reading both operands in place
    /// (`gemm::sup_solves_transposed`); as it is, op(A) is copied and its last vector
    /// masked. Shorter columns (under 60 bytes) go transposed whatever this is.
    pub max_transposed_partial_column_bytes: usize,
    /// The same for op(A)'s columns contiguous (NT), from this k, where C's columns (up to
    /// `max_transposed_partial_column_bytes`) end in a vector that is neither whole nor a
    /// whole half-width one (a quarter of MR); as it is, each k step spends that mostly
    /// masked vector on each column. `usize::MAX`: never.
    pub nt_partial_column_min_k: usize,
    /// Which TT problems of any shape (op(A)'s and op(B)'s rows contiguous) go transposed,
    /// Cᵀ = op(B)ᵀ·op(A)ᵀ with both operands read in place and Cᵀ written by rows, where as
    /// they are op(A) is copied first (`gemm::tt_transposed_in_place`). `None`: none (a
    /// short, wide C still goes by the rules above).
    pub tt_transposed: Option<TtTransposed>,
    /// The rules under which an op(B) with contiguous rows (NT and TT of column-major
    /// operands: B's rows far apart in memory, so each tile's k step reads a new line, often
    /// a new page) is packed by the loop nest instead of read in place; any one suffices
    /// (empty: never).
    pub pack_b_rows: &'static [PackBRows],
    /// An op(A) the sup kernel cannot read in place (rows not contiguous, or conjugated) of
    /// at least this many bytes (m·k·size) and at least MR rows, in a one-thread problem
    /// whose B is not conjugated, is packed block by block (`sup::gemm_sup_a_by_blocks`, in
    /// the k slices a team takes from its whole copy, so the bits do not depend on the
    /// threads), each block still in L2 when the kernel reads it, instead of copied whole
    /// before the first tile. A copy larger than the L2 is written out to L3 and read back
    /// from there (`usize::MAX`: always copied whole).
    pub a_by_blocks_min_copy_bytes: usize,
    /// An A the sup path could read in place (contiguous rows, not conjugated; as it is or
    /// its compact copy) whose columns lie at least `in_place_a_by_blocks_min_col_bytes`
    /// apart and which holds at least `in_place_a_by_blocks_min_bytes`, in a one-thread
    /// problem of at least MR rows whose B is not conjugated, is packed block by block as
    /// well (the same path and k slices as `a_by_blocks_min_copy_bytes`). Such an A is split
    /// into k slices that every column panel of C rereads from L2 a line per k step, the
    /// lines a column apart; packed, each panel reads the slice in order (`usize::MAX`:
    /// never).
    pub in_place_a_by_blocks_min_bytes: usize,
    /// See `in_place_a_by_blocks_min_bytes`.
    pub in_place_a_by_blocks_min_col_bytes: usize,
    /// The shortest k block from which the sup path copies each NR-wide column panel of an
    /// op(B) with contiguous rows (NT: op(B) = Bᵀ of a column-major B) into a small stack
    /// buffer, rows adjacent, before the panel's row tiles read it (`sup::sup_tiles`), for C
    /// of more than one row tile and B's rows at most a page apart. Read in place, each k
    /// step of a tile reads NR elements from a line of its own, and the lines of a long k
    /// block, a row of B apart, fill a few L1 sets, so every row tile reads the panel from
    /// L2 again (`usize::MAX`: never).
    pub pack_b_panels_min_k: usize,
}

/// One of [`SupLimits::pack_b_rows`]: an op(B) with contiguous rows goes to the loop nest when
/// it holds more than `b_bytes_over` bytes, its rows lie at least `min_row_stride_bytes`
/// apart (and crowd a few of the L1's sets, if `only_in_few_l1_sets`), and C has
/// `min_m..=max_m` rows and at least `min_row_tiles_per_thread` row tiles (MR rows) per
/// thread. Read in place by the sup path, each line of B serves the row tiles of one column
/// panel; with few rows that is one or two tiles, where packing reads B once in order, and
/// with many, lines in few sets are evicted before the next row tile rereads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackBRows {
    /// op(B) of more than this many bytes.
    pub b_bytes_over: usize,
    /// op(B)'s rows at least this many bytes apart.
    pub min_row_stride_bytes: usize,
    /// Only rows whose stride crowds a few of the L1's sets (a multiple of 1 KiB or so:
    /// `sup::columns_spread_over_l1` fails).
    pub only_in_few_l1_sets: bool,
    /// C of at least this many rows.
    pub min_m: usize,
    /// C of at most this many rows.
    pub max_m: usize,
    /// At least this many row tiles per thread (C's rows shared by the threads that compute
    /// it).
    pub min_row_tiles_per_thread: usize,
}

impl PackBRows {
    /// Whether this rule sends an op(B) of `b_bytes` bytes whose rows lie `row_stride_bytes`
    /// apart, for a C of `m` rows on `threads` threads of `mr`-row tiles, to the loop nest.
    fn applies(
        &self,
        b_bytes: usize,
        row_stride_bytes: usize,
        m: usize,
        threads: usize,
        mr: usize,
    ) -> bool {
        b_bytes > self.b_bytes_over
            && row_stride_bytes >= self.min_row_stride_bytes
            && (self.min_m..=self.max_m).contains(&m)
            && m.div_ceil(threads.max(1)) >= self.min_row_tiles_per_thread.saturating_mul(mr)
            && (!self.only_in_few_l1_sets || !columns_spread_over_l1(row_stride_bytes))
    }
}

/// The TT problems a sup kernel solves transposed (`SupLimits::tt_transposed`): k of at
/// least `min_k` and at least `min_k_per_column`·n (or C at least `min_rows_per_column`
/// times as tall as it is wide), and op(B), the transposed problem's A, of at most
/// `max_b_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtTransposed {
    /// The shortest k.
    pub min_k: usize,
    /// k per column of C, at least (at least 1).
    pub min_k_per_column: usize,
    /// Rows of C per column from which any k (from `min_k`) will do: a tall C, whose op(A)
    /// as it is would be copied, m·k elements, for a short k loop (0: never).
    pub min_rows_per_column: usize,
    /// The most bytes of op(B) (n·k elements).
    pub max_b_bytes: usize,
}

/// When a one-thread problem too large for the sup path packs only A: the sup kernel then
/// reads packed MC×KC blocks of A and B in place, which saves packing B (the transposes of a
/// column-stored B cost 2–3.5 % of dgemm 384³). It pays only while B's micropanels, read in
/// place, do not crowd the L1: columns a multiple of 4 KiB apart fall into one L1 set and
/// evict each other once there are more of them than the L1 has ways (a 16×12 kernel:
/// dgemm 512³ 7–10 % slower; read 6 columns at a time, 2.6 % faster than the loop nest), so
/// the default checks B's strides against the kernel's column group (`SupKernel::b_group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackAOnly {
    /// Always the loop nest.
    Never,
    /// When k is at least KC/2, or 256 where KC/2 is more (shorter, the sup kernel's
    /// per-tile overhead shows), and the lines the kernel's first eight k steps over one
    /// group of B's columns touch (its `b_group` columns, or rows, at B's strides) put no
    /// more than six in any set of a 64-set L1 (two of the 8 ways left for A and C), and a
    /// KC-deep block of B spans at most 1 MiB along k (row-stored B: KC rows); else the
    /// loop nest.
    WhenBSpreadsOverL1,
    /// Whatever B's strides (for tests and experiments).
    Always,
}

impl<A: Element, B: Element> Clone for SupKernel<A, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A: Element, B: Element> Copy for SupKernel<A, B> {}

impl<A: Element, B: Element> SupKernel<A, B> {
    /// Registers a sup kernel for tiles up to `mr`×`nr`, used for problems within `limits`.
    ///
    /// # Safety
    /// `ukr` must implement the [`SupUkr`] contract for tiles up to `mr`×`nr`, and any context
    /// holding it must only be used on CPUs with the features it needs.
    pub const unsafe fn new(
        name: &'static str,
        ukr: SupUkr<A, B>,
        mr: usize,
        nr: usize,
        limits: SupLimits,
    ) -> Self {
        SupKernel {
            name,
            ukr,
            mr,
            nr,
            b_group: nr,
            remainder: TransposedRemainder::NEVER,
            limits,
        }
    }
    /// Says the kernel computes its tiles `cols` columns at a time (at most NR), so it reads
    /// B's columns in groups of that many: what `PackAOnly::WhenBSpreadsOverL1` checks.
    /// `cols` of 0 or more than NR mean NR (a group only changes when B is read in place,
    /// never the results).
    pub const fn with_b_group(self, cols: usize) -> Self {
        SupKernel {
            b_group: if cols == 0 || cols > self.nr {
                self.nr
            } else {
                cols
            },
            ..self
        }
    }
    /// Says which rows past a tile's whole vectors the tile loop computes transposed, where B's
    /// rows are contiguous (measured per kernel; [`TransposedRemainder::NEVER`] by default).
    pub const fn with_transposed_remainder(self, remainder: TransposedRemainder) -> Self {
        SupKernel { remainder, ..self }
    }
    /// The same kernel used within other limits (for a configuration that shares another's
    /// kernels on CPUs where other limits measured better: `config/sapphirerapids.rs`).
    pub const fn with_limits(self, limits: SupLimits) -> Self {
        SupKernel { limits, ..self }
    }
    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// Its largest tile, MR×NR.
    pub fn tile(&self) -> (usize, usize) {
        (self.mr, self.nr)
    }
    /// How many of B's columns it reads at a time (NR unless `with_b_group` said fewer).
    pub fn b_group(&self) -> usize {
        self.b_group
    }
    /// Which rows past a tile's whole vectors it computes transposed.
    pub fn transposed_remainder(&self) -> TransposedRemainder {
        self.remainder
    }
    /// When it is used.
    pub fn limits(&self) -> SupLimits {
        self.limits
    }

    /// Whether an m×k A with column stride `a_col_stride` (elements; its rows contiguous,
    /// else `None`: it will be copied with stride m), for a C of n columns, is within the
    /// limits.
    #[inline(always)]
    pub(crate) fn suits(&self, m: usize, n: usize, k: usize, a_col_stride: Option<usize>) -> bool {
        let far = (self.limits.far_a_min_n, self.limits.far_a_max_short_k);
        self.suits_from(far, m, n, k, a_col_stride)
    }

    /// [`Self::suits`] for a row-stored C (a problem solved transposed), which reads far-apart
    /// columns of A in place from `SupLimits::far_a_min_n_c_rows` columns of C (and not by
    /// `SupLimits::far_a_max_short_k`, which was measured on column-stored C only).
    #[inline(always)]
    pub(crate) fn suits_row_stored_c(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a_col_stride: Option<usize>,
    ) -> bool {
        self.suits_from((self.limits.far_a_min_n_c_rows, 0), m, n, k, a_col_stride)
    }

    /// [`Self::suits`] with far-apart columns of A read in place from `far_a_min_n` columns,
    /// or for k up to `far_a_max_short_k`.
    #[inline(always)]
    fn suits_from(
        &self,
        (far_a_min_n, far_a_max_short_k): (usize, usize),
        m: usize,
        n: usize,
        k: usize,
        a_col_stride: Option<usize>,
    ) -> bool {
        let limits = &self.limits;
        let elem = size_of::<A>();
        let stride_bytes = a_col_stride.unwrap_or(m).saturating_mul(elem);
        let a_bytes = m.saturating_mul(k).saturating_mul(elem);
        a_bytes <= limits.max_a_bytes
            && (stride_bytes <= limits.max_a_col_stride_bytes
                || (a_col_stride.is_some()
                    && self.far_a_in_place((far_a_min_n, far_a_max_short_k), n, k, stride_bytes)))
    }

    /// [`Self::suits`] for an A read in place (not a copy: that is read as it would be packed,
    /// and copies of A 3000×50 and 1000×300 at stride m lost 5–22 % against packing, TN)
    /// whose columns lie `stride_bytes` apart, past `max_a_col_stride_bytes`. Out of line,
    /// and reached only past that limit: run on every call, the L1-set count cost sgemm and
    /// dgemm 32³ 6–8 %.
    #[inline(never)]
    fn far_a_in_place(
        &self,
        (far_a_min_n, far_a_max_short_k): (usize, usize),
        n: usize,
        k: usize,
        stride_bytes: usize,
    ) -> bool {
        ((far_a_min_n..=self.limits.far_a_max_n).contains(&n)
            && columns_spread_over_l1(stride_bytes))
            || (k <= far_a_max_short_k
                && n >= FAR_A_SHORT_K_MIN_N
                && columns_fit_l1_ways(stride_bytes))
    }
    /// Whether op(B), `b`, for a C of `m` rows computed by `threads` threads, goes to the
    /// loop nest by one of [`SupLimits::pack_b_rows`]. Two compares on calls whose op(B)'s
    /// rows are not contiguous.
    #[inline(always)]
    pub(crate) fn packs_b_with_rows_contiguous(
        &self,
        m: usize,
        threads: usize,
        b: &MatRef<B>,
    ) -> bool {
        if b.col_stride() != 1 || b.row_stride() == 1 {
            return false;
        }
        self.packs_b_rows_by_rule(m, threads, b)
    }

    /// [`Self::packs_b_with_rows_contiguous`] once op(B)'s rows are contiguous. Out of line:
    /// the sup path's small NN calls do not carry it.
    #[inline(never)]
    fn packs_b_rows_by_rule(&self, m: usize, threads: usize, b: &MatRef<B>) -> bool {
        let b_bytes = b
            .nrows()
            .saturating_mul(b.ncols())
            .saturating_mul(size_of::<B>());
        let row_stride_bytes = b.row_stride().unsigned_abs().saturating_mul(size_of::<B>());
        self.limits
            .pack_b_rows
            .iter()
            .any(|rule| rule.applies(b_bytes, row_stride_bytes, m, threads, self.mr))
    }

    /// Whether a one-thread problem packs op(A), `a`, block by block rather than copying it
    /// whole or reading it in place: an A the kernel cannot read in place, by
    /// [`SupLimits::a_by_blocks_min_copy_bytes`], or one it can, by
    /// [`SupLimits::in_place_a_by_blocks_min_bytes`] and its column stride; of at least MR
    /// rows, with a B that is not conjugated (the packed-A path reads B in place). Fewer rows
    /// than MR would be padded to MR in the packed panel and computed as if there were MR
    /// (skx sgemm TN 16×16×16384 and 16×16×32768 ran 0.82–0.84 of the whole copy, read with
    /// masks; session 41).
    pub(crate) fn packs_a_by_blocks(&self, a: &MatRef<A>, b: &MatRef<B>) -> bool {
        let limits = &self.limits;
        let elem = size_of::<A>();
        let min_bytes = if a.row_stride() != 1 || a.is_conj() {
            limits.a_by_blocks_min_copy_bytes
        } else if a.col_stride().unsigned_abs().saturating_mul(elem)
            >= limits.in_place_a_by_blocks_min_col_bytes
        {
            limits.in_place_a_by_blocks_min_bytes
        } else {
            return false;
        };
        !b.is_conj()
            && a.nrows() >= self.mr
            && a.nrows().saturating_mul(a.ncols()).saturating_mul(elem) >= min_bytes
    }

    pub(crate) fn ukr(&self) -> SupUkr<A, B> {
        self.ukr
    }
}

/// A tall-A kernel: for C with at most NT columns and an A too large for any cache, reads A
/// in place once, k block by k block, prefetching ahead (`frame/l3/tall.rs`).
pub struct TallKernel<A: Element, B: Element> {
    name: &'static str,
    ukr: TallUkr<A, B>,
    mr: usize,
    nt: usize,
    kc: usize,
    prefetch_tiles: usize,
    limits: TallLimits,
}

/// When the tall path is taken (besides n ≤ NT, A column-stored and the sup path not
/// taken): A must lie in a range of sizes where streaming it in place beats packing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TallLimits {
    /// Smallest A, m·k·size in bytes.
    pub min_a_bytes: usize,
    /// Largest A, m·k·size in bytes, read by k blocks of the kernel's KC: past it A comes
    /// from memory, and the KC block's way of reading it (one line from each of hundreds of
    /// far-apart columns) is slower there than packing's longer runs. `usize::MAX` where it
    /// is not.
    pub max_a_bytes: usize,
    /// Past `max_a_bytes`: k blocks of this many columns (0: pack A instead), each walked
    /// down all of a row block's tiles before the next, C's running sums kept in a
    /// tile-major scratch (`frame/l3/tall.rs`). A few columns side by side are a few long
    /// streams, which the hardware prefetcher follows at full speed. There C may have up to
    /// two groups of NT columns.
    pub from_memory_kc: usize,
}

/// How many groups of NT columns the from-memory tall path takes
/// ([`TallLimits::from_memory_kc`]): each group is one more pass of the kernel down each k
/// block, reading it from L2.
pub(crate) const FROM_MEMORY_MAX_GROUPS: usize = 2;

impl<A: Element, B: Element> Clone for TallKernel<A, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A: Element, B: Element> Copy for TallKernel<A, B> {}

impl<A: Element, B: Element> TallKernel<A, B> {
    /// Registers a tall-A kernel for tiles up to `mr`×`nt`, run over k blocks of `kc`
    /// columns with A prefetched `prefetch_tiles` tiles (of `mr` rows) ahead, for problems
    /// within `limits`.
    ///
    /// # Safety
    /// `ukr` must implement the [`TallUkr`] contract for tiles up to `mr`×`nt`, and any
    /// context holding it must only be used on CPUs with the features it needs.
    pub const unsafe fn new(
        name: &'static str,
        ukr: TallUkr<A, B>,
        (mr, nt): (usize, usize),
        kc: usize,
        prefetch_tiles: usize,
        limits: TallLimits,
    ) -> Self {
        TallKernel {
            name,
            ukr,
            mr,
            nt,
            kc,
            prefetch_tiles,
            limits,
        }
    }
    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// Its largest tile, MR×NT.
    pub fn tile(&self) -> (usize, usize) {
        (self.mr, self.nt)
    }
    /// The k block (columns of A per pass down A).
    pub fn kc(&self) -> usize {
        self.kc
    }
    /// How many tiles ahead A is prefetched.
    pub fn prefetch_tiles(&self) -> usize {
        self.prefetch_tiles
    }
    /// When it is used.
    pub fn limits(&self) -> TallLimits {
        self.limits
    }
    /// Whether an m×k A (column-stored) times k×n B is for this kernel.
    pub(crate) fn suits(&self, m: usize, n: usize, k: usize) -> bool {
        if self.reads_from_memory(m, k) {
            return n <= FROM_MEMORY_MAX_GROUPS * self.nt;
        }
        let a_bytes = m.saturating_mul(k).saturating_mul(size_of::<A>());
        n <= self.nt && (self.limits.min_a_bytes..=self.limits.max_a_bytes).contains(&a_bytes)
    }
    /// Whether an m×k A is past `max_a_bytes` with a from-memory k block to read it by
    /// ([`TallLimits::from_memory_kc`]).
    pub(crate) fn reads_from_memory(&self, m: usize, k: usize) -> bool {
        let a_bytes = m.saturating_mul(k).saturating_mul(size_of::<A>());
        self.limits.from_memory_kc > 0
            && a_bytes > self.limits.max_a_bytes
            && a_bytes >= self.limits.min_a_bytes
    }
    pub(crate) fn ukr(&self) -> TallUkr<A, B> {
        self.ukr
    }
}

/// One dtype's entry in a context: its microkernel and how to block for it, and optionally
/// a sup kernel for small problems.
pub struct GemmKernel<A: Element, B: Element> {
    name: &'static str,
    ukr: GemmUkr<A, B>,
    prefers_rows: bool,
    bs: Blocksizes,
    sup: Option<SupKernel<A, B>>,
    tall: Option<TallKernel<A, B>>,
    gemv: Option<GemvUkr<A, B>>,
    gemv_columns: Option<(GemvColumnsUkr<A, B>, usize)>,
    dots: Option<DotsUkr<A, B>>,
    tall_dots_max_a_bytes: usize,
    wide_dots_max_row_bytes: usize,
    short_k: Option<ShortKUkr<A, B>>,
    transpose_a: Option<TransposeUkr<A>>,
    transpose_b: Option<TransposeUkr<B>>,
    a_k_group: usize,
    b_k_group: usize,
    hw_context: Option<HwContext>,
}

/// A kernel's per-thread hardware state (AMX: the tile configuration): `set` runs on each
/// thread before its first microkernel call of a gemm, `release` after its last (also when
/// the call fails). Both are no-ops for kernels without such state, which register none.
#[derive(Clone, Copy, Debug)]
pub struct HwContext {
    /// Makes the thread ready to run the kernel.
    pub set: unsafe fn(),
    /// Returns the thread to its state before `set`.
    pub release: unsafe fn(),
}

impl<A: Element, B: Element> Clone for GemmKernel<A, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A: Element, B: Element> Copy for GemmKernel<A, B> {}

impl<A: Element, B: Element> std::fmt::Debug for GemmKernel<A, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GemmKernel")
            .field("name", &self.name)
            .field("prefers_rows", &self.prefers_rows)
            .field("blocksizes", &self.bs)
            .field("sup", &self.sup.map(|s| (s.name, s.mr, s.nr, s.limits)))
            .field(
                "tall",
                &self.tall.map(|t| (t.name, t.mr, t.nt, t.kc, t.limits)),
            )
            .finish()
    }
}

impl<A: Element, B: Element> GemmKernel<A, B> {
    /// Registers a microkernel. `prefers_rows` says the kernel is fastest when C is
    /// row-stored (unit column stride); the loop nest transposes the whole problem when C's
    /// storage disagrees. Blocksizes are checked by [`Cntx::validate`].
    ///
    /// # Safety
    /// `ukr` must implement the [`GemmUkr`] contract for `bs.mr`×`bs.nr` tiles, and any
    /// context holding this entry must only be used on CPUs that have the features `ukr`
    /// needs (the configuration's required features).
    pub const unsafe fn new(
        name: &'static str,
        ukr: GemmUkr<A, B>,
        prefers_rows: bool,
        bs: Blocksizes,
    ) -> Self {
        GemmKernel {
            name,
            ukr,
            prefers_rows,
            bs,
            sup: None,
            tall: None,
            gemv: None,
            gemv_columns: None,
            dots: None,
            tall_dots_max_a_bytes: 0,
            wide_dots_max_row_bytes: 0,
            short_k: None,
            transpose_a: None,
            transpose_b: None,
            a_k_group: 1,
            b_k_group: 1,
            hw_context: None,
        }
    }

    /// The same entry for a kernel whose packed panels interleave `g` consecutive k values
    /// (the VNNI layout: `a[(p/g)·MR·g + i·g + p%g]`, `b[(p/g)·NR·g + j·g + p%g]`, k padded
    /// with zeros to a multiple of `g`, and the kernel called with that padded k). 1 is the
    /// plain layout of `kernels/mod.rs`. Checked by [`Cntx::validate`] (g a power of two up
    /// to 64, KC a multiple of g).
    ///
    /// # Safety
    /// The kernel must read its panels in exactly this layout (with a k that is a multiple
    /// of `g`).
    pub const unsafe fn with_k_group(self, g: usize) -> Self {
        // SAFETY: passed on to the caller.
        unsafe { self.with_k_groups(g, g) }
    }

    /// [`with_k_group`](Self::with_k_group) with different groups for A and B: A's panels
    /// interleave `a_group` k values, B's `b_group`, and both are padded to the larger (the
    /// groups are powers of two). AMX kernels want this: an A tile row holds 32 bf16 (64 i8)
    /// consecutive k values of one row, a B tile row pairs (quads) of k for each column.
    ///
    /// # Safety
    /// The kernel must read its panels in exactly this layout, with k a multiple of both.
    pub const unsafe fn with_k_groups(self, a_group: usize, b_group: usize) -> Self {
        GemmKernel {
            a_k_group: a_group,
            b_k_group: b_group,
            ..self
        }
    }

    /// The k granularity of packed panels and kernel calls: k is padded to a multiple of it
    /// (1: plain layout, no padding). The larger of the A and B groups.
    pub fn k_group(&self) -> usize {
        self.a_k_group.max(self.b_k_group)
    }

    /// How many consecutive k values A's and B's packed panels interleave.
    pub fn k_groups(&self) -> (usize, usize) {
        (self.a_k_group, self.b_k_group)
    }

    /// `k` rounded up to the packing's k group: the depth of packed panels and of the
    /// kernel's calls.
    pub(crate) fn padded_k(&self, k: usize) -> usize {
        k.next_multiple_of(self.k_group())
    }

    /// The same entry with per-thread hardware state to set before the kernel runs and
    /// release after ([`HwContext`]; AMX tile configuration).
    ///
    /// # Safety
    /// `set` and `release` must be sound to call on any thread of a CPU with the
    /// configuration's features, in pairs, and the kernel must run correctly between them.
    pub const unsafe fn with_hw_context(self, hw: HwContext) -> Self {
        GemmKernel {
            hw_context: Some(hw),
            ..self
        }
    }

    /// The kernel's per-thread hardware state, if it has any.
    pub fn hw_context(&self) -> Option<HwContext> {
        self.hw_context
    }

    /// Sets this kernel's per-thread hardware state (if any) on the calling thread until the
    /// returned guard drops. Every caller of [`GemmKernel::ukr`] holds one. If the same
    /// state is already set on this thread (held by [`GemmKernel::hold_hw_context`], or by
    /// an enclosing guard), the guard does nothing; if a different one is, it is released
    /// first and set again when the guard drops.
    pub(crate) fn enter_hw_context(&self) -> HwContextGuard {
        let Some(hw) = self.hw_context else {
            return HwContextGuard(None, std::marker::PhantomData);
        };
        let previous = ACTIVE_HW_CONTEXT.get();
        if previous.is_some_and(|p| p.same_as(&hw)) {
            return HwContextGuard(None, std::marker::PhantomData);
        }
        // SAFETY: `previous` was set on this thread and is set again when the guard drops;
        // `hw.set` is paired with the guard's release (`with_hw_context`'s contract).
        unsafe {
            if let Some(previous) = previous {
                (previous.release)();
            }
            (hw.set)();
        }
        ACTIVE_HW_CONTEXT.set(Some(hw));
        HwContextGuard(Some((hw, previous)), std::marker::PhantomData)
    }

    /// Sets this kernel's per-thread hardware state (if any) on the calling thread and keeps
    /// it set, across calls, until [`release_held_hw_context`]: what the brgemm API's
    /// `set_hw_context` does, so a run of executes configures the tiles once. Calls that use
    /// the same state meanwhile leave it alone; calls with other state restore it after.
    pub(crate) fn hold_hw_context(&self) {
        let Some(hw) = self.hw_context else { return };
        match ACTIVE_HW_CONTEXT.get() {
            Some(active) if active.same_as(&hw) => {}
            active => {
                if let Some(active) = active {
                    // SAFETY: pairs the `set` that made `active` current on this thread.
                    unsafe { (active.release)() };
                }
                // SAFETY: `with_hw_context`'s contract; released by release_held_hw_context.
                unsafe { (hw.set)() };
                ACTIVE_HW_CONTEXT.set(Some(hw));
            }
        }
    }

    /// The same entry with packing kernels for A's and B's elements (8×8 block transposes,
    /// used where a panel's source is contiguous along k; `frame/packm.rs`). Without them,
    /// packing transposes with a portable loop.
    ///
    /// # Safety
    /// Both must implement the [`TransposeUkr`] contract, and any context holding this entry
    /// must only be used on CPUs with the features they need.
    pub const unsafe fn with_pack_transposes(self, a: TransposeUkr<A>, b: TransposeUkr<B>) -> Self {
        GemmKernel {
            transpose_a: Some(a),
            transpose_b: Some(b),
            ..self
        }
    }

    /// The packing kernels for A and B, if this entry has them.
    pub(crate) fn pack_transposes(&self) -> (Option<TransposeUkr<A>>, Option<TransposeUkr<B>>) {
        (self.transpose_a, self.transpose_b)
    }

    /// The same entry with a gemv kernel for the degenerate shapes (C with one column or
    /// one row; `frame/l3/gemv.rs`).
    ///
    /// # Safety
    /// `gemv` must implement the [`GemvUkr`] contract, and any context holding this entry
    /// must only be used on CPUs with the features it needs.
    pub const unsafe fn with_gemv(self, gemv: GemvUkr<A, B>) -> Self {
        GemmKernel {
            gemv: Some(gemv),
            ..self
        }
    }

    /// The gemv kernel, if this entry has one.
    pub(crate) fn gemv(&self) -> Option<GemvUkr<A, B>> {
        self.gemv
    }

    /// The same entry with a gemv kernel for a few columns at once, used for a C of up to
    /// `max_n` columns (in calls of up to [`crate::kernels::GEMV_COLUMNS_MAX`]) whose A is
    /// not worth packing (`frame/l3/gemv.rs`). Without one, such C is packed.
    ///
    /// # Safety
    /// `columns` must implement the [`GemvColumnsUkr`] contract, and any context holding this
    /// entry must only be used on CPUs with the features it needs.
    pub const unsafe fn with_gemv_columns(
        self,
        columns: GemvColumnsUkr<A, B>,
        max_n: usize,
    ) -> Self {
        GemmKernel {
            gemv_columns: Some((columns, max_n)),
            ..self
        }
    }

    /// The columns kernel and the widest C it is used for, if this entry has one.
    pub(crate) fn gemv_columns(&self) -> Option<(GemvColumnsUkr<A, B>, usize)> {
        self.gemv_columns
    }

    /// The same entry with a dots kernel for short, wide C whose B has contiguous columns
    /// (`frame/l3/dots.rs`).
    ///
    /// # Safety
    /// `dots` must implement the [`DotsUkr`] contract, and any context holding this entry
    /// must only be used on CPUs with the features it needs.
    pub const unsafe fn with_dots(self, dots: DotsUkr<A, B>) -> Self {
        GemmKernel {
            dots: Some(dots),
            ..self
        }
    }

    /// The dots kernel, if this entry has one.
    pub(crate) fn dots(&self) -> Option<DotsUkr<A, B>> {
        self.dots
    }

    /// Says the dots kernel takes a tall TN C (more rows than columns, 13 to 28 columns, or 9
    /// to 12 with more than 64 rows; k long enough) whatever its rows, up to an op(A) of
    /// `max_a_bytes`, as the transposed problem in row blocks (`frame/l3/dots.rs`). Without
    /// it (0, the default) such a C takes the dots path only up to 800 elements.
    pub const fn with_tall_dots(self, max_a_bytes: usize) -> Self {
        GemmKernel {
            tall_dots_max_a_bytes: max_a_bytes,
            ..self
        }
    }

    /// The largest op(A), in bytes, of a tall TN C that the dots path takes
    /// ([`Self::with_tall_dots`]; 0: none past the general rule).
    pub(crate) fn tall_dots_max_a_bytes(&self) -> usize {
        self.tall_dots_max_a_bytes
    }

    /// Says the dots kernel takes a wide TN C (no more rows than columns, 9 to 28 rows; k
    /// long enough) whose rows do not fill the sup kernel's vectors (m not a multiple of
    /// MR/2) and are at most `max_row_bytes` long, as it is in row blocks
    /// (`frame/l3/dots.rs`). Without it (0, the default) such a C takes the dots path only up
    /// to 800 elements (64 columns for 9–12 rows).
    pub const fn with_wide_dots(self, max_row_bytes: usize) -> Self {
        GemmKernel {
            wide_dots_max_row_bytes: max_row_bytes,
            ..self
        }
    }

    /// The longest rows, in bytes, of a wide TN C with partly filled vectors that the dots
    /// path takes ([`Self::with_wide_dots`]; 0: none past the general rule).
    pub(crate) fn wide_dots_max_row_bytes(&self) -> usize {
        self.wide_dots_max_row_bytes
    }

    /// The same entry with a short-k kernel for products a few k steps deep
    /// (`frame/l3/short_k.rs`).
    ///
    /// # Safety
    /// `short_k` must implement the [`ShortKUkr`] contract, and any context holding this
    /// entry must only be used on CPUs with the features it needs.
    pub const unsafe fn with_short_k(self, short_k: ShortKUkr<A, B>) -> Self {
        GemmKernel {
            short_k: Some(short_k),
            ..self
        }
    }

    /// The short-k kernel, if this entry has one.
    pub(crate) fn short_k(&self) -> Option<ShortKUkr<A, B>> {
        self.short_k
    }

    /// The same entry with a sup kernel for small problems (which prefers column-stored C,
    /// like the packed kernels this project has so far).
    pub const fn with_sup(self, sup: SupKernel<A, B>) -> Self {
        GemmKernel {
            sup: Some(sup),
            ..self
        }
    }

    /// The sup kernel, if this entry has one.
    pub fn sup(&self) -> Option<&SupKernel<A, B>> {
        self.sup.as_ref()
    }

    /// The same entry with other cache blocks (KC, MC, NC); MR×NR belong to the kernel and
    /// stay. For a configuration that shares another's kernels on CPUs with other caches
    /// (`config/sapphirerapids.rs`); the blocks are checked when the context is validated.
    pub const fn with_cache_blocks(self, kc: usize, mc: usize, nc: usize) -> Self {
        GemmKernel {
            bs: Blocksizes {
                kc,
                mc,
                nc,
                ..self.bs
            },
            ..self
        }
    }

    /// The same entry with a tall-A kernel for C with few columns and a large A.
    pub const fn with_tall(self, tall: TallKernel<A, B>) -> Self {
        GemmKernel {
            tall: Some(tall),
            ..self
        }
    }

    /// The tall-A kernel, if this entry has one.
    pub fn tall(&self) -> Option<&TallKernel<A, B>> {
        self.tall.as_ref()
    }

    /// The kernel's name, e.g. `reference_f64_4x4`.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The kernel's blocksizes.
    pub fn blocksizes(&self) -> Blocksizes {
        self.bs
    }
    /// Whether the kernel prefers row-stored C.
    pub fn prefers_rows(&self) -> bool {
        self.prefers_rows
    }
    /// The microkernel itself.
    pub(crate) fn ukr(&self) -> GemmUkr<A, B> {
        self.ukr
    }

    fn validate(&self, cntx: &str) -> Result<()> {
        let Blocksizes { mr, nr, kc, mc, nc } = self.bs;
        let bad = |why: String| {
            Err(Error::new(
                ErrorKind::Config,
                format!("context {cntx}, kernel {}: {why}", self.name),
            ))
        };
        if let Some(sup) = &self.sup
            && (sup.mr == 0 || sup.nr == 0 || sup.mr * sup.nr > MAX_TILE_ELEMS)
        {
            return bad(format!(
                "sup tile {}×{} must be non-empty and at most {MAX_TILE_ELEMS} elements",
                sup.mr, sup.nr
            ));
        }
        if let Some(t) = &self.tall
            && (t.mr == 0 || t.nt == 0 || t.kc == 0)
        {
            return bad(format!(
                "tall tile {}×{} and k block {} must be non-empty",
                t.mr, t.nt, t.kc
            ));
        }
        if mr == 0 || nr == 0 || mr * nr > MAX_TILE_ELEMS {
            return bad(format!(
                "MR×NR = {mr}×{nr} must be non-empty and at most {MAX_TILE_ELEMS} elements"
            ));
        }
        if kc == 0 {
            return bad("KC must be at least 1".into());
        }
        for g in [self.a_k_group, self.b_k_group] {
            if !g.is_power_of_two() || g > 64 || kc % g != 0 {
                return bad(format!(
                    "k group {g} must be a power of two up to 64 dividing KC = {kc}"
                ));
            }
        }
        if mc == 0 || mc % mr != 0 {
            return bad(format!(
                "MC = {mc} must be a positive multiple of MR = {mr}"
            ));
        }
        if nc == 0 || nc % nr != 0 {
            return bad(format!(
                "NC = {nc} must be a positive multiple of NR = {nr}"
            ));
        }
        let a_bytes = mc
            .checked_mul(kc)
            .and_then(|e| e.checked_mul(size_of::<A>()));
        let b_bytes = nc
            .checked_mul(kc)
            .and_then(|e| e.checked_mul(size_of::<B>()));
        match (a_bytes, b_bytes) {
            (Some(a), Some(b)) if a <= MAX_PACKED_BYTES && b <= MAX_PACKED_BYTES => Ok(()),
            _ => bad(format!(
                "packed blocks MC×KC = {mc}×{kc} and KC×NC = {kc}×{nc} exceed {MAX_PACKED_BYTES} bytes"
            )),
        }
    }
}

thread_local! {
    /// The hardware state set on this thread ([`HwContext`]), if any: by a guard of
    /// [`GemmKernel::enter_hw_context`] or held by [`GemmKernel::hold_hw_context`].
    static ACTIVE_HW_CONTEXT: std::cell::Cell<Option<HwContext>> = const { std::cell::Cell::new(None) };
}

impl HwContext {
    /// The same set/release functions.
    fn same_as(&self, other: &HwContext) -> bool {
        std::ptr::fn_addr_eq(self.set, other.set)
            && std::ptr::fn_addr_eq(self.release, other.release)
    }
}

/// Releases the hardware state [`GemmKernel::hold_hw_context`] left set on the calling
/// thread (nothing if none is).
pub(crate) fn release_held_hw_context() {
    if let Some(hw) = ACTIVE_HW_CONTEXT.take() {
        // SAFETY: pairs the `set` that made it current on this thread.
        unsafe { (hw.release)() };
    }
}

/// Releases a kernel's per-thread hardware state when dropped, and puts back what was set
/// before ([`GemmKernel::enter_hw_context`]). Not `Send`: the state belongs to the thread
/// that set it.
pub(crate) struct HwContextGuard(
    Option<(HwContext, Option<HwContext>)>,
    std::marker::PhantomData<*const ()>,
);

impl Drop for HwContextGuard {
    fn drop(&mut self) {
        if let Some((hw, previous)) = self.0 {
            // SAFETY: pairs the `set` made by `enter_hw_context`, on the same thread (the
            // guard is not Send); then `previous` is set again as it was, with the contract
            // it was first set under.
            unsafe {
                (hw.release)();
                if let Some(previous) = previous {
                    (previous.set)();
                }
            }
            ACTIVE_HW_CONTEXT.set(previous);
        }
    }
}

/// A configuration's kernels and blocksizes for every dtype. Immutable once built.
#[derive(Clone, Debug)]
pub struct Cntx {
    pub(crate) name: &'static str,
    pub(crate) sgemm: GemmKernel<f32, f32>,
    pub(crate) dgemm: GemmKernel<f64, f64>,
    pub(crate) cgemm: GemmKernel<c32, c32>,
    pub(crate) zgemm: GemmKernel<c64, c64>,
    pub(crate) bgemm: GemmKernel<bf16, bf16>,
    pub(crate) igemm: GemmKernel<i8, i8>,
    pub(crate) ugemm: GemmKernel<u8, i8>,
    pub(crate) threads: ThreadPrefs,
}

impl Cntx {
    /// The configuration this context belongs to.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Preferences for automatic threading.
    pub fn thread_prefs(&self) -> ThreadPrefs {
        self.threads
    }

    /// A copy with other threading preferences (for tuning).
    pub fn with_thread_prefs(self, threads: ThreadPrefs) -> Cntx {
        Cntx { threads, ..self }
    }

    /// The kernel entry for the element pair `(A, B)`, e.g. `cntx.kernel::<f64, f64>()`.
    pub fn kernel<A: GemmPair<B>, B: Element>(&self) -> &GemmKernel<A, B> {
        A::kernel(self)
    }

    /// A copy with the cache blocksizes (KC, MC, NC) of one pair's kernel replaced; MR and NR
    /// belong to the kernel and stay. Used by tests (to reach every edge cheaply) and tuning.
    pub fn with_blocksizes<A: GemmPair<B>, B: Element>(
        mut self,
        kc: usize,
        mc: usize,
        nc: usize,
    ) -> Result<Self> {
        let name = self.name;
        let entry = A::kernel_mut(&mut self);
        *entry = entry.with_cache_blocks(kc, mc, nc);
        entry.validate(name)?;
        Ok(self)
    }

    /// A copy with one pair's kernel entry replaced, after validating it: for kernel authors
    /// trying a kernel inside an existing configuration (`docs/KernelsHowTo.md`), and for the
    /// testsuite's self-test, which plants a broken one.
    pub fn with_kernel<A: GemmPair<B>, B: Element>(
        mut self,
        kernel: GemmKernel<A, B>,
    ) -> Result<Self> {
        kernel.validate(self.name)?;
        *A::kernel_mut(&mut self) = kernel;
        Ok(self)
    }

    /// A copy with no sup kernels: every problem takes the packed path and edge tiles go
    /// through the scratch tile (benchmarks use this to compare the paths).
    pub fn without_sup(mut self) -> Cntx {
        struct NoSup;
        impl KernelVisitor for NoSup {
            fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
                k.sup = None;
            }
        }
        self.visit_kernels(&mut NoSup);
        self
    }

    /// A copy whose tall-A kernels (if any) use `limits` (tests lower them to reach the tall
    /// path at small sizes).
    pub fn with_tall_limits(mut self, limits: TallLimits) -> Cntx {
        struct Limits(TallLimits);
        impl KernelVisitor for Limits {
            fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
                if let Some(t) = &mut k.tall {
                    t.limits = self.0;
                }
            }
        }
        self.visit_kernels(&mut Limits(limits));
        self
    }

    /// A copy with no tall-A kernels: such problems take the packed path (benchmarks use
    /// this to compare the paths).
    pub fn without_tall(mut self) -> Cntx {
        struct NoTall;
        impl KernelVisitor for NoTall {
            fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
                k.tall = None;
            }
        }
        self.visit_kernels(&mut NoTall);
        self
    }

    /// A copy whose sup kernels (if any) use `limits` to decide when a whole problem takes
    /// the sup path. They still serve the packed path's edge tiles; limits of zero keep every
    /// problem on the packed path (tests use this to cover those edges at small sizes).
    pub fn with_sup_limits(mut self, limits: SupLimits) -> Cntx {
        struct Limits(SupLimits);
        impl KernelVisitor for Limits {
            fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
                if let Some(sup) = &mut k.sup {
                    sup.limits = self.0;
                }
            }
        }
        self.visit_kernels(&mut Limits(limits));
        self
    }

    /// Checks every kernel's blocksizes.
    pub fn validate(&self) -> Result<()> {
        struct Validate<'a>(&'a str, Result<()>);
        impl KernelVisitor for Validate<'_> {
            fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
                if self.1.is_ok() {
                    self.1 = k.validate(self.0);
                }
            }
        }
        let mut check = Validate(self.name, Ok(()));
        // A copy: the visitor takes entries mutably (one list of slots serves every use);
        // a context is a few hundred bytes of plain data.
        self.clone().visit_kernels(&mut check);
        check.1
    }

    /// Applies `v` to every pair's kernel entry, in the order s, d, c, z, b, i, u: the one
    /// place that lists the context's slots, so a new pair is added here once.
    pub(crate) fn visit_kernels(&mut self, v: &mut impl KernelVisitor) {
        v.visit(&mut self.sgemm);
        v.visit(&mut self.dgemm);
        v.visit(&mut self.cgemm);
        v.visit(&mut self.zgemm);
        v.visit(&mut self.bgemm);
        v.visit(&mut self.igemm);
        v.visit(&mut self.ugemm);
    }
}

/// Something done to every pair's kernel entry of a context, whatever its element types
/// ([`Cntx::visit_kernels`]).
pub(crate) trait KernelVisitor {
    /// Called once per entry.
    fn visit<A: Element, B: Element>(&mut self, kernel: &mut GemmKernel<A, B>);
}

#[cfg(test)]
impl Cntx {
    /// The generic context with its dgemm entry replaced by `ukr` as a 4×4 kernel with small
    /// cache blocks (KC = MC = NC = 8): how unit tests inject a recording or failing kernel.
    ///
    /// # Safety
    /// `ukr` must honour the kernel contract for 4×4 f64 tiles.
    pub(crate) unsafe fn generic_with_test_dgemm(
        ukr: GemmUkr<f64, f64>,
        prefers_rows: bool,
    ) -> Cntx {
        let bs = Blocksizes {
            mr: 4,
            nr: 4,
            kc: 8,
            mc: 8,
            nc: 8,
        };
        let mut cntx = (crate::config::generic::GENERIC.context)();
        // SAFETY: passed on to the caller.
        cntx.dgemm = unsafe { GemmKernel::new("test_f64_4x4", ukr, prefers_rows, bs) };
        cntx
    }
}

#[cfg(test)]
mod visitor_tests {
    use crate::config::generic::GENERIC;

    #[test]
    fn validate_reaches_every_slot_including_the_last() {
        let mut cntx = (GENERIC.context)();
        cntx.validate().unwrap();
        cntx.ugemm.bs.mc = cntx.ugemm.bs.mr + 1;
        let e = cntx.validate().unwrap_err();
        assert!(e.message().contains("reference_u8i8_8x4"), "{e}");
        let report_rows = crate::report::kernel_table_for_test(&(GENERIC.context)());
        assert_eq!(report_rows, "sdczbiu");
    }
}
