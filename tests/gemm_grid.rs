//! gemm against the reference over the full parameter grid, on every configuration this
//! machine supports: dtypes × op(A), op(B) × storage of C, A, B × alpha/beta classes × sizes
//! around MR, NR, KC, MC, NC (with shrunken cache blocksizes, so the edges are cheap), plus
//! 0 and 1, and the BLAS special cases (NaN in C with beta = 0, NaN in A/B with alpha = 0).

mod harness;

use harness::{
    Case, Dt, SCALAR_CLASSES, ScalarClass, blocksizes_of, contexts_with_tiny_blocks, gemm_output,
    no_sup_limits, run_case, run_case_of, same_bits, sup_limits_of, sup_tile_of,
};
use oxblis::check::{Op, Rng, Storage, Values};
use oxblis::{Blocksizes, Cntx, PackAOnly, PackBRows, Rntm, SupLimits, Ways, c32, c64};

/// Runs one case for one dtype.
type Runner<'a> = &'a dyn Fn(&Cntx, &Case, u64);

/// Calls `f` once per dtype with that dtype's runner and BLAS letter.
fn for_each_dtype(f: &mut dyn FnMut(Runner, char)) {
    f(&|c, case, seed| run_case::<f32>(c, None, case, seed), 's');
    f(&|c, case, seed| run_case::<f64>(c, None, case, seed), 'd');
    f(&|c, case, seed| run_case::<c32>(c, None, case, seed), 'c');
    f(&|c, case, seed| run_case::<c64>(c, None, case, seed), 'z');
}

/// Every op(A) × op(B) × storage of C, A and B, at sizes that leave edge tiles in both
/// dimensions and cross the (shrunken) KC, MC and NC blocks, on the packed path and with
/// only A packed; and the same on each configuration as is (the sup path, where it has one).
#[test]
fn every_op_and_storage_combination() {
    for (full, tiny) in contexts_with_tiny_blocks() {
        for cntx in [&full, &tiny, &packing_only_a(&tiny)] {
            for_each_dtype(&mut |run, letter| {
                let Blocksizes { mr, nr, .. } = blocksizes_of(cntx, letter);
                let cases = Case::every_op_and_storage(2 * mr + 3, 2 * nr + 1, 7);
                for (seed, case) in cases.enumerate() {
                    run(cntx, &case, seed as u64);
                }
            });
        }
    }
}

/// The sup path's edges: sizes 0, 1 and either side of its MR and NR, n = 2…4 (with 1 and
/// NR − 1, every column count skx's kernels leave after their NR/2-wide halves), n = 7…9
/// (skx computes full tiles of up to 8 columns in one pass, f32 from k = 128), and k either
/// side of 128, with random op()s, storages and scalar classes, on each configuration as is.
#[test]
fn sizes_around_the_sup_tile() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let mut rng = Rng::new(47);
            let mut seed = 7000;
            for m in [1, mr - 1, mr, mr + 1, 2 * mr + 3] {
                for n in [1, 2, 3, 4, 7, 8, 9, nr - 1, nr, nr + 1, 2 * nr + 1] {
                    for k in [1, 7, 100, 127, 129] {
                        seed += 1;
                        run(&full, &Case::random(&mut rng, m, n, k), seed);
                    }
                }
            }
        });
    }
}

/// Full sup tiles with long k and B's columns spread over the L1's sets: skx's dgemm and
/// sgemm kernels compute up to 12 columns in one pass there (from k = 384), halves otherwise. Column
/// counts either side of the halves' 6 and of 8, k either side of 384, every (alpha, beta)
/// class pair, B column-stored with its leading dimension as given by the case.
#[test]
fn long_k_full_tiles() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let mut seed = 15000;
            for m in [mr, 2 * mr] {
                for n in [7, 9, nr - 1, nr] {
                    for k in [383, 384, 400] {
                        seed += 1;
                        let case = Case::new(m, n, k).with_classes_of(seed);
                        run(&full, &case, seed as u64);
                    }
                }
            }
        });
    }
}

/// B whose rows are contiguous and more than a page apart, spanning more than the L2 along
/// k: the sup path prefetches its rows a few column panels ahead of the tiles
/// (`prefetches_b_rows` in `frame/l3/sup.rs`). Rows of 1103 elements (op(B) = Bᵀ of a
/// column-stored B, ld = n + 3) or 1102 (a row-stored B), 300 of them: 1.3 MB and up.
/// Prefetches change no result; this runs the path on every configuration, with edge
/// tiles in both dimensions and the alpha and beta classes in turn.
#[test]
fn b_rows_far_apart_and_prefetched() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, _) = sup_tile_of(&full, letter);
            let mut seed = 16000;
            for m in [mr + 1, 2 * mr] {
                for (op_b, st_b) in [(Op::T, Storage::Col), (Op::N, Storage::Row)] {
                    seed += 1;
                    let case = Case {
                        op_b,
                        st_b,
                        ..Case::new(m, 1100, 300)
                    }
                    .with_classes_of(seed);
                    run(&full, &case, seed as u64);
                }
            }
        });
    }
}

/// Every row count of a sup tile, 1..=MR: the sup kernels pick an instance by the shape of
/// the tile's row vectors (one masked vector, one full one, a full one and a masked
/// half-width one, two full ones, …; `kernels/x86/sup_real.rs`), so each count is its own
/// path. Each with C column-stored (the vector epilogue, masked or not) and in every other
/// storage, B's row stride 1 and not (the loop with a constant row stride and the other),
/// and each (alpha, beta) class pair over the counts; on every configuration.
#[test]
fn every_row_count_of_the_sup_tile() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let mut seed = 13000;
            for m in 1..=mr {
                for (n, k) in [(nr, 37), (nr / 2 + 1, 1), (1, 6)] {
                    for st_c in Storage::ALL {
                        for op_b in [Op::N, Op::T] {
                            seed += 1;
                            let case = Case {
                                st_c,
                                op_b,
                                ..Case::new(m, n, k)
                            }
                            .with_classes_of(seed);
                            run(&full, &case, seed as u64);
                        }
                    }
                }
            }
        });
    }
}

/// Row edges of one and two rows past whole sup tiles (m = MR + 1, MR + 2, 2·MR + 1): with
/// B's columns contiguous (op(B) = N) a one-row tile is computed as dot products along k
/// (`dot_row` in `kernels/x86/sup_real.rs`, from k = 2 vectors, A's row copied 64 elements
/// at a time; an f32 tile of two rows and 6 columns or more as two such rows from k = 4
/// vectors), and with B's rows contiguous (op(B) = T) a tile of up to two rows
/// as its transpose (`edge_transposed` in `frame/l3/sup.rs`). Depths around both
/// thresholds and the copy's chunk for f32 and f64, every storage of C, column counts
/// around NR, and (alpha, beta) classes cycling with NaN in C under beta = 0; on every
/// configuration.
#[test]
fn short_row_edges() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let mut seed = 14000;
            for m in [mr + 1, mr + 2, 2 * mr + 1] {
                for n in [1, nr - 1, nr + 1, 2 * nr + 3] {
                    for k in [1, 15, 16, 31, 32, 33, 64, 65, 130] {
                        for st_c in Storage::ALL {
                            for op_b in [Op::N, Op::T] {
                                seed += 1;
                                let case = Case {
                                    st_c,
                                    op_b,
                                    ..Case::new(m, n, k)
                                }
                                .with_classes_and_nan_of(seed as u64);
                                run(&full, &case, seed as u64);
                            }
                        }
                    }
                }
            }
        });
    }
}

