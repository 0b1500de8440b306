//! Threads. Every combination of ways up to 8 threads (jc, pc, ic, jr, ir each 1..4) gives
//! the single-thread result: bit for bit when k is not split (no summation is reordered),
//! within the rounding bound of the reference when it is. Concurrent application threads
//! with different `Rntm`s, calls from a rayon pool, and k-dominant shapes split over k.

mod harness;

use std::sync::atomic::{AtomicUsize, Ordering};

use harness::{
    Case, Dt, blocksizes_of, contexts_with_tiny_blocks, gemm_output, no_sup_limits, run_case,
    same_bits, sup_limits_of, sup_tile_of,
};
use oxblis::check::{Op, Rng, Storage, Values};
use oxblis::{Blocksizes, Cntx, MatMut, MatRef, Rntm, SupLimits, Ways, c32, c64, gemm_ex};

fn all_ways_up_to_8() -> Vec<Ways> {
    let mut all = Vec::new();
    for jc in 1..=4 {
        for pc in 1..=4 {
            for ic in 1..=4 {
                for jr in 1..=4 {
                    for ir in 1..=4 {
                        let w = Ways { jc, pc, ic, jr, ir };
                        if w.total() <= 8 {
                            all.push(w);
                        }
                    }
                }
            }
        }
    }
    all
}

fn ways_match_one_thread<T: Dt>(cntx: &Cntx) {
    let mut rng = Rng::new(31);
    let single = Rntm::new().with_num_threads(1).unwrap();
    for (seed, ways) in all_ways_up_to_8().into_iter().enumerate() {
        let seed = seed as u64;
        let rntm = Rntm::new().with_ways(ways).unwrap();
        // Sizes that give every loop several blocks, with edges, under the tiny blocksizes.
        let case = Case {
            values: Values::Uniform,
            ..Case::random(&mut rng, 45, 27, 14)
        };
        let expected = gemm_output::<T>(cntx, Some(&single), &case, seed);
        if ways.pc == 1 {
            let got = gemm_output::<T>(cntx, Some(&rntm), &case, seed);
            assert!(
                same_bits(&got, &expected),
                "{}gemm with {ways:?} differs from one thread: {case:?}",
                T::LETTER
            );
        } else {
            run_case::<T>(cntx, Some(&rntm), &case, seed);
        }
    }
}

#[test]
fn every_ways_combination_matches_one_thread() {
    for (_, tiny) in contexts_with_tiny_blocks() {
        ways_match_one_thread::<f32>(&tiny);
        ways_match_one_thread::<f64>(&tiny);
        ways_match_one_thread::<c32>(&tiny);
        ways_match_one_thread::<c64>(&tiny);
    }
}

/// Automatic totals (and chosen ways) on problems small enough for the sup path and on outer
/// products, where each thread takes its own block of C (`frame/l3/blocks.rs`): bit for bit
/// the single-thread result, on every configuration, for every op() and storage the random
/// cases draw (copies of A included), with more threads than column panels at the edges.
fn automatic_totals_match_one_thread<T: Dt>(cntx: &Cntx, rng: &mut Rng) {
    let single = Rntm::new().with_num_threads(1).unwrap();
    // Each has at least 2^19 multiply-adds, so two threads or more are planned, and k fits
    // one KC block, so a case that leaves the sup path (conjugated B) is not split over k.
    let shapes = [
        (64, 64, 128),
        (16, 256, 256),
        (100, 70, 81),
        (40, 70, 250),
        (130, 30, 140),
        (512, 1024, 1),
        (1000, 600, 1),
        (385, 1400, 1),
    ];
    for (i, &(m, n, k)) in shapes.iter().enumerate() {
        let case = Case {
            values: Values::Uniform,
            ..Case::random(rng, m, n, k)
        };
        let expected = gemm_output::<T>(cntx, Some(&single), &case, i as u64);
        // Chosen ways without a k split: rows and columns both split, as the caller said.
        let chosen = Rntm::new()
            .with_ways(Ways {
                jc: 1,
                pc: 1,
                ic: 2,
                jr: 2,
                ir: 1,
            })
            .unwrap();
        let totals = (2..=5).map(|t| Rntm::new().with_num_threads(t).unwrap());
        for rntm in totals.chain([chosen]) {
            let threads = rntm.threading();
            let got = gemm_output::<T>(cntx, Some(&rntm), &case, i as u64);
            assert!(
                same_bits(&got, &expected),
                "{}: {}gemm on {threads:?} differs from one thread: {case:?}",
                cntx.name(),
                T::LETTER
            );
        }
        run_case::<T>(
            cntx,
            Some(&Rntm::new().with_num_threads(2).unwrap()),
            &case,
            i as u64,
        );
    }
}

