//! The tall-A path (`frame/l3/tall.rs`): C with at most NT columns and A column-stored, read
//! in place k block by k block. At its real threshold A is 4 MiB or more, so these tests
//! lower it to zero (and turn the sup path off) to reach every edge cheaply: row tiles
//! either side of MR (the masked bottom tile), columns either side of NT (NT + 1 must leave
//! the path), k either side of the k block and several blocks (beta applies only to the
//! first), C and A with leading dimensions larger than m, every C storage, beta = 0 with NaN
//! in C, teams of threads (bit for bit one thread's result), one problem at the real
//! threshold, and a packed B too large for memory (an error, C untouched).
//!
//! cgemm and zgemm take the same path through the real parts' kernel
//! (`frame/l3/tall_complex.rs`: A as a real 2m×k matrix, C of n columns computed as 2n real
//! ones), so their tests run on the f32 and f64 tall kernels' contexts, with every op() of A
//! and B, and sizes around the real tile seen in complex rows and columns; where that path
//! stops (its widest C) is checked through C's bits against the packed path's.

mod harness;

use harness::{
    Case, Dt, SCALAR_CLASSES, ScalarClass, bits_equal, gemm_output, no_sup_limits, run_case,
    run_case_of,
};
use oxblis::check::{Op, Rng, Storage, Values};
use oxblis::{Cntx, Rntm, TallLimits, Ways, c32, c64};

/// Each supported context with a tall kernel for `letter`, made to take the tall path for
/// every size it suits, with its tile (MR, widest C) and k block: twice, once reading A in
/// the kernel's KC blocks (widest C: NT) and once as from memory
/// (`TallLimits::from_memory_kc`, here 3 columns so that k splits often; widest C: 2·NT).
/// For 'c' and 'z', the f32 and f64 kernels' contexts, with the tile in complex rows and
/// columns: half the real ones, and from memory half of NT + NT/3, the widest real C that
/// `frame/l3/tall_complex.rs` takes.
fn tall_contexts(letter: char) -> Vec<(Cntx, (usize, usize), usize)> {
    let no_sup = no_sup_limits();
    let in_cache = TallLimits {
        min_a_bytes: 0,
        max_a_bytes: usize::MAX,
        from_memory_kc: 0,
    };
    let from_memory = TallLimits {
        max_a_bytes: 0,
        from_memory_kc: FROM_MEMORY_KC,
        ..in_cache
    };
    let mut contexts = Vec::new();
    for cntx in oxblis::supported_contexts() {
        let tall = match letter {
            's' | 'c' => cntx.kernel::<f32, f32>().tall().map(|t| (t.tile(), t.kc())),
            _ => cntx.kernel::<f64, f64>().tall().map(|t| (t.tile(), t.kc())),
        };
        let Some(((mr, nt), kc)) = tall else {
            continue;
        };
        let complex = matches!(letter, 'c' | 'z');
        let (tile, tile_from_memory) = match complex {
            true => ((mr / 2, nt / 2), (mr / 2, (nt + nt / 3) / 2)),
            false => ((mr, nt), (mr, 2 * nt)),
        };
        eprintln!("testing the tall path of {} ({letter})", cntx.name());
        let with = |limits| {
            cntx.clone()
                .with_sup_limits(no_sup)
                .with_tall_limits(limits)
        };
        contexts.push((with(in_cache), tile, kc));
        contexts.push((with(from_memory), tile_from_memory, FROM_MEMORY_KC));
    }
    contexts
}

/// The from-memory k block the tests use.
const FROM_MEMORY_KC: usize = 3;

/// Runs `case` on one thread.
fn run(letter: char, cntx: &Cntx, case: &Case, seed: u64) {
    let one = Rntm::new().with_num_threads(1).unwrap();
    run_case_of(letter, cntx, Some(&one), case, seed);
}