/// Row tiles of one whole vector (MR/2 rows) and r rows more, whose last r rows a
/// configuration may compute as a transposed tile of their own where op(B)'s rows are
/// contiguous (`split_remainder_transposed` in `frame/l3/sup.rs`; skx: sgemm r ≤ 6, dgemm
/// r ≤ 3 in tiles of r + 2 to 10 columns): r = 1–7, a second row of tiles for r = 1, widths
/// either side of r + 2, 10 and NR, k either side of 32, storages of C in turn, op(B) = T and
/// N, (alpha, beta) classes cycling with NaN in C under beta = 0; on every configuration.
#[test]
fn row_remainders_past_a_vector() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let vector = mr / 2;
            let mut seed = 15000;
            for r in 1..=7 {
                let rows: &[usize] = if r == 1 {
                    &[vector + 1, mr + vector + 1]
                } else {
                    &[vector + r]
                };
                for &m in rows {
                    for n in [r + 1, r + 2, 10, nr] {
                        for k in [31, 32, 100] {
                            for op_b in [Op::T, Op::N] {
                                seed += 1;
                                let st_c = Storage::ALL[seed % 4];
                                let case = Case {
                                    st_c,
                                    op_b,
                                    ..Case::new(m, n, k)
                                }
                                .with_classes_and_nan_of(seed as u64);
                                run(&full, &case, seed as u64);
                            }
                        }
                    }
                }
            }
        });
    }
}

/// Problems of one sup tile, which `gemm_front` sends straight to the sup kernel
/// (`frame/l3/one_tile.rs`): every storage of C (row-stored C is solved as Cᵀ, general
/// strides take the usual path), op(A) and op(B) (A not column-stored or conjugated, and
/// conjugated B, are copied onto the stack when they fit, else take the usual path), with
/// random storages of A and B and scalar classes; k either side of the shortcut's bound
/// (256) and of what fits its copies; on each configuration as is.
#[test]
fn one_tile_problems_in_every_orientation() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (mr, nr) = sup_tile_of(&full, letter);
            let square = mr.min(nr);
            let mut rng = Rng::new(59);
            let mut seed = 12000;
            for (m, n) in [(mr, nr), (square, square), (3, 2), (2, 5)] {
                for k in [1, 2, 9, 24, 255, 256, 257] {
                    for st_c in Storage::ALL {
                        for op_a in Op::ALL {
                            for op_b in Op::ALL {
                                seed += 1;
                                let case = Case {
                                    st_c,
                                    op_a,
                                    op_b,
                                    ..Case::random(&mut rng, m, n, k)
                                };
                                run(&full, &case, seed);
                            }
                        }
                    }
                }
            }
        });
    }
}

/// The sup path with k split into blocks (as for a large A or a B with long rows), made to
/// split at test sizes: slices of 64 bytes of A (k blocks of 128 at least, so k = 300
/// splits; and, with more than one panel of C, rows in blocks of one tile, so m = 3·MR + 2
/// makes four), or at most 200 bytes of B along k, so each block's beta is 1 after the first
/// and k leaves a short last block (and row-stored B every time); sizes either side of the
/// sup tile, random op()s, storages and scalar classes (beta = 0 with NaN in C included).
/// The split by A's size also runs with C in column blocks of one panel
/// (`SupLimits::c_block_bytes_if_k_split` = 1 byte), so n = 3·NR + 2 makes four blocks.
#[test]
fn sup_path_with_k_split_into_blocks() {
    for (full, _) in contexts_with_tiny_blocks() {
        let Some(limits) = sup_limits_of(&full) else {
            continue;
        };
        // Split by A's size, and by B's span along k (row-stored B: rows of 2 + 2..7
        // elements, at most ~200 bytes per block, so 2..25 rows).
        let by_a = full.clone().with_sup_limits(SupLimits {
            k_block_bytes: 64,
            ..limits
        });
        let by_b = full.clone().with_sup_limits(SupLimits {
            k_block_bytes: 0,
            max_b_k_span_bytes: 200,
            ..limits
        });
        let by_a_in_column_blocks = full.clone().with_sup_limits(SupLimits {
            k_block_bytes: 64,
            c_block_bytes_if_k_split: 1,
            ..limits
        });
        for split in [&by_a, &by_b, &by_a_in_column_blocks] {
            for_each_dtype(&mut |run, letter| {
                let (mr, nr) = sup_tile_of(split, letter);
                let mut rng = Rng::new(53);
                let mut seed = 9000;
                for m in [1, 3, mr - 1, mr + 1, 3 * mr + 2] {
                    for n in [1, nr + 1, 3 * nr + 2] {
                        for k in [2, 9, 37, 100, 300] {
                            seed += 1;
                            run(split, &Case::random(&mut rng, m, n, k), seed);
                            let row_b = Case {
                                op_b: Op::N,
                                st_b: Storage::Row,
                                ..Case::random(&mut rng, m, n, k)
                            };
                            run(split, &row_b, seed);
                        }
                    }
                }
            });
        }
    }
}

/// The sup path with an op(A) the kernel cannot read in place (Aᵀ, Aᴴ, conjugated, or A with
/// rows not contiguous) packed block by block rather than copied whole
/// (`SupLimits::a_by_blocks_min_copy_bytes` = 0, every dtype), in the shrunken blocks (MC =
/// 2·MR, so m either side of it makes several row blocks) and with k split every 64 bytes of
/// A (the path's k slices are the sup path's: 300 makes three of 100); every
/// op(B) (a conjugated B keeps the whole copy), random storages and scalar classes, and NaN
/// in C under beta = 0. m = 1 and MR − 1 keep the whole copy too (fewer rows than MR are
/// never packed by blocks, `SupKernel::packs_a_by_blocks`), the border beside MR + 1.
#[test]
fn sup_path_packing_a_by_blocks() {
    for (full, tiny) in contexts_with_tiny_blocks() {
        let Some(limits) = sup_limits_of(&full) else {
            continue;
        };
        let by_blocks = tiny.with_sup_limits(SupLimits {
            a_by_blocks_min_copy_bytes: 0,
            k_block_bytes: 64,
            ..limits
        });
        // Op::N reads A in place unless its rows are not contiguous.
        let not_in_place = |op_a: Op, st_a: Storage| match (op_a, st_a) {
            (Op::N, Storage::Col) => Storage::Row,
            (_, st_a) => st_a,
        };
        by_blocks_grid(&by_blocks, &Op::ALL, &not_in_place, 59, 9500);
    }
}

/// The sup path with an op(A) it could read in place (contiguous rows: A column-stored, or
/// Aᵀ of a row-stored A) packed block by block instead (`SupLimits::
/// in_place_a_by_blocks_min_bytes` and `in_place_a_by_blocks_min_col_bytes` = 0, every
/// dtype), over the grid of the test above. m = 1 and MR − 1 stay in place (fewer rows
/// than MR).
#[test]
fn sup_path_packing_a_with_contiguous_rows_by_blocks() {
    for (full, tiny) in contexts_with_tiny_blocks() {
        let Some(limits) = sup_limits_of(&full) else {
            continue;
        };
        let by_blocks = tiny.with_sup_limits(SupLimits {
            in_place_a_by_blocks_min_bytes: 0,
            in_place_a_by_blocks_min_col_bytes: 0,
            k_block_bytes: 64,
            ..limits
        });
        let rows_contiguous = |op_a: Op, _: Storage| match op_a {
            Op::N => Storage::Col,
            _ => Storage::Row,
        };
        by_blocks_grid(&by_blocks, &[Op::N, Op::T], &rows_contiguous, 61, 9800);
    }
}