#[test]
fn automatic_totals_on_the_sup_and_column_paths_match_one_thread() {
    let mut rng = Rng::new(47);
    for (full, _) in contexts_with_tiny_blocks() {
        automatic_totals_match_one_thread::<f32>(&full, &mut rng);
        automatic_totals_match_one_thread::<f64>(&full, &mut rng);
        automatic_totals_match_one_thread::<c32>(&full, &mut rng);
        automatic_totals_match_one_thread::<c64>(&full, &mut rng);
    }
}

/// The sup path with k split by A's size (here every 32 KiB of A: 61 rows of f32 take k
/// blocks of 134, a team's 30 or 31 rows read alone would take 264): every jc/ic/jr/ir team
/// computes the k blocks one thread computes, bit for bit. With `a_transposed`, op(A) = Aᵀ
/// of a column-stored A, which the kernel cannot read in place: copied whole by the team, and
/// by one thread as well or packed block by block (`SupLimits::a_by_blocks_min_copy_bytes`).
fn sup_k_blocks_match_one_thread<T: Dt>(cntx: &Cntx, rng: &mut Rng, a_transposed: bool) {
    let single = Rntm::new().with_num_threads(1).unwrap();
    // (jc, ic, jr, ir)
    for (seed, ways) in [(1, 2, 1, 1), (1, 3, 2, 1), (2, 1, 1, 2)]
        .into_iter()
        .enumerate()
    {
        let (jc, ic, jr, ir) = ways;
        let ways = Ways {
            jc,
            pc: 1,
            ic,
            jr,
            ir,
        };
        let rntm = Rntm::new().with_ways(ways).unwrap();
        let case = split_k_case(rng, 29, a_transposed);
        let seed = 700 + seed as u64;
        let expected = gemm_output::<T>(cntx, Some(&single), &case, seed);
        let got = gemm_output::<T>(cntx, Some(&rntm), &case, seed);
        assert!(
            same_bits(&got, &expected),
            "{}gemm with {ways:?} differs from one thread on the sup path with k split: {case:?}",
            T::LETTER
        );
    }
}

#[test]
fn sup_path_k_blocks_do_not_depend_on_the_team() {
    let mut rng = Rng::new(59);
    for (full, _) in contexts_with_tiny_blocks() {
        let Some(limits) = sup_limits_of(&full) else {
            continue;
        };
        let split = full.with_sup_limits(SupLimits {
            k_block_bytes: 32 << 10,
            ..limits
        });
        // One thread packs op(A) block by block wherever the kernel cannot read it in place.
        let by_blocks = split.clone().with_sup_limits(SupLimits {
            k_block_bytes: 32 << 10,
            a_by_blocks_min_copy_bytes: 0,
            ..limits
        });
        // C in column blocks of one panel each (the team's blocks of C are wider).
        let by_columns = split.clone().with_sup_limits(SupLimits {
            k_block_bytes: 32 << 10,
            c_block_bytes_if_k_split: 1,
            ..limits
        });
        for (cntx, a_transposed) in [
            (&split, false),
            (&split, true),
            (&by_blocks, true),
            (&by_columns, false),
        ] {
            sup_k_blocks_match_one_thread::<f32>(cntx, &mut rng, a_transposed);
            sup_k_blocks_match_one_thread::<f64>(cntx, &mut rng, a_transposed);
            sup_k_blocks_match_one_thread::<c32>(cntx, &mut rng, a_transposed);
            sup_k_blocks_match_one_thread::<c64>(cntx, &mut rng, a_transposed);
        }
    }
}

/// A 61×`n`×1200 case with random op()s and storages for the sup path with k split by A's
/// size (k blocks of 134 at 32 KiB slices of f32), of uniform values, whose sums round
/// (small integers would sum exactly in any order); with `a_transposed`, op(A) = Aᵀ of a
/// column-stored A, which the kernel cannot read in place.
fn split_k_case(rng: &mut Rng, n: usize, a_transposed: bool) -> Case {
    let mut case = Case {
        values: Values::Uniform,
        ..Case::random(rng, 61, n, 1200)
    };
    if a_transposed {
        (case.op_a, case.st_a) = (Op::T, Storage::Col);
    }
    case
}

/// The sup path's column blocks (`SupLimits::c_block_bytes_if_k_split`) only reorder whole
/// tiles: one thread with C in blocks of one panel computes what it computes with all
/// columns at once, bit for bit, with k split by A's size ([`split_k_case`]), A read in
/// place or copied (Aᵀ), for C of 1, 2 and 5 panels and a partial one.
fn column_blocks_keep_the_bits<T: Dt>(whole: &Cntx, by_columns: &Cntx, rng: &mut Rng) {
    let single = Rntm::new().with_num_threads(1).unwrap();
    let nr = sup_tile_of(whole, T::LETTER).1;
    for (seed, n) in [nr, 2 * nr, 5 * nr + 1].into_iter().enumerate() {
        for a_transposed in [false, true] {
            let case = split_k_case(rng, n, a_transposed);
            let seed = 800 + seed as u64;
            let expected = gemm_output::<T>(whole, Some(&single), &case, seed);
            let got = gemm_output::<T>(by_columns, Some(&single), &case, seed);
            assert!(
                same_bits(&got, &expected),
                "{}gemm in column blocks differs from all columns at once: {case:?}",
                T::LETTER
            );
        }
    }
}