/// The op()s of A that keep it column-stored with its storage (`Storage::Col` for N and R,
/// `Storage::Row` for T and C), and all four of B's, cycled by `seed`.
fn complex_ops(seed: usize) -> (Op, Storage, Op) {
    let (op_a, st_a) = [
        (Op::N, Storage::Col),
        (Op::R, Storage::Col),
        (Op::T, Storage::Row),
        (Op::C, Storage::Row),
    ][seed % 4];
    (op_a, st_a, [Op::N, Op::T, Op::C, Op::R][seed / 4 % 4])
}

/// cgemm and zgemm around the real tile (in complex rows: half of MR, and columns: half the
/// widest real C, one more leaving the path) and the k block, with every op() of A that
/// keeps it column-stored (conj(A) is conj(A·conj(B)) there) and of B, every alpha/beta
/// class.
#[test]
fn complex_sizes_around_the_real_tile() {
    for letter in ['c', 'z'] {
        for (cntx, (mr, nt), kc) in tall_contexts(letter) {
            let mut seed = 0;
            for m in [1, mr - 1, mr, mr + 1, 5 * mr + 3] {
                for n in [1, 2, 3, nt / 2 + 1, nt - 1, nt, nt + 1] {
                    for k in [1, kc - 1, kc, kc + 1, 2 * kc + 5] {
                        seed += 1;
                        let (op_a, st_a, op_b) = complex_ops(seed);
                        let case = Case {
                            op_a,
                            st_a,
                            op_b,
                            ..Case::new(m, n, k).with_classes_of(seed)
                        };
                        run(letter, &cntx, &case, seed as u64);
                    }
                }
            }
        }
    }
}

/// Where the complex path stops shows in C's bits: it sums each complex product as real
/// ones and combines them, the packed path in a complex kernel, so on random data some last
/// bits differ. The widest complex C the path takes (half of NT real columns in cache, half
/// of NT + NT/3 from memory: `MOST_SECOND_GROUP_FRACTION` in `frame/l3/tall_complex.rs`)
/// must come out unlike the packed path's result, one column more exactly like it. Not in a
/// sandbox build (`sandbox/`), which has no tall path.
#[test]
fn complex_path_stops_at_its_widest_c() {
    fn check<T: Dt>(cntx: &Cntx, mr: usize, widest: usize) {
        let no_tall = cntx.clone().with_tall_limits(TallLimits {
            min_a_bytes: usize::MAX,
            max_a_bytes: usize::MAX,
            from_memory_kc: 0,
        });
        let one = Rntm::new().with_num_threads(1).unwrap();
        for (n, takes_path) in [(widest, true), (widest + 1, false)] {
            let case = Case {
                values: Values::Uniform,
                ..Case::new(3 * mr + 1, n, 40)
            };
            let ours = gemm_output::<T>(cntx, Some(&one), &case, 77);
            let packed = gemm_output::<T>(&no_tall, Some(&one), &case, 77);
            let same = ours.iter().zip(&packed).all(|(x, y)| bits_equal(*x, *y));
            assert_eq!(
                !same,
                takes_path,
                "{}gemm {case:?} in {}: the tall path {} taken",
                T::LETTER,
                cntx.name(),
                if same { "was not" } else { "was" }
            );
        }
    }
    // A sandbox build routes every call through its own gemm, with no tall path to find.
    if oxblis::runtime_report().sandbox.is_some() {
        return;
    }
    for letter in ['c', 'z'] {
        for (cntx, (mr, widest), _) in tall_contexts(letter) {
            match letter {
                'c' => check::<c32>(&cntx, mr, widest),
                _ => check::<c64>(&cntx, mr, widest),
            }
        }
    }
}