/// The grid of the two tests above on `by_blocks` (shrunken blocks: MC = 2·MR, so m either
/// side of it makes several row blocks; k split every 64 bytes of A, so 300 makes three
/// slices of 100): each op(A) in `ops_a` with its storage from `st_a` (given the op and a
/// random storage), every op(B), random storages of B and C and scalar classes, NaN in C
/// under beta = 0; cases drawn from `Rng::new(rng_seed)`, operands from `first_seed` on.
fn by_blocks_grid(
    by_blocks: &Cntx,
    ops_a: &[Op],
    st_a: &dyn Fn(Op, Storage) -> Storage,
    rng_seed: u64,
    first_seed: u64,
) {
    for_each_dtype(&mut |run, letter| {
        let Blocksizes { mr, nr, mc, kc, .. } = blocksizes_of(by_blocks, letter);
        let mut rng = Rng::new(rng_seed);
        let mut seed = first_seed;
        for m in [1, mr - 1, mr + 1, mc + mc / 3 + 1, 2 * mc + 1] {
            for n in [1, nr + 1, 2 * nr + 1] {
                for k in [1, kc + 1, 2 * kc + 1, 20, 300] {
                    for &op_a in ops_a {
                        for op_b in Op::ALL {
                            seed += 1;
                            let random = Case::random(&mut rng, m, n, k);
                            let case = Case {
                                op_a,
                                op_b,
                                st_a: st_a(op_a, random.st_a),
                                nan_in_c: random.beta == ScalarClass::Zero,
                                ..random
                            };
                            run(by_blocks, &case, seed);
                        }
                    }
                }
            }
        }
    });
}

/// The same at haswell's real limits (A of 2 MiB, columns 512 bytes apart): dgemm 64×n×4096
/// and sgemm 128×n×4096 with C of 1, 5, 13 and 64 columns, op(B) = B and Bᵀ, C column- and
/// row-stored, every alpha/beta class with NaN in C under beta = 0, on each configuration as
/// is, on one thread (automatic threading may take two, which read A in place); and teams of
/// threads give one thread's bits.
#[test]
fn large_a_with_contiguous_rows_by_blocks_at_the_real_limits() {
    let one = Rntm::new().with_num_threads(1).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let mut seed = 9900;
        for n in [1, 5, 13, 64] {
            for op_b in [Op::N, Op::T] {
                for st_c in [Storage::Col, Storage::Row] {
                    seed += 1;
                    let case = |m| Case {
                        op_b,
                        st_c,
                        ..Case::new(m, n, 4096).with_classes_and_nan_of(seed)
                    };
                    run_case::<f64>(&full, Some(&one), &case(64), seed);
                    run_case::<f32>(&full, Some(&one), &case(128), seed);
                    same_bits_on_teams::<f64>(&full, &case(64), seed);
                    same_bits_on_teams::<f32>(&full, &case(128), seed);
                }
            }
        }
    }
}

/// Short, wide C whose op(B) has contiguous rows (B column-stored, op(B) = Bᵀ or Bᴴ; or B
/// row-stored as is), which `gemm_front` solves transposed when C's columns are under 52
/// bytes (real types from k = 2 up to 32 bytes, k = 4 above, and a column of exactly one of
/// the kernel's vectors with op(A)'s columns contiguous from k = 128; complex from k = 32
/// under 32 bytes, 40 above, 128 at 32), or under 60 bytes with op(A)'s rows contiguous
/// (from k = 6, and from k = 2 for columns of at most 40 bytes), and the neighbouring shapes
/// it does not: m = 1…15, n past m (one tile, a partial second, many), k either side of
/// those thresholds, every op(A), A and C column-stored or not, every alpha/beta class (NaN
/// in C under beta = 0), on each configuration as is.
#[test]
fn short_wide_problems_with_b_rows_contiguous() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let (_, nr) = sup_tile_of(&full, letter);
            let mut seed = 12_000;
            for m in 1..=15 {
                for n in [m + 1, nr + 1, 97] {
                    for k in [1, 2, 3, 4, 5, 6, 32, 40, 64, 130] {
                        for (op_b, st_b) in [
                            (Op::T, Storage::Col),
                            (Op::C, Storage::Col),
                            (Op::N, Storage::Row),
                        ] {
                            for op_a in Op::ALL {
                                for st_a in [Storage::Col, Storage::Row] {
                                    for st_c in [Storage::Col, Storage::Gen] {
                                        seed += 1;
                                        let case = Case {
                                            op_a,
                                            op_b,
                                            st_a,
                                            st_b,
                                            st_c,
                                            ..Case::new(m, n, k).with_classes_and_nan_of(seed)
                                        };
                                        run(&full, &case, seed);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        });
    }
}

/// Short, wide C with op(B)'s rows contiguous past 60 bytes a column, which goes transposed
/// where its columns end in a partial vector of the kernel (with op(A)'s columns contiguous,
/// NT, only where that vector is not a whole half-width one, and from the configuration's
/// `nt_partial_column_min_k`: skx 32, haswell never), up to the
/// configuration's `max_transposed_partial_column_bytes` (skx: 256 bytes, haswell 128), and
/// as it is on whole vectors and past the limit: m from 16 to 65 (f32) or their f64 halves
/// and more, n past m, k either side of 32, every op(A), A and C column-stored or not, every
/// alpha/beta class (NaN in C under beta = 0), on each configuration as is.
#[test]
fn short_wide_problems_past_sixty_bytes_with_a_rows_contiguous() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut seed = 13_000;
            for m in [16, 17, 20, 31, 32, 33, 50, 63, 64, 65] {
                for n in [m + 1, 97] {
                    for k in [31, 32, 64, 130] {
                        for op_b in [Op::T, Op::C] {
                            for op_a in Op::ALL {
                                for st_c in [Storage::Col, Storage::Gen] {
                                    seed += 1;
                                    let case = Case {
                                        op_a,
                                        op_b,
                                        st_c,
                                        ..Case::new(m, n, k)
                                    }
                                    .with_classes_of(seed);
                                    // NaN in C must vanish under beta = 0.
                                    let nan_in_c = case.beta == ScalarClass::Zero;
                                    run(&full, &Case { nan_in_c, ..case }, seed as u64);
                                }
                            }
                        }
                    }
                }
            }
        });
    }
}

/// Problems of any shape with op(A)'s and op(B)'s rows contiguous (TT of column-major
/// operands, or N with row-stored ones) and k at least n, or C at least four times as tall
/// as it is wide (skx's dgemm), which skx's real and double complex kernels solve
/// transposed, both operands read in place, up to the configuration's
/// `SupLimits::tt_transposed` (`gemm::tt_transposed_in_place`): squares, tall and wide C
/// around the sup tile, k from 1 and either side of n, op(B)'s bytes either side of the
/// limit (n·k of 362² f32 and 256² f64 is just under 512 KiB), every op(A), C column-stored
/// or general, every alpha/beta class (NaN in C under beta = 0), on each configuration as
/// is; and on two threads past their threshold.
#[test]
fn tt_problems_solved_transposed() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let mut seed = 21_000usize;
        let mut run_all = |m: usize, n: usize, k: usize, rntm: Option<&Rntm>| {
            for (op_b, st_b) in [
                (Op::T, Storage::Col),
                (Op::C, Storage::Col),
                (Op::N, Storage::Row),
            ] {
                for (op_a, st_a) in [
                    (Op::T, Storage::Col),
                    (Op::C, Storage::Col),
                    (Op::N, Storage::Row),
                ] {
                    seed += 1;
                    let case = Case {
                        op_a,
                        op_b,
                        st_a,
                        st_b,
                        st_c: [Storage::Col, Storage::Gen][seed % 2],
                        ..Case::new(m, n, k)
                    }
                    .with_classes_of(seed);
                    // NaN in C must vanish under beta = 0.
                    let case = Case {
                        nan_in_c: case.beta == ScalarClass::Zero,
                        ..case
                    };
                    let seed = seed as u64;
                    run_case::<f32>(&full, rntm, &case, seed);
                    run_case::<f64>(&full, rntm, &case, seed);
                    run_case::<c32>(&full, rntm, &case, seed);
                    run_case::<c64>(&full, rntm, &case, seed);
                }
            }
        };
        for (m, n) in [
            (2, 2),
            (5, 3),
            (16, 16),
            (17, 13),
            (33, 33),
            (40, 12),
            (100, 7),
            (64, 16),
            (63, 16),
            (13, 40),
            (64, 65),
        ] {
            let mut ks = vec![1, 2, 31, 32, n, n + 1, 3 * n];
            ks.sort_unstable();
            ks.dedup();
            for k in ks {
                run_all(m, n, k, None);
            }
        }
        // op(B) either side of 512 KiB.
        run_all(20, 362, 362, None);
        run_all(20, 363, 363, None);
        run_all(20, 256, 256, None);
        run_all(20, 257, 257, None);
        // Past the two-thread threshold (2^19 multiply-adds).
        run_all(200, 100, 200, Some(&two));
        run_all(300, 40, 300, Some(&two));
        run_all(4000, 40, 5, Some(&two));
    }
}