#[test]
fn sup_column_blocks_do_not_change_the_bits() {
    let mut rng = Rng::new(67);
    for (full, _) in contexts_with_tiny_blocks() {
        let Some(limits) = sup_limits_of(&full) else {
            continue;
        };
        let split = |c_block_bytes_if_k_split| {
            full.clone().with_sup_limits(SupLimits {
                k_block_bytes: 32 << 10,
                c_block_bytes_if_k_split,
                ..limits
            })
        };
        let (whole, by_columns) = (split(usize::MAX), split(1));
        column_blocks_keep_the_bits::<f32>(&whole, &by_columns, &mut rng);
        column_blocks_keep_the_bits::<f64>(&whole, &by_columns, &mut rng);
        column_blocks_keep_the_bits::<c32>(&whole, &by_columns, &mut rng);
        column_blocks_keep_the_bits::<c64>(&whole, &by_columns, &mut rng);
    }
}

/// One A block, k past KC, several column blocks. Where op(B)'s rows are contiguous the loop
/// nest slices k more shallowly than KC (`gemm::nest_blocks`), and one thread, whose NC
/// differs, takes its k slices outside its column blocks (`gemm::slices_outer`); with
/// op(B)'s columns contiguous, one thread does that for a block at least half of MC tall.
/// Every jc/ic/jr/ir team must compute one thread's result bit for bit, which is checked
/// against the reference. Blocks for several B blocks and k slices (KC 400: shallow slices
/// of 100, else 400 + 400 + 150; one thread's NC is MC·4 or MC, rounded up to NR, a team's
/// 20·NR).
fn one_a_block_matches_one_thread<T: Dt>(full: &Cntx, rng: &mut Rng) {
    let Blocksizes { mr, nr, .. } = blocksizes_of(full, T::LETTER);
    let cntx = full
        .clone()
        .with_sup_limits(no_sup_limits())
        .with_blocksizes::<T, T>(400, 2 * mr, 20 * nr)
        .unwrap();
    let single = Rntm::new().with_num_threads(1).unwrap();
    for (seed, ways) in all_ways_up_to_8().into_iter().enumerate() {
        if ways.pc != 1 || seed % 3 != 0 {
            continue;
        }
        let rntm = Rntm::new().with_ways(ways).unwrap();
        let b_storage = [
            (Op::T, Storage::Col),
            (Op::N, Storage::Row),
            (Op::N, Storage::Col),
        ];
        let (op_b, st_b) = b_storage[seed / 3 % 3];
        let seed = 900 + seed as u64;
        let mut case = Case {
            values: Values::Uniform,
            ..Case::random(rng, 2 * mr - 1, 30 * nr + 1, 950)
        };
        (case.op_b, case.st_b) = (op_b, st_b);
        run_case::<T>(&cntx, Some(&single), &case, seed);
        let expected = gemm_output::<T>(&cntx, Some(&single), &case, seed);
        let got = gemm_output::<T>(&cntx, Some(&rntm), &case, seed);
        assert!(
            same_bits(&got, &expected),
            "{}gemm with {ways:?} differs from one thread with one A block: {case:?}",
            T::LETTER
        );
    }
}

#[test]
fn one_a_block_nests_do_not_depend_on_the_team() {
    let mut rng = Rng::new(61);
    for (full, _) in contexts_with_tiny_blocks() {
        one_a_block_matches_one_thread::<f32>(&full, &mut rng);
        one_a_block_matches_one_thread::<f64>(&full, &mut rng);
        one_a_block_matches_one_thread::<c32>(&full, &mut rng);
        one_a_block_matches_one_thread::<c64>(&full, &mut rng);
    }
}

/// Edge shapes with many threads: more threads than tiles, k smaller than the k groups.
#[test]
fn more_threads_than_work() {
    for (_, tiny) in contexts_with_tiny_blocks() {
        let ways = Ways {
            jc: 2,
            pc: 4,
            ic: 2,
            jr: 1,
            ir: 1,
        };
        let rntm = Rntm::new().with_ways(ways).unwrap();
        let mut rng = Rng::new(37);
        for (m, n, k) in [
            (1, 1, 1),
            (3, 2, 2),
            (1, 40, 3),
            (40, 1, 100),
            (0, 5, 5),
            (5, 5, 0),
        ] {
            run_case::<f64>(&tiny, Some(&rntm), &Case::random(&mut rng, m, n, k), 7);
            run_case::<c32>(&tiny, Some(&rntm), &Case::random(&mut rng, m, n, k), 7);
        }
    }
}