/// cgemm and zgemm: every storage of C, A and B with every op(), and beta = 0 over NaN in
/// C (written, not read), over more than one k block.
#[test]
fn complex_every_storage_and_nan_in_c() {
    for letter in ['c', 'z'] {
        for (cntx, (mr, nt), kc) in tall_contexts(letter) {
            let mut seed = 1000;
            for st_c in Storage::ALL {
                for st_a in Storage::ALL {
                    for st_b in Storage::ALL {
                        seed += 1;
                        let (op_a, _, op_b) = complex_ops(seed);
                        let case = Case {
                            st_c,
                            st_a,
                            st_b,
                            op_a,
                            op_b,
                            ..Case::new(3 * mr + 1, [3, nt - 1][seed % 2], kc + 7)
                        };
                        run(letter, &cntx, &case, seed as u64);
                    }
                }
            }
            for (i, k) in [1, kc, 3 * kc + 2].into_iter().enumerate() {
                let (op_a, st_a, op_b) = complex_ops(i * 5);
                let case = Case {
                    beta: ScalarClass::Zero,
                    nan_in_c: true,
                    op_a,
                    st_a,
                    op_b,
                    ..Case::new(4 * mr - 1, nt, k)
                };
                run(letter, &cntx, &case, 1200 + i as u64);
            }
        }
    }
}

/// Sizes around the tile, each packed width of B (2, 4, 8, 16: `tall_packed_width`) and the
/// k block, A and C column-stored (the path's case), every alpha/beta class.
#[test]
fn sizes_around_the_tile_and_the_k_block() {
    for letter in ['s', 'd'] {
        for (cntx, (mr, nt), kc) in tall_contexts(letter) {
            let mut rng = Rng::new(11);
            let mut seed = 0;
            for m in [1, mr - 1, mr, mr + 1, 5 * mr + 3] {
                // nt / 2 and one more: where the from-memory path's second group of columns
                // starts.
                for n in [
                    1,
                    2,
                    3,
                    4,
                    5,
                    8,
                    9,
                    16,
                    17,
                    nt / 2,
                    nt / 2 + 1,
                    nt - 1,
                    nt,
                    nt + 1,
                ] {
                    for k in [1, kc - 1, kc, kc + 1, 2 * kc + 5] {
                        seed += 1;
                        let case = Case {
                            alpha: SCALAR_CLASSES[rng.below(4)],
                            beta: SCALAR_CLASSES[rng.below(4)],
                            ..Case::new(m, n, k)
                        };
                        run(letter, &cntx, &case, seed);
                    }
                }
            }
        }
    }
}

/// Every storage of C (row-major C turns the problem around; general strides go element by
/// element), and of A and B (only column-stored A takes the path, the rest must still be
/// right), over more than one k block.
#[test]
fn every_storage() {
    for letter in ['s', 'd'] {
        for (cntx, (mr, nt), kc) in tall_contexts(letter) {
            let mut seed = 100;
            for st_c in Storage::ALL {
                for st_a in Storage::ALL {
                    for st_b in Storage::ALL {
                        // A narrow and a wide packed B.
                        for n in [3, nt - 3] {
                            seed += 1;
                            let case = Case {
                                st_c,
                                st_a,
                                st_b,
                                ..Case::new(3 * mr + 1, n, kc + 7)
                            };
                            run(letter, &cntx, &case, seed);
                        }
                    }
                }
            }
        }
    }
}

/// beta = 0: C is overwritten, NaN included, on the first k block; later blocks add to it.
#[test]
fn nan_in_c_is_overwritten_when_beta_is_zero() {
    for letter in ['s', 'd'] {
        for (cntx, (mr, nt), kc) in tall_contexts(letter) {
            for (seed, k) in [1, kc, 3 * kc + 2].into_iter().enumerate() {
                let case = Case {
                    beta: ScalarClass::Zero,
                    nan_in_c: true,
                    ..Case::new(4 * mr - 1, nt, k)
                };
                run(letter, &cntx, &case, 200 + seed as u64);
            }
        }
    }
}