/// Short, wide C whose op(B) has contiguous columns (B column-stored as is, or row-stored
/// and transposed), which the real dtypes compute as dot products (`frame/l3/dots.rs`), and
/// its transpose, a tall C of a few columns: m = 2…8 rows (one kernel call or two), k
/// around the path's thresholds (128 and 512 bytes of a row) and past its k block (512),
/// 150 columns for the two-pass kernels' chunks of B, every op(A) and storage of A (general strides too: gathered element by element) and C, every alpha/beta class (NaN in C under beta = 0), on
/// each configuration as is; and wide ones on two threads (each its own columns).
#[test]
fn short_wide_problems_with_b_columns_contiguous() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let mut seed = 15_000;
        let mut run_all = |m: usize, n: usize, k: usize, rntm: Option<&Rntm>| {
            for (op_b, st_b) in [(Op::N, Storage::Col), (Op::T, Storage::Row)] {
                for op_a in Op::ALL {
                    for st_a in [Storage::Col, Storage::Row, Storage::Gen] {
                        seed += 1;
                        let case = Case {
                            op_a,
                            op_b,
                            st_a,
                            st_b,
                            st_c: [Storage::Col, Storage::Row, Storage::Gen][(seed % 3) as usize],
                            ..Case::new(m, n, k).with_classes_and_nan_of(seed)
                        };
                        run_case::<f32>(&full, rntm, &case, seed);
                        run_case::<f64>(&full, rntm, &case, seed);
                    }
                }
            }
        };
        for m in 2..=8 {
            // k·4 and k·8 bytes around 128 and 512, and two k blocks.
            for k in [15, 16, 31, 32, 63, 64, 127, 128, 1100] {
                for n in [m + 1, 13] {
                    run_all(m, n, k, None);
                    run_all(n, m, k, None);
                }
            }
        }
        // Five to eight rows on 16 registers go in two passes over B, by chunks of its
        // columns (kernels/x86/dots_real.rs): 150 columns of 600 (two k blocks) are three
        // chunks of f32 and five of f64.
        for m in [5, 8] {
            run_all(m, 150, 600, None);
            run_all(150, m, 600, None);
        }
        // Past the two-thread threshold (2^19 multiply-adds).
        run_all(3, 3000, 128, Some(&two));
        run_all(3000, 3, 128, Some(&two));
    }
}

/// Short, wide C whose op(B) has contiguous rows more than 2 KiB apart (n = 700, and 1024:
/// 4 KiB for f32): solved transposed, the sup kernels read op(B)ᵀ's far-apart columns in
/// place where they spread over the L1's sets (`SupLimits::far_a_min_n`, and from
/// `far_a_min_n_c_rows` rows where the problem goes transposed), else the gemv columns
/// kernel streams them (2–4 rows); every op(A), k either side of the transposed path's
/// thresholds, every alpha/beta class (NaN in C under beta = 0), on each configuration as
/// is.
#[test]
fn short_wide_problems_with_far_apart_rows_of_b() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut seed = 19_000;
            for m in [2, 3, 4, 5, 8, 14] {
                for n in [700, 1024] {
                    for k in [4, 7, 40, 130] {
                        for (op_b, st_b) in [(Op::T, Storage::Col), (Op::N, Storage::Row)] {
                            for op_a in Op::ALL {
                                seed += 1;
                                let case = Case {
                                    op_a,
                                    op_b,
                                    st_b,
                                    ..Case::new(m, n, k).with_classes_and_nan_of(seed)
                                };
                                run(&full, &case, seed);
                            }
                        }
                    }
                }
            }
        });
    }
}

/// C of a few columns with A's columns more than 2 KiB apart (300 f64 or 600 f32 rows; 512
/// and 1024, 4 KiB, every other case). The sup kernels read such an A in place for 5–64
/// columns on skx and 4–64 on haswell where the columns spread over the L1's sets
/// (`SupLimits::far_a_min_n`, so not at 4 KiB); otherwise the gemv columns kernel takes it,
/// up to 4 columns a call, for up to 32 columns on skx and 8 on haswell
/// (`GEMV_COLUMNS_MAX_N` in the configurations; generic, without a columns kernel, packs
/// A), and A is packed past that: every op(B) and storage of B and C, A column-stored as is
/// and transposed (op(A) = Aᵀ of a row-stored A reads the same memory), k = 1, 9 and 100,
/// every alpha/beta class (NaN in C under beta = 0), on each configuration as is; on two
/// threads; and on teams of up to four, bit for bit against one thread.
#[test]
fn few_columns_with_far_apart_columns_of_a() {
    let ops_b = [
        (Op::N, Storage::Col),
        (Op::T, Storage::Col),
        (Op::N, Storage::Row),
        (Op::N, Storage::Gen),
    ];
    let grid = FarAGrid {
        first_seed: 17_000,
        ns: &[1, 2, 3, 4, 5, 8, 9, 13, 32, 33, 65],
        ks: &[1, 9, 100],
        ops_a: &[(Op::N, Storage::Col), (Op::T, Storage::Row)],
        ops_b: &ops_b,
    };
    grid.run(&mut |full, rntm, case, seed| {
        let (m32, m64) = if seed % 2 == 0 {
            (600, 300)
        } else {
            (1024, 512)
        };
        run_case::<f32>(full, rntm, &case(m32), seed);
        run_case::<f64>(full, rntm, &case(m64), seed);
        if seed % 7 == 0 {
            same_bits_on_teams::<f32>(full, &case(m32), seed);
            same_bits_on_teams::<f64>(full, &case(m64), seed);
        }
    });
}

/// The same for cgemm and zgemm, whose sup kernels read such an A in place only for 4–16
/// columns on haswell (`COMPLEX_SUP_LIMITS`), packing it from 17 up: A's columns 2400 bytes
/// apart (300 c32 or 150 c64 rows), C of 3, 4, 16, 17 and 33 columns, A as is, transposed
/// and conjugated in place, every op(B), every storage of C, every alpha/beta class, on each
/// configuration as is; on two threads one case in five.
#[test]
fn few_columns_with_far_apart_columns_of_a_complex() {
    let ops_b = [
        (Op::N, Storage::Col),
        (Op::T, Storage::Col),
        (Op::C, Storage::Col),
    ];
    let grid = FarAGrid {
        first_seed: 18_000,
        ns: &[3, 4, 16, 17, 33],
        ks: &[9, 100],
        ops_a: &[
            (Op::N, Storage::Col),
            (Op::T, Storage::Row),
            (Op::R, Storage::Col),
        ],
        ops_b: &ops_b,
    };
    grid.run(&mut |full, rntm, case, seed| {
        run_case::<c32>(full, rntm, &case(300), seed);
        run_case::<c64>(full, rntm, &case(150), seed);
    });
}