/// The shape BLIS cannot parallelize: tiny C, long k (78 KC blocks; the benchmark uses
/// k = 100 000, the reference here would take too long). Split over k (explicitly and by the
/// automatic plan), the result must stay within the rounding bound.
#[test]
fn k_dominant_shapes_split_over_k() {
    for (full, _) in contexts_with_tiny_blocks() {
        let mut rng = Rng::new(41);
        let case = Case {
            values: Values::Uniform,
            ..Case::random(&mut rng, 64, 64, 20_000)
        };
        let pc2 = Rntm::new()
            .with_ways(Ways {
                jc: 1,
                pc: 2,
                ic: 1,
                jr: 1,
                ir: 1,
            })
            .unwrap();
        run_case::<f64>(&full, Some(&pc2), &case, 1);
        let auto8 = Rntm::new().with_num_threads(8).unwrap();
        run_case::<f32>(
            &full,
            Some(&auto8),
            &Case {
                m: 16,
                n: 16,
                ..case
            },
            2,
        );
    }
}

/// Application threads calling at once, each with its own Rntm (different ways, totals,
/// pinning, defaults), hundreds of calls each, every result checked against the
/// single-thread result computed up front.
#[test]
fn concurrent_callers_with_different_rntms() {
    // Default blocksizes: with the tiny ones every call is hundreds of barriers, and eight
    // callers on a 2-core machine spend the run parking and waking.
    let cntx = contexts_with_tiny_blocks().remove(0).0;
    let ways = |jc, pc, ic, jr, ir| Rntm::new().with_ways(Ways { jc, pc, ic, jr, ir }).unwrap();
    let rntms = [
        None,
        Some(Rntm::new().with_num_threads(1).unwrap()),
        Some(Rntm::new().with_num_threads(2).unwrap()),
        Some(Rntm::new().with_num_threads(3).unwrap().with_pinning(true)),
        Some(ways(1, 1, 2, 2, 1)),
        Some(ways(2, 1, 1, 1, 2)),
        Some(ways(1, 1, 3, 1, 1)),
        Some(ways(1, 1, 1, 4, 1).with_pinning(true)),
    ];
    let single = Rntm::new().with_num_threads(1).unwrap();
    let mut rng = Rng::new(43);
    let cases: Vec<Case> = (0..6)
        .map(|i| Case {
            values: Values::Uniform,
            ..Case::random(&mut rng, 60 + 37 * i, 140 - 19 * i, 90 + 25 * i)
        })
        .collect();
    let expected: Vec<Vec<f64>> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| gemm_output::<f64>(&cntx, Some(&single), case, i as u64))
        .collect();
    let checked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (t, rntm) in rntms.iter().enumerate() {
            let (cases, expected, checked, cntx) = (&cases, &expected, &checked, &cntx);
            s.spawn(move || {
                for call in 0..150 {
                    let i = (t + call) % cases.len();
                    let got = gemm_output::<f64>(cntx, rntm.as_ref(), &cases[i], i as u64);
                    assert!(
                        same_bits(&got, &expected[i]),
                        "caller {t} call {call} with {rntm:?}: wrong result"
                    );
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(checked.into_inner(), 8 * 150);
}

/// Calls from inside a rayon pool, on the global defaults: no deadlock, right answers (the
/// shared default budget keeps them from multiplying threads).
#[test]
fn calls_from_a_rayon_pool() {
    use rayon::prelude::*;
    let n = 96;
    let a: Vec<f64> = (0..n * n).map(|x| (x % 7) as f64).collect();
    let b: Vec<f64> = (0..n * n).map(|x| (x % 5) as f64).collect();
    let av = MatRef::col_major(&a, n, n, n).unwrap();
    let bv = MatRef::col_major(&b, n, n, n).unwrap();
    let mut want = vec![0.0; n * n];
    let one = Rntm::new().with_num_threads(1).unwrap();
    gemm_ex(
        &av,
        &bv,
        &mut MatMut::col_major(&mut want, n, n, n).unwrap(),
        Some(&one),
    )
    .unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let results: Vec<Vec<f64>> = pool.install(|| {
        (0..64)
            .into_par_iter()
            .map(|_| {
                let mut c = vec![f64::NAN; n * n];
                gemm_ex(
                    &av,
                    &bv,
                    &mut MatMut::col_major(&mut c, n, n, n).unwrap(),
                    None,
                )
                .unwrap();
                c
            })
            .collect()
    });
    assert!(results.iter().all(|c| *c == want));
}