/// From memory, C taller than one pass of running sums (4096 rows): each pass starts its
/// sums afresh and writes its own rows, with beta = 0 over NaN too.
#[test]
fn from_memory_in_more_than_one_pass_of_rows() {
    for letter in ['s', 'd'] {
        // The from-memory contexts: their k block is the tests' own.
        let contexts = tall_contexts(letter).into_iter();
        for (cntx, (mr, nt), kc) in contexts.filter(|&(_, _, kc)| kc == FROM_MEMORY_KC) {
            for (seed, (n, beta)) in [(3, ScalarClass::Random), (nt, ScalarClass::Zero)]
                .into_iter()
                .enumerate()
            {
                let case = Case {
                    beta,
                    nan_in_c: beta == ScalarClass::Zero,
                    ..Case::new(4096 + mr + 1, n, 2 * kc + 1)
                };
                run(letter, &cntx, &case, 700 + seed as u64);
            }
        }
    }
}

/// Past the configuration's own `max_a_bytes`, where it reads A from memory by narrow k
/// blocks (haswell and skx): one more column of A than the maximum, C of 2·NT − 1 columns
/// (two groups), uniform data, one thread. Then zgemm the same way through the f64 kernel:
/// A's 2m real rows past one pass of running sums, C of the most columns it takes (NT + NT/3
/// real ones, two groups), conj(B).
#[test]
fn from_memory_at_the_real_threshold() {
    for cntx in oxblis::supported_contexts() {
        let Some(tall) = cntx.kernel::<f64, f64>().tall() else {
            continue;
        };
        let limits = tall.limits();
        if limits.from_memory_kc == 0 {
            continue;
        }
        let (mr, nt) = tall.tile();
        let m = 4096 + mr - 1;
        // The smallest k with m·k·8 past the maximum.
        let k = limits.max_a_bytes / (8 * m) + 1;
        let case = Case {
            values: Values::Uniform,
            ..Case::new(m, 2 * nt - 1, k)
        };
        run('d', cntx, &case, 310);
        let m = 2048 + mr / 2 - 1;
        let k = limits.max_a_bytes / (16 * m) + 1;
        let case = Case {
            values: Values::Uniform,
            op_b: Op::C,
            ..Case::new(m, (nt + nt / 3) / 2, k)
        };
        run('z', cntx, &case, 311);
    }
}

/// At the configuration's own threshold (no lowered limits): A of 4 MiB and more, uniform
/// data, checked within the rounding bound.
#[test]
fn at_the_real_threshold() {
    for cntx in oxblis::supported_contexts() {
        let Some(tall) = cntx.kernel::<f64, f64>().tall() else {
            continue;
        };
        let min = tall.limits().min_a_bytes;
        let (mr, nt) = tall.tile();
        let k = 2 * tall.kc() + 1;
        // f64: the smallest m with m·k·8 ≥ min, and one more tile.
        let m = (min / (8 * k) + 1).next_multiple_of(mr) + 3;
        let case = Case {
            values: Values::Uniform,
            ..Case::new(m, nt, k)
        };
        run('d', cntx, &case, 300);
        let s = cntx
            .kernel::<f32, f32>()
            .tall()
            .map(|t| t.tile())
            .unwrap_or((mr, nt));
        run(
            's',
            cntx,
            &Case {
                values: Values::Uniform,
                ..Case::new(m + s.0, s.1, k)
            },
            301,
        );
    }
}