/// op(B) with contiguous rows (NT, or a row-major B) and k from 256: haswell's sup path copies
/// each column panel of B before its row tiles (`SupLimits::pack_b_panels_min_k`) where C
/// has at least four row tiles. m of 64 and 100 (f32) and 32 and 65 (f64) reach that (3 and
/// 48 rows do not, and stay in place); k = 256, 257 and 600 keep the f64 panel within its
/// 32 KiB buffer, and k = 1400 is split into k blocks whose panels fit it (f32 and f64), or,
/// in place with two or three row tiles (48 rows of f32), into blocks of at most 512
/// (`sup::b_panel_k_block`); C of 1, 5, 6, 7, 13 and 64 columns puts partial panels of
/// every width through the copy. A as is and transposed (copied), every storage of C, every
/// alpha/beta class with NaN in C under beta = 0, on each configuration as is; two threads
/// one case in five.
#[test]
fn row_stored_b_with_its_panels_copied() {
    let grid = FarAGrid {
        first_seed: 19_000,
        ns: &[1, 5, 6, 7, 13, 64],
        ks: &[256, 257, 600, 1400],
        ops_a: &[(Op::N, Storage::Col), (Op::T, Storage::Col)],
        ops_b: &[(Op::T, Storage::Col), (Op::N, Storage::Row)],
    };
    grid.run(&mut |full, rntm, case, seed| {
        for m in [3, 48, 64, 100] {
            run_case::<f32>(full, rntm, &case(m), seed);
        }
        for m in [3, 32, 65] {
            run_case::<f64>(full, rntm, &case(m), seed);
        }
    });
}

/// The grid of the tests above: C's columns × k × op(A) × op(B) × storage of C, alpha
/// and beta classes cycling with the seed (NaN in C under beta = 0), on each configuration
/// as is, two threads one case in five.
struct FarAGrid<'a> {
    first_seed: u64,
    ns: &'a [usize],
    ks: &'a [usize],
    ops_a: &'a [(Op, Storage)],
    ops_b: &'a [(Op, Storage)],
}

/// What [`FarAGrid::run`] calls per case: the context, the threads (`None`: the default),
/// the case for a given m, and its seed.
type FarACase<'a> = dyn FnMut(&Cntx, Option<&Rntm>, &dyn Fn(usize) -> Case, u64) + 'a;

impl FarAGrid<'_> {
    fn run(&self, run: &mut FarACase) {
        let two = Rntm::new().with_num_threads(2).unwrap();
        for (full, _) in contexts_with_tiny_blocks() {
            let mut seed = self.first_seed;
            for &n in self.ns {
                for &k in self.ks {
                    for &(op_a, st_a) in self.ops_a {
                        for &(op_b, st_b) in self.ops_b {
                            for st_c in [Storage::Col, Storage::Row, Storage::Gen] {
                                seed += 1;
                                let case = |m| Case {
                                    op_a,
                                    op_b,
                                    st_a,
                                    st_b,
                                    st_c,
                                    ..Case::new(m, n, k).with_classes_and_nan_of(seed)
                                };
                                let rntm = seed.is_multiple_of(5).then_some(&two);
                                run(&full, rntm, &case, seed);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `case` on teams of threads splitting C (not k) gives one thread's result bit for bit.
fn same_bits_on_teams<T: Dt>(cntx: &Cntx, case: &Case, seed: u64) {
    let one = Rntm::new().with_num_threads(1).unwrap();
    let expected = gemm_output::<T>(cntx, Some(&one), case, seed);
    for (jc, ic, jr) in [(1, 2, 1), (2, 1, 1), (1, 2, 2), (1, 3, 1)] {
        let ways = Ways {
            jc,
            pc: 1,
            ic,
            jr,
            ir: 1,
        };
        let rntm = Rntm::new().with_ways(ways).unwrap();
        let got = gemm_output::<T>(cntx, Some(&rntm), case, seed);
        assert!(
            same_bits(&got, &expected),
            "{}gemm with {ways:?} differs from one thread: {case:?}",
            T::LETTER
        );
    }
}

/// The loop nest at the default blocksizes (no sup path), with k long enough for whole 8×8
/// transpose blocks when packing row-stored A and column-stored B: every op(A) × op(B) ×
/// storage, k = 16 (whole blocks only: the last one ends the panel) and k = 19 (a remainder
/// after them), n leaving a partial last B panel. The shrunken blocks elsewhere (KC = 3) never
/// reach the transposes, nor the narrow panels (NR < 8) that go through a stack tile.
#[test]
fn packing_with_whole_transpose_blocks() {
    for (full, _) in contexts_with_tiny_blocks() {
        let nest = full.clone().with_sup_limits(no_sup_limits());
        for_each_dtype(&mut |run, letter| {
            let Blocksizes { mr, nr, .. } = blocksizes_of(&nest, letter);
            for k in [16, 19] {
                let cases = Case::every_op_and_storage(mr + 3, 2 * nr + 1, k);
                for (seed, case) in cases.enumerate() {
                    run(&nest, &case, 9000 + seed as u64);
                }
            }
        });
    }
}

/// `tiny` (shrunken blocks, no sup path) with every one-thread problem whose B is not
/// conjugated packing only A (`PackAOnly::Always`): the sup kernel reads packed A blocks and
/// B in place. Configurations without sup kernels keep the loop nest.
fn packing_only_a(tiny: &Cntx) -> Cntx {
    tiny.clone().with_sup_limits(SupLimits {
        pack_a_only: PackAOnly::Always,
        ..no_sup_limits()
    })
}

/// Packing only A on a team of two (`frame/l3/sup.rs`, `PACK_A_ONLY_MAX_THREADS`): each
/// thread packs A for its own MR-aligned block of rows and reads B in place, whatever ways
/// it was asked for (pc = 2 included), so the result is one thread's, bit for bit (uniform
/// data, so that a different summation would show), and right; three threads take the loop
/// nest and must still be right, as must conjugated operands (the loop nest too). Sizes either side of MR and of the (shrunken) MC, so that
/// a thread's rows end inside an MC block or a tile, with random op()s and storages.
fn packing_only_a_on_two_threads<T: Dt>(cntx: &Cntx, rng: &mut Rng) {
    let letter = T::LETTER;
    // Without a sup kernel (generic) the loop nest takes every problem.
    if cntx.kernel::<T, T>().sup().is_none() {
        return;
    }
    // The sup kernel's tiles, and MC rounded to them, as the path blocks.
    let (mr, nr) = sup_tile_of(cntx, letter);
    let Blocksizes { mc, kc, .. } = blocksizes_of(cntx, letter);
    let mc = (mc / mr).max(1) * mr;
    let single = Rntm::new().with_num_threads(1).unwrap();
    let way = |jc, pc, ic, jr| {
        Rntm::new()
            .with_ways(Ways {
                jc,
                pc,
                ic,
                jr,
                ir: 1,
            })
            .unwrap()
    };
    let teams = [
        way(1, 1, 2, 1),
        way(2, 1, 1, 1),
        way(1, 2, 1, 1),
        way(1, 1, 1, 2),
        Rntm::new().with_num_threads(2).unwrap(),
    ];
    let three = Rntm::new().with_num_threads(3).unwrap();
    let mut seed = 40_000;
    for m in [1, mr + 1, 2 * mr - 1, mc + mc / 3 + 1, 3 * mc + mr - 1] {
        for (n, k) in [(1, 2 * kc + 1), (nr + 1, kc + 1), (2 * nr + 3, 7)] {
            seed += 1;
            // Neither operand conjugated: a conjugated B (or A, when C's storage turns the
            // problem around) takes the loop nest, whose pc = 2 sums differently.
            let case = Case {
                values: Values::Uniform,
                op_a: [Op::N, Op::T][rng.below(2)],
                op_b: [Op::N, Op::T][rng.below(2)],
                ..Case::random(rng, m, n, k)
            };
            let expected = gemm_output::<T>(cntx, Some(&single), &case, seed);
            for rntm in &teams {
                let got = gemm_output::<T>(cntx, Some(rntm), &case, seed);
                assert!(
                    same_bits(&got, &expected),
                    "{letter}gemm {m}×{n}×{k} ({case:?}) with {rntm:?} differs from one thread \
                     packing only A"
                );
            }
            run_case::<T>(cntx, Some(&teams[0]), &case, seed);
            run_case::<T>(cntx, Some(&three), &case, seed);
            let conjugated = Case {
                op_a: Op::R,
                op_b: Op::C,
                ..case
            };
            run_case::<T>(cntx, Some(&teams[0]), &conjugated, seed);
        }
    }
}

#[test]
fn packing_only_a_on_two_threads_matches_one_thread() {
    for (_, tiny) in contexts_with_tiny_blocks() {
        let cntx = packing_only_a(&tiny);
        let mut rng = Rng::new(19);
        packing_only_a_on_two_threads::<f32>(&cntx, &mut rng);
        packing_only_a_on_two_threads::<f64>(&cntx, &mut rng);
        packing_only_a_on_two_threads::<c32>(&cntx, &mut rng);
        packing_only_a_on_two_threads::<c64>(&cntx, &mut rng);
    }
}

/// Sizes 0, 1 and either side of MR/NR/MC/NC/KC (and their multiples), with random op()s,
/// storages and scalar classes, on the packed path and with only A packed.
#[test]
fn sizes_around_every_blocksize() {
    for (_, tiny) in contexts_with_tiny_blocks() {
        for cntx in [&tiny, &packing_only_a(&tiny)] {
            for_each_dtype(&mut |run, letter| {
                let Blocksizes { mr, nr, .. } = blocksizes_of(&tiny, letter);
                let (mc, nc, kc) = (2 * mr, 2 * nr, 3);
                // The last row block and k slice take a remainder of up to a third of MC and KC
                // (mc + 1 and kc + 1 are one block); mc + mc/3 + 1 and kc + kc/3 + 1 are two.
                let ms = [
                    0,
                    1,
                    mr - 1,
                    mr,
                    mr + 1,
                    mc - 1,
                    mc,
                    mc + 1,
                    mc + mc / 3 + 1,
                    2 * mc + 1,
                ];
                let ns = [0, 1, nr - 1, nr, nr + 1, nc - 1, nc, nc + 1, 2 * nc + 1];
                let ks = [0, 1, kc - 1, kc, kc + 1, kc + kc / 3 + 1, 2 * kc + 1];
                let mut rng = Rng::new(7);
                let mut seed = 1000;
                for m in ms {
                    for n in ns {
                        for k in ks {
                            seed += 1;
                            run(cntx, &Case::random(&mut rng, m, n, k), seed);
                        }
                    }
                }
            });
        }
    }
}

/// Every alpha × beta class with every op(A) × op(B), in the default and the tiny blocking.
#[test]
fn every_alpha_beta_class() {
    for (full, tiny) in contexts_with_tiny_blocks() {
        for cntx in [&full, &tiny, &packing_only_a(&tiny)] {
            for_each_dtype(&mut |run, _| {
                let mut rng = Rng::new(11);
                let mut seed = 2000;
                for alpha in SCALAR_CLASSES {
                    for beta in SCALAR_CLASSES {
                        for op_a in Op::ALL {
                            for op_b in Op::ALL {
                                seed += 1;
                                let case = Case {
                                    alpha,
                                    beta,
                                    op_a,
                                    op_b,
                                    ..Case::random(&mut rng, 13, 11, 9)
                                };
                                run(cntx, &case, seed);
                            }
                        }
                    }
                }
            });
        }
    }
}

/// beta = 0 overwrites C without reading it: NaN in C must not survive (and must not leak
/// into the padding around C either).
#[test]
fn nan_in_c_is_overwritten_when_beta_is_zero() {
    for (full, tiny) in contexts_with_tiny_blocks() {
        for cntx in [&full, &tiny, &packing_only_a(&tiny)] {
            for_each_dtype(&mut |run, _| {
                let mut rng = Rng::new(13);
                for (seed, st_c) in Storage::ALL.into_iter().enumerate() {
                    for alpha in SCALAR_CLASSES {
                        for (m, n, k) in [(9, 7, 5), (1, 1, 1), (17, 3, 0), (400, 2, 1)] {
                            let case = Case {
                                st_c,
                                alpha,
                                beta: ScalarClass::Zero,
                                nan_in_c: true,
                                ..Case::random(&mut rng, m, n, k)
                            };
                            run(cntx, &case, 3000 + seed as u64);
                        }
                    }
                }
            });
        }
    }
}

/// alpha = 0 or k = 0: A and B are never read, so NaN in them cannot reach C; C := beta·C.
#[test]
fn nan_in_a_and_b_is_ignored_when_alpha_or_k_is_zero() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut rng = Rng::new(17);
            for beta in SCALAR_CLASSES {
                for (alpha, k) in [(ScalarClass::Zero, 6), (ScalarClass::Random, 0)] {
                    let case = Case {
                        alpha,
                        beta,
                        nan_in_ab: true,
                        ..Case::random(&mut rng, 10, 6, k)
                    };
                    run(&full, &case, 4000);
                }
            }
        });
    }
}

/// Real-valued random data at the default blocksizes, with sizes crossing KC and MC (and a
/// transposed op(A) past 1 MiB), judged by the rounding-error bound rather than exactly.
#[test]
fn uniform_data_at_default_blocksizes() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let bs = blocksizes_of(&full, letter);
            let mut rng = Rng::new(19);
            for (m, n, k) in [
                (bs.mc + 3, 21, bs.kc + 5),
                (37, 45, 2 * bs.kc + 1),
                (5, 3, 1000),
            ] {
                let case = Case {
                    values: Values::Uniform,
                    ..Case::random(&mut rng, m, n, k)
                };
                run(&full, &case, 5000);
            }
        });
        // op(A) = Aᵀ of more than 1 MiB in f32 and f64 on one thread: haswell and skx pack it
        // block by block (`SupLimits::a_by_blocks_min_copy_bytes`), at the real KC and MC.
        let one_thread = Rntm::new().with_num_threads(1).unwrap();
        let mut rng = Rng::new(23);
        let case = Case {
            values: Values::Uniform,
            op_a: Op::T,
            st_a: Storage::Col,
            ..Case::random(&mut rng, 64, 13, 4200)
        };
        run_case::<f32>(&full, Some(&one_thread), &case, 5001);
        run_case::<f64>(&full, Some(&one_thread), &case, 5002);
    }
}