/// Teams, explicit ways (rows, columns, k: all become row blocks) and automatic totals: right
/// (against the reference) and bit for bit what one thread computes, with more threads than
/// row tiles at the edges.
fn teams_match_one_thread<T: Dt>(cntx: &Cntx, (mr, nt): (usize, usize), kc: usize) {
    let single = Rntm::new().with_num_threads(1).unwrap();
    let way = |jc, pc, ic, jr, ir| Rntm::new().with_ways(Ways { jc, pc, ic, jr, ir }).unwrap();
    let teams = [
        way(1, 1, 2, 1, 1),
        way(1, 1, 3, 1, 1),
        way(2, 1, 1, 1, 2),
        way(1, 2, 2, 1, 1),
        way(1, 1, 1, 4, 2),
        Rntm::new().with_num_threads(2).unwrap(),
        Rntm::new().with_num_threads(5).unwrap(),
    ];
    let mut seed = 500;
    for (m, n, k) in [
        (7 * mr + 3, 3, 2 * kc + 5),
        (5 * mr, nt, kc + 1),
        (2 * mr - 1, nt.min(9), 3),
        // One partial tile (one row would be a gemv), more threads than tiles.
        (3, 5, kc),
    ] {
        for rntm in &teams {
            seed += 1;
            let case = Case {
                values: Values::Uniform,
                ..Case::new(m, n, k)
            };
            let expected = gemm_output::<T>(cntx, Some(&single), &case, seed);
            let got = gemm_output::<T>(cntx, Some(rntm), &case, seed);
            assert!(
                got.iter().zip(&expected).all(|(x, y)| bits_equal(*x, *y)),
                "{}gemm {m}×{n}×{k} with {rntm:?} differs from one thread on the tall path",
                T::LETTER
            );
            run_case::<T>(cntx, Some(rntm), &case, seed);
        }
    }
}

#[test]
fn teams_compute_what_one_thread_computes() {
    for (cntx, tile, kc) in tall_contexts('s') {
        teams_match_one_thread::<f32>(&cntx, tile, kc);
    }
    for (cntx, tile, kc) in tall_contexts('d') {
        teams_match_one_thread::<f64>(&cntx, tile, kc);
    }
    for (cntx, tile, kc) in tall_contexts('c') {
        teams_match_one_thread::<c32>(&cntx, tile, kc);
    }
    for (cntx, tile, kc) in tall_contexts('z') {
        teams_match_one_thread::<c64>(&cntx, tile, kc);
    }
}

/// B packed whole is k·W elements: with A and B zero-stride views of a k larger than any
/// memory holds (the views are valid, the shapes are not stored), the path must report
/// `OutOfMemory` before touching C, not overflow or panic. Native path only: a sandbox
/// build's gemm does not take the tall path, and would run the 2⁶⁰ k steps.
#[cfg(not(any(feature = "sandbox-ref99", feature = "sandbox-gemmlike")))]
#[test]
fn a_packed_b_too_large_for_memory_is_an_error_and_leaves_c_alone() {
    use oxblis::{ErrorKind, MatMut, MatRef, gemm_with_cntx};
    // k·W·8 bytes overflows usize for W = 2; 8 rows is a tile or two.
    let (m, k) = (8, 1usize << 60);
    let (a_data, b_data) = ([1.0f64; 8], [1.0f64; 2]);
    for (cntx, _, _) in tall_contexts('d') {
        let a = MatRef::strided(&a_data, m, k, 1, 0).unwrap();
        let b = MatRef::strided(&b_data, k, 2, 0, 1).unwrap();
        let mut c_data = vec![7.0f64; 2 * m];
        let mut c = MatMut::col_major(&mut c_data, m, 2, m).unwrap();
        let err = gemm_with_cntx(&a, &b, &mut c, &cntx, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{err}");
        assert!(c_data.iter().all(|&x| x == 7.0));
    }
    // zgemm through the f64 kernel: its B′ (k×2n reals) cannot be allocated either.
    let seven = c64::new(7.0, -7.0);
    let (a_data, b_data) = ([c64::new(1.0, 1.0); 8], [c64::new(1.0, 0.5); 2]);
    for (cntx, _, _) in tall_contexts('z') {
        let a = MatRef::strided(&a_data, m, k, 1, 0).unwrap();
        let b = MatRef::strided(&b_data, k, 2, 0, 1).unwrap();
        let mut c_data = vec![seven; 2 * m];
        let mut c = MatMut::col_major(&mut c_data, m, 2, m).unwrap();
        let err = gemm_with_cntx(&a, &b, &mut c, &cntx, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{err}");
        assert!(c_data.iter().all(|&x| x == seven));
    }
}