/// Problems within a configuration's sup limits whose k it would split over a C larger than
/// `max_c_bytes_if_k_split`, which go to the packed-A path instead where B reads well in
/// place (column-stored A at the largest column stride the limits take): column-stored and
/// random storages and op()s, at the default blocksizes, on one thread (both paths are
/// one-thread paths).
#[test]
fn sup_sized_problems_with_split_k_over_a_large_c() {
    fn run<T: harness::Dt>(cntx: &Cntx) {
        let Some(limits) = cntx.kernel::<T, T>().sup().map(|s| s.limits()) else {
            return;
        };
        if limits.k_block_bytes == 0 || limits.max_c_bytes_if_k_split == usize::MAX {
            return;
        }
        let size = size_of::<T>();
        // The test matrices' column stride is m + 3.
        let m = limits.max_a_col_stride_bytes / size - 3;
        let k = 2 * limits.k_block_bytes / (m * size) + 9;
        let n = limits.max_c_bytes_if_k_split / (m * size) + 7;
        let one = Rntm::new().with_num_threads(1).unwrap();
        let mut rng = Rng::new(29);
        run_case::<T>(cntx, Some(&one), &Case::new(m, n, k), 7000);
        run_case::<T>(cntx, Some(&one), &Case::random(&mut rng, m, n, k), 7001);
    }
    for (full, _) in contexts_with_tiny_blocks() {
        run::<f32>(&full);
        run::<f64>(&full);
        run::<c32>(&full);
        run::<c64>(&full);
    }
}

/// A problem wider than the default NC (two jc iterations), kept cheap by small m and k.
#[test]
fn wider_than_nc_at_default_blocksizes() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, letter| {
            let nc = blocksizes_of(&full, letter).nc;
            let mut rng = Rng::new(23);
            run(&full, &Case::random(&mut rng, 5, nc + 3, 4), 6000);
        });
    }
}

/// The degenerate shapes (C with one column, C with one row, and both), which take the gemv
/// kernels: every op(A) × op(B) × storage of C, A and B, at lengths around the vector width
/// and the gemv kernels' blocks (8 or 4 columns in the axpy form, or one pass for a y of one
/// vector at most; 8 or 4 rows and two vectors a step in the dot form, or scalars for k under
/// half a vector: with and without remainders, and with streams a multiple of 4 KiB apart),
/// the outer products written column by column by the same kernels (k = 1), and every
/// alpha × beta class.
#[test]
fn one_column_and_one_row() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut seed = 8000;
            for (m, n, k) in [
                (37, 1, 9),
                (1, 37, 9),
                (1, 1, 70),
                (70, 1, 3),
                // k under half a vector: the dot form's rows as scalars (f32 k < 8, f64 k < 4).
                (3, 1, 7),
                (1, 3, 5),
                (1, 1, 2),
                // y of one to eight vectors (two on haswell), whole or a lane short, read and
                // written once (haswell f64 4 lanes, f32 8; skx 8 and 16), with k past and
                // short of four columns.
                (4, 1, 37),
                (8, 1, 37),
                (16, 1, 37),
                (15, 1, 6),
                (3, 1, 2),
                (29, 1, 9),
                (40, 1, 6),
                (64, 1, 37),
                (100, 1, 9),
                (127, 1, 3),
                (1, 70, 1),
                (5, 1, 1),
                (16, 1, 64),
                (1, 16, 64),
                (1, 9, 33),
                // Column-major A or B with ld = 1024: real streams 4 or 8 KiB apart, which
                // the real forms read 4 at a time instead of 8.
                (1021, 1, 9),
                (1, 9, 1021),
                // k = 1 with long columns of C: the outer product, column by column through
                // the gemv kernel (either way round, by C's storage), and one just short of it.
                (400, 3, 1),
                (3, 400, 1),
                (383, 2, 1),
            ] {
                for case in Case::every_op_and_storage(m, n, k) {
                    seed += 1;
                    run(&full, &case, seed);
                }
            }
            let mut rng = Rng::new(53);
            for alpha in SCALAR_CLASSES {
                for beta in SCALAR_CLASSES {
                    for (m, n, k) in [(33, 1, 41), (1, 33, 41), (400, 2, 1)] {
                        seed += 1;
                        let case = Case {
                            alpha,
                            beta,
                            values: Values::Uniform,
                            ..Case::random(&mut rng, m, n, k)
                        };
                        run(&full, &case, seed);
                    }
                }
            }
        });
    }
}

/// Short, wide C (2 to 4 rows, and 5 past the rule) whose op(B) has contiguous rows, with
/// op(B) of 512 KiB or more (363² f32, 257² f64, 1100×130) or its rows more than 2 KiB apart
/// (n = 700): the real dtypes solve it transposed through the gemv columns kernel, C's rows
/// through a buffer of 512 rows (`gemm::short_and_wide_streaming_b`,
/// `gemv::gemm_by_column_groups_buffered`), so n = 1100 takes three blocks. Every op(A), C
/// column-stored, row-stored or general, every alpha/beta class (NaN in C under beta = 0),
/// on each configuration as is, and on two threads.
#[test]
fn short_wide_problems_streaming_b() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let mut seed = 22_000usize;
        for m in [2, 3, 4, 5] {
            for (n, k) in [(363, 363), (257, 257), (1100, 130), (700, 7)] {
                for (op_b, st_b) in [(Op::T, Storage::Col), (Op::N, Storage::Row)] {
                    for op_a in Op::ALL {
                        seed += 1;
                        let case = Case {
                            op_a,
                            op_b,
                            st_b,
                            st_c: [Storage::Col, Storage::Row, Storage::Gen][seed % 3],
                            ..Case::new(m, n, k)
                        }
                        .with_classes_of(seed);
                        let case = Case {
                            nan_in_c: case.beta == ScalarClass::Zero,
                            ..case
                        };
                        let rntm = seed.is_multiple_of(5).then_some(&two);
                        run_case::<f32>(&full, rntm, &case, seed as u64);
                        run_case::<f64>(&full, rntm, &case, seed as u64);
                        run_case::<c64>(&full, rntm, &case, seed as u64);
                    }
                }
            }
        }
    }
}

/// C of 4·MR−1 to 8·MR+1 rows whose op(B) has contiguous rows 1024 elements apart (ld =
/// n + 3 of a column-stored Bᵀ, n + 2 of a row-stored B), rows that crowd one or a few L1
/// sets: past 384 KiB packed by the loop nest from four row tiles per thread by a rule of
/// `SupLimits::pack_b_rows` (haswell's up to 128 rows; skx's for rows 12 KiB apart or more;
/// and forced, from 0 bytes, rows of any stride and C of any height, on every
/// configuration), read in place below. Every dtype and op(A), C's three storages, every alpha/beta class
/// (NaN in C under beta = 0), one thread and two, against the reference.
#[test]
fn b_rows_in_few_l1_sets_packed_from_four_row_tiles() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let Some(forced) = with_pack_b_rows(
            &full,
            &[PackBRows {
                b_bytes_over: 0,
                min_row_stride_bytes: 0,
                only_in_few_l1_sets: true,
                min_m: 0,
                max_m: usize::MAX,
                min_row_tiles_per_thread: 4,
            }],
        ) else {
            continue;
        };
        let mut seed = 27_000usize;
        for cntx in [&full, &forced] {
            for_each_dtype(&mut |_, letter| {
                let mr = sup_tile_of(cntx, letter).0;
                for m in [4 * mr - 1, 4 * mr, 128, 129, 8 * mr + 1] {
                    for (op_b, n) in [((Op::T, Storage::Col), 1021), ((Op::N, Storage::Row), 1022)]
                    {
                        seed += 1;
                        let case = case_with_b((m, n, 130), op_b, seed);
                        let rntm = seed.is_multiple_of(3).then_some(&two);
                        run_case_of(letter, cntx, rntm, &case, seed as u64);
                    }
                }
            });
        }
    }
}

/// `full` with `rules` in place of its sup kernels' `SupLimits::pack_b_rows` (the f32
/// kernel's other limits for every dtype, as `with_sup_limits` sets them), or `None` where
/// the configuration has no sup kernels.
fn with_pack_b_rows(full: &Cntx, rules: &'static [PackBRows]) -> Option<Cntx> {
    let limits = sup_limits_of(full)?;
    Some(full.clone().with_sup_limits(SupLimits {
        pack_b_rows: rules,
        ..limits
    }))
}

/// An m×n×k case with B's op and storage `op_b` (the tests that use it pick op(B)'s
/// contiguous rows or columns), op(A), C's storage and the alpha/beta classes taken from
/// `seed`, and NaN in C under beta = 0.
fn case_with_b((m, n, k): (usize, usize, usize), (op_b, st_b): (Op, Storage), seed: usize) -> Case {
    let case = Case {
        op_a: Op::ALL[seed % Op::ALL.len()],
        op_b,
        st_b,
        st_c: [Storage::Col, Storage::Row, Storage::Gen][seed % 3],
        ..Case::new(m, n, k)
    }
    .with_classes_of(seed);
    Case {
        nan_in_c: case.beta == ScalarClass::Zero,
        ..case
    }
}

/// C of few rows (1–129) whose op(B) has contiguous rows spread over the L1's sets and is
/// past haswell's 4 MiB (a rule of `SupLimits::pack_b_rows`): packed by the loop nest there,
/// with B blocks of an A block's size and k sliced a quarter of KC deep, since every A
/// team's rows fit one block (`gemm::nest_blocks`), so n = 1030 takes several B blocks; read
/// in place by the sup kernels where no rule applies (skx: rows under 12 KiB apart). Every
/// op(A) in turn, C column-stored, row-stored or general, every alpha/beta class (NaN in C
/// under beta = 0), on each configuration as is, with the loop nest forced from 64 rows
/// (skx's rule for any rows, from 0 bytes and any stride), and on two threads.
#[test]
fn few_rows_with_a_large_b_of_contiguous_rows() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        let Some(forced) = with_pack_b_rows(
            &full,
            &[PackBRows {
                b_bytes_over: 0,
                min_row_stride_bytes: 0,
                only_in_few_l1_sets: false,
                min_m: 64,
                max_m: usize::MAX,
                min_row_tiles_per_thread: 0,
            }],
        ) else {
            continue;
        };
        let mut seed = 23_000usize;
        for cntx in [&full, &forced] {
            for m in [1, 5, 8, 64, 128, 129] {
                for op_b in [(Op::T, Storage::Col), (Op::N, Storage::Row)] {
                    seed += 1;
                    let case = case_with_b((m, 1030, 1030), op_b, seed);
                    let rntm = seed.is_multiple_of(3).then_some(&two);
                    run_case::<f32>(cntx, rntm, &case, seed as u64);
                    let case = Case { k: 520, ..case };
                    run_case::<f64>(cntx, rntm, &case, seed as u64);
                }
            }
        }
    }
}

/// Products a few k steps deep, which skx's short-k kernels compute with a strip of A in
/// registers (`frame/l3/short_k.rs`): k = 1…16 and 17 (past the kernels' reach; two-vector
/// strips to 8, one past it, and past 8 only op(B) with adjacent rows, at 8 only C wider
/// than a sup tile where they are not), C of one to
/// four vectors of rows and either side of them (skx f64 8 lanes, f32 16; C of half a vector
/// or less in 256-bit vectors), columns in steps of four and the one to three left over,
/// every op(), storage and (alpha, beta) class, NaN in C under beta = 0; each configuration as
/// is (the others, without the kernels, through their sup paths; packed-path contexts keep
/// these problems off it, as they do off the sup path). C has 37 to 40 columns (or rows): two
/// sup tiles or fewer stay with the sup kernel.
#[test]
fn short_k_problems() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut rng = Rng::new(57);
            let mut seed = 57_000;
            for k in 1..=17 {
                for m in [2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 47, 65] {
                    for n in [37, 38, 39, 40] {
                        seed += 1;
                        let case = Case::random(&mut rng, m, n, k).with_classes_and_nan_of(seed);
                        run(&full, &case, seed);
                    }
                }
            }
            // Every op() and storage, and shapes the other way round (C of few columns,
            // solved transposed where row-stored; at k = 8 either side of NR columns).
            for (m, n, k) in [
                (6, 40, 2),
                (70, 6, 3),
                (17, 33, 8),
                (9, 45, 13),
                (70, 7, 8),
                (70, 13, 8),
            ] {
                for case in Case::every_op_and_storage(m, n, k) {
                    seed += 1;
                    run(&full, &case.with_classes_and_nan_of(seed), seed);
                }
            }
            // C of many columns in blocks: 1100 rows make blocks of 14 (f64) or 29 (f32)
            // columns, 37 columns more than one (A's rows not adjacent: copied once); uniform
            // data.
            for (m, n, k) in [(1100, 37, 3), (37, 1100, 5), (300, 70, 8), (1100, 37, 16)] {
                for op_a in Op::ALL {
                    seed += 1;
                    let case = Case {
                        values: Values::Uniform,
                        op_a,
                        st_c: Storage::Col,
                        ..Case::random(&mut rng, m, n, k).with_classes_and_nan_of(seed)
                    };
                    run(&full, &case, seed);
                }
            }
        });
    }
}

/// Tall C of two to four columns at short k, which configurations with a columns kernel
/// send to it (`frame/l3/narrow.rs`): rows either side of two sup tiles and of the kernel's
/// steps, k = 1…17 (past the path's 16), columns 1…5, op(B) and B's storage at random;
/// every op() and storage in a second set (row-stored C and op(A) = Aᵀ go elsewhere); each
/// configuration as is, alpha/beta classes with NaN in C under beta = 0.
#[test]
fn narrow_problems() {
    for (full, _) in contexts_with_tiny_blocks() {
        for_each_dtype(&mut |run, _| {
            let mut rng = Rng::new(60);
            let mut seed = 60_000;
            for k in 1..=17 {
                for m in [33, 64, 65, 127, 129, 300] {
                    for n in 1..=5 {
                        seed += 1;
                        // A and C column-stored, op(A) = A: the path's; op(B) and B's
                        // storage at random.
                        let case = Case {
                            op_a: Op::N,
                            st_a: Storage::Col,
                            st_c: Storage::Col,
                            ..Case::random(&mut rng, m, n, k).with_classes_and_nan_of(seed)
                        };
                        run(&full, &case, seed);
                    }
                }
            }
            for (m, n, k) in [(70, 2, 3), (129, 4, 16), (200, 3, 8), (1100, 4, 5)] {
                for case in Case::every_op_and_storage(m, n, k) {
                    seed += 1;
                    run(&full, &case.with_classes_and_nan_of(seed), seed);
                }
            }
        });
    }
}

/// The same on two threads, each with its own columns of C.
#[test]
fn short_k_problems_on_two_threads() {
    let two = Rntm::new().with_num_threads(2).unwrap();
    for (full, _) in contexts_with_tiny_blocks() {
        for (seed, letter) in ['s', 'd', 'c', 'z'].into_iter().enumerate() {
            let mut rng = Rng::new(58);
            for (m, n, k) in [
                (64, 4001, 4),
                (4001, 64, 3),
                (1024, 1024, 2),
                (33, 9001, 8),
                (40, 3001, 14),
            ] {
                let case = Case::random(&mut rng, m, n, k).with_classes_and_nan_of(seed as u64);
                run_case_of(letter, &full, Some(&two), &case, seed as u64);
            }
        }
    }
}
