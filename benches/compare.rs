//! The comparison driver: oxblis against the system OpenBLAS and BLIS (loaded at run time
//! with `libloading`, when installed) and the `gemm` crate (0.19, `x86-v4`), in one process,
//! on the same inputs, interleaved so the machine's slow phases hit everyone alike.
//!
//! ```text
//! cargo bench --bench compare -- [--dtype s,d,c,z] [--threads 1,2] [--trans NN,TN,NT]
//!     [--sizes 32,64,...]
//!     [--skinny] [--shape m,n,k]... [--no-square] [--lib NAME=PATH]... [--no-default-libs]
//!     [--no-gemm-crate]
//!     [--blis-arch skx] [--samples N] [--gap-ms MS] [--svg PREFIX]
//! ```
//!
//! With more than one thread, the driver pauses before each switch of library (`--gap-ms`,
//! default 150), as OpenBLAS's idle workers keep spinning for about 0.1 s after a call and
//! oxblis's poll for up to 50 ms.
//!
//! Prints, per problem, each library's GFLOPS (2mnk over the median sample), oxblis's share
//! of the measured FMA peak of one core (× threads), and oxblis's speed over each peer's
//! (> 1: oxblis is faster). Every peer's C is checked against oxblis's; a disagreement
//! fails the run. `--svg PREFIX` writes one plot per dtype and thread count. See
//! `docs/Performance.md` for the figures this produced.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

use libloading::Library;
use oxblis::check::{Rng, Values};
use oxblis::{GemmPair, MatMut, MatRef, Rntm, Scalar, c32, c64, gemm_ex};

const OPENBLAS: &str = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";
/// Debian's BLIS flavours, in order of preference: whichever `apt-get install libblis-dev`
/// pulled in (pthread on some machines, openmp on others).
const BLIS_FLAVOURS: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4",
    "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4",
    "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4",
];
const SQUARES: [usize; 13] = [
    32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
];
const SKINNY: [(usize, usize, usize); 4] = [
    (4096, 16, 4096),
    (16, 4096, 4096),
    (4096, 4096, 16),
    (64, 64, 4096),
];

// CBLAS enums (column-major, no transpose).
const COL_MAJOR: c_int = 102;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;

type CblasGemm<T> = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    T,
    *const T,
    c_int,
    *const T,
    c_int,
    T,
    *mut T,
    c_int,
);
/// CBLAS ?gemm for complex types: the scalars are passed by pointer.
type CblasGemmComplex = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    *const c_void,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
);
type SetThreads = unsafe extern "C" fn(c_int);

/// op(A) and op(B): transposed or not (column-major storage either way).
#[derive(Clone, Copy, Debug)]
struct Trans {
    a: bool,
    b: bool,
}

impl Trans {
    /// "NN", "NT", "TN" or "TT" (either case). Anything else is refused: "CN" once read as NN
    /// without a word, and a run meant for conjugated A timed NN twice.
    fn parse(s: &str) -> Trans {
        let (a, b) = match s.to_ascii_uppercase().as_str() {
            "NN" => (false, false),
            "NT" => (false, true),
            "TN" => (true, false),
            "TT" => (true, true),
            _ => {
                panic!("--trans wants NN, NT, TN or TT (the driver has no conjugation), got {s:?}")
            }
        };
        Trans { a, b }
    }
    fn name(self) -> String {
        format!(
            "{}{}",
            if self.a { 'T' } else { 'N' },
            if self.b { 'T' } else { 'N' }
        )
    }
    /// Leading dimensions of the stored A and B for op(A) m×k, op(B) k×n.
    fn lds(self, m: usize, n: usize, k: usize) -> (usize, usize) {
        (
            if self.a { k } else { m }.max(1),
            if self.b { n } else { k }.max(1),
        )
    }
    fn cblas(flag: bool) -> c_int {
        if flag { TRANS } else { NO_TRANS }
    }
}

/// A dtype the driver compares: its CBLAS symbol and the gemm crate's entry.
trait Dtype: Scalar + GemmPair<Self> {
    const CBLAS: &'static [u8];
    /// Its index in [`CBLAS_SYMBOLS`] (and [`Peer`]'s resolved addresses).
    const SLOT: usize;
    /// Machine epsilon of the type, for the agreement check.
    const EPS: f64;
}
impl Dtype for f32 {
    const CBLAS: &'static [u8] = b"cblas_sgemm\0";
    const SLOT: usize = 0;
    const EPS: f64 = f32::EPSILON as f64;
}
impl Dtype for f64 {
    const CBLAS: &'static [u8] = b"cblas_dgemm\0";
    const SLOT: usize = 1;
    const EPS: f64 = f64::EPSILON;
}
impl Dtype for c32 {
    const CBLAS: &'static [u8] = b"cblas_cgemm\0";
    const SLOT: usize = 2;
    const EPS: f64 = f32::EPSILON as f64;
}
impl Dtype for c64 {
    const CBLAS: &'static [u8] = b"cblas_zgemm\0";
    const SLOT: usize = 3;
    const EPS: f64 = f64::EPSILON;
}

/// The CBLAS symbols, by [`Dtype::SLOT`].
const CBLAS_SYMBOLS: [&[u8]; 4] = [f32::CBLAS, f64::CBLAS, c32::CBLAS, c64::CBLAS];

/// A loaded BLAS library.
struct Peer {
    name: String,
    lib: Library,
    /// The ?gemm entry points, looked up once at load: a lookup per call (`dlsym`, about
    /// 50 ns) was part of every timed peer call, and a tenth of a 32³ sgemm.
    cblas: [Option<*const c_void>; 4],
}

impl Peer {
    fn load(name: &str, path: &str, env: Option<(&str, &str)>) -> Option<Peer> {
        // Some libraries read their environment when they load; set it only for that.
        if let Some((k, v)) = env {
            // SAFETY: the driver is single-threaded here (no oxblis call has run yet).
            unsafe { std::env::set_var(k, v) };
        }
        // SAFETY: loading a system BLAS runs its initializers, which is what we want.
        let lib = unsafe { Library::new(path) };
        let peer = match lib {
            Ok(lib) => {
                let cblas = CBLAS_SYMBOLS.map(|symbol| {
                    // SAFETY: reading a symbol's address calls nothing.
                    unsafe { lib.get::<*const c_void>(symbol) }
                        .ok()
                        .map(|address| *address)
                });
                Some(Peer {
                    name: name.to_string(),
                    lib,
                    cblas,
                })
            }
            Err(e) => {
                eprintln!("compare: skipping {name} ({path}): {e}");
                None
            }
        };
        if let (Some(p), Some(_)) = (&peer, env) {
            // Force lazy initialization while the variable is still set.
            p.gemm::<f64>(Trans::parse("NN"), 1, 1, 1, &[1.0], &[1.0], &mut [0.0]);
        }
        if let Some((k, _)) = env {
            // SAFETY: as above.
            unsafe { std::env::remove_var(k) };
        }
        peer
    }

    /// The address of T's CBLAS ?gemm (every CBLAS library has all four).
    fn cblas_address<T: Dtype>(&self) -> *const c_void {
        let name = String::from_utf8_lossy(T::CBLAS);
        self.cblas[T::SLOT].unwrap_or_else(|| panic!("{}: no {name}", self.name))
    }

    fn set_threads(&self, n: usize) {
        for symbol in [
            &b"openblas_set_num_threads\0"[..],
            b"bli_thread_set_num_threads\0",
        ] {
            // SAFETY: both symbols have this signature in their libraries.
            if let Ok(f) = unsafe { self.lib.get::<SetThreads>(symbol) } {
                // SAFETY: a plain setter.
                unsafe { f(n as c_int) };
            }
        }
        // oxblis's own C ABI (a second copy of oxblis, loaded as a peer to time the CBLAS path).
        // SAFETY: `int oxblis_set_num_threads(int)` in include/oxblis.h.
        if let Ok(f) = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(c_int) -> c_int>(b"oxblis_set_num_threads\0")
        } {
            // SAFETY: a plain setter.
            unsafe { f(n as c_int) };
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn gemm<T: Dtype>(
        &self,
        tr: Trans,
        m: usize,
        n: usize,
        k: usize,
        a: &[T],
        b: &[T],
        c: &mut [T],
    ) {
        let (lda, ldb) = tr.lds(m, n, k);
        let (lda, ldb) = (lda as c_int, ldb as c_int);
        let (ta, tb) = (Trans::cblas(tr.a), Trans::cblas(tr.b));
        let (m, n, k) = (m as c_int, n as c_int, k as c_int);
        if T::IS_COMPLEX {
            // SAFETY: the address of T's CBLAS complex ?gemm, which has this signature.
            let f: CblasGemmComplex = unsafe { std::mem::transmute(self.cblas_address::<T>()) };
            let (alpha, beta) = (T::one(), T::zero());
            // SAFETY: column-major buffers as below; the scalars live across the call.
            unsafe {
                f(
                    COL_MAJOR,
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    (&alpha as *const T).cast(),
                    a.as_ptr().cast(),
                    lda,
                    b.as_ptr().cast(),
                    ldb,
                    (&beta as *const T).cast(),
                    c.as_mut_ptr().cast(),
                    m.max(1),
                )
            };
            return;
        }
        // SAFETY: the address of T's CBLAS ?gemm, which has this signature (a function
        // pointer is pointer-sized whatever its parameter types).
        let f: CblasGemm<T> = unsafe { std::mem::transmute_copy(&self.cblas_address::<T>()) };
        // SAFETY: column-major A, B, C buffers of the stated shapes and leading dimensions.
        unsafe {
            f(
                COL_MAJOR,
                ta,
                tb,
                m,
                n,
                k,
                T::one(),
                a.as_ptr(),
                lda,
                b.as_ptr(),
                ldb,
                T::zero(),
                c.as_mut_ptr(),
                m.max(1),
            )
        };
    }
}

/// Who is being timed.
enum Contender<'a> {
    Oxblis(Rntm),
    Peer(&'a Peer),
    GemmCrate(gemm::Parallelism),
}

impl Contender<'_> {
    fn name(&self) -> String {
        match self {
            Contender::Oxblis(_) => "oxblis".into(),
            Contender::Peer(p) => p.name.clone(),
            Contender::GemmCrate(_) => "gemm-crate".into(),
        }
    }

    fn run<T: Dtype>(
        &self,
        tr: Trans,
        (m, n, k): (usize, usize, usize),
        a: &[T],
        b: &[T],
        c: &mut [T],
    ) {
        let (lda, ldb) = tr.lds(m, n, k);
        match self {
            Contender::Oxblis(rntm) => {
                let av = if tr.a {
                    MatRef::col_major(a, k, m, lda).unwrap().t()
                } else {
                    MatRef::col_major(a, m, k, lda).unwrap()
                };
                let bv = if tr.b {
                    MatRef::col_major(b, n, k, ldb).unwrap().t()
                } else {
                    MatRef::col_major(b, k, n, ldb).unwrap()
                };
                let mut cv = MatMut::col_major(c, m, n, m.max(1)).unwrap();
                gemm_ex(&av, &bv, &mut cv, Some(rntm)).unwrap();
            }
            Contender::Peer(p) => p.gemm(tr, m, n, k, a, b, c),
            Contender::GemmCrate(par) => {
                // The gemm crate computes dst := alpha·dst + beta·lhs·rhs (its names are
                // BLAS's swapped); with read_dst = false that is C := 1·A·B.
                // Strides of op(A) and op(B) as (column, row), the crate's order.
                let (a_cs, a_rs) = if tr.a {
                    (1, lda as isize)
                } else {
                    (lda as isize, 1)
                };
                let (b_cs, b_rs) = if tr.b {
                    (1, ldb as isize)
                } else {
                    (ldb as isize, 1)
                };
                // SAFETY: column-major buffers of the stated shapes (column stride first).
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        c.as_mut_ptr(),
                        m as isize,
                        1,
                        false,
                        a.as_ptr(),
                        a_cs,
                        a_rs,
                        b.as_ptr(),
                        b_cs,
                        b_rs,
                        T::zero(),
                        T::one(),
                        false,
                        false,
                        false,
                        *par,
                    )
                }
            }
        }
    }
}

struct Options {
    dtypes: Vec<char>,
    threads: Vec<usize>,
    sizes: Vec<usize>,
    skinny: bool,
    squares: bool,
    libs: Vec<(String, String)>,
    blis_arch: Option<String>,
    samples: usize,
    /// Pause before each switch of library when threaded.
    gap: Duration,
    svg: Option<String>,
    gemm_crate: bool,
    trans: Vec<Trans>,
    shapes: Vec<(usize, usize, usize)>,
}

fn parse_list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .unwrap_or_else(|_| panic!("bad list item {x:?}"))
        })
        .collect()
}

/// The first installed of [`BLIS_FLAVOURS`] (the first, to be reported missing, if none is).
fn default_blis() -> &'static str {
    let installed = BLIS_FLAVOURS
        .iter()
        .find(|path| std::path::Path::new(path).exists());
    installed.unwrap_or(&BLIS_FLAVOURS[0])
}

fn options() -> Options {
    let mut o = Options {
        dtypes: vec!['s', 'd'],
        threads: vec![1, 2],
        sizes: SQUARES.to_vec(),
        skinny: false,
        squares: true,
        libs: vec![
            ("openblas".into(), OPENBLAS.into()),
            ("blis".into(), default_blis().into()),
        ],
        blis_arch: None,
        samples: 7,
        gap: Duration::from_millis(150),
        svg: None,
        gemm_crate: true,
        trans: vec![Trans::parse("NN")],
        shapes: Vec::new(),
    };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--dtype" => {
                o.dtypes = value()
                    .split(',')
                    .filter_map(|s| s.chars().next())
                    .collect()
            }
            "--threads" => o.threads = parse_list(&value()),
            "--sizes" => o.sizes = parse_list(&value()),
            "--skinny" => o.skinny = true,
            "--no-square" => o.squares = false,
            "--lib" => {
                let v = value();
                let (name, path) = v.split_once('=').unwrap_or(("lib", &v));
                o.libs.push((name.into(), path.into()));
            }
            "--no-default-libs" => o.libs.clear(),
            "--blis-arch" => o.blis_arch = Some(value()),
            "--samples" => o.samples = parse_list(&value())[0],
            "--gap-ms" => o.gap = Duration::from_millis(parse_list(&value())[0]),
            "--svg" => o.svg = Some(value()),
            "--no-gemm-crate" => o.gemm_crate = false,
            "--trans" => o.trans = value().split(',').map(Trans::parse).collect(),
            "--shape" => {
                let d: Vec<usize> = parse_list(&value());
                assert!(d.len() == 3, "--shape wants m,n,k");
                o.shapes.push((d[0], d[1], d[2]));
            }
            other => panic!("unknown option {other}"),
        }
    }
    o
}

/// Median GFLOPS per contender for one problem: samples interleaved across contenders, each
/// sample a batch of calls lasting at least 20 ms, with a pause of `gap` before each switch
/// (OpenBLAS's workers spin for ~0.1 s after a call and would steal the next one's cores).
fn measure<T: Dtype>(
    contenders: &[Contender],
    tr: Trans,
    shape: (usize, usize, usize),
    samples: usize,
    gap: Duration,
) -> Vec<f64> {
    let (m, n, k) = shape;
    let mut rng = Rng::new(7);
    let mut a = vec![T::zero(); m * k];
    let mut b = vec![T::zero(); k * n];
    rng.fill(Values::Uniform, &mut a);
    rng.fill(Values::Uniform, &mut b);
    let mut c = vec![T::zero(); m * n];
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (m * n * k) as f64;
    let batch: Vec<usize> = contenders
        .iter()
        .map(|who| {
            who.run(tr, shape, &a, &b, &mut c); // warm-up
            let t = Instant::now();
            who.run(tr, shape, &a, &b, &mut c);
            (Duration::from_millis(20).as_secs_f64() / t.elapsed().as_secs_f64())
                .ceil()
                .max(1.0) as usize
        })
        .collect();
    let mut times = vec![Vec::new(); contenders.len()];
    for round in 0..samples {
        for step in 0..contenders.len() {
            // Alternate the order every round.
            let i = if round % 2 == 0 {
                step
            } else {
                contenders.len() - 1 - step
            };
            std::thread::sleep(gap);
            let t = Instant::now();
            for _ in 0..batch[i] {
                contenders[i].run(tr, shape, &a, &b, &mut c);
            }
            times[i].push(t.elapsed().as_secs_f64() / batch[i] as f64);
        }
    }
    // Agreement: every contender's C against oxblis's.
    let mut reference = vec![T::zero(); m * n];
    contenders[0].run(tr, shape, &a, &b, &mut reference);
    let scale = reference
        .iter()
        .map(|x| x.abs1())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    for who in &contenders[1..] {
        who.run(tr, shape, &a, &b, &mut c);
        let diff = c
            .iter()
            .zip(&reference)
            .map(|(x, y)| (*x - *y).abs1())
            .fold(0.0, f64::max);
        let tol = 32.0 * T::EPS * (k as f64).sqrt().max(1.0) * 4.0;
        assert!(
            diff / scale <= tol,
            "{} disagrees with oxblis at {shape:?}: {:.2e}",
            who.name(),
            diff / scale
        );
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            flops / t[t.len() / 2] / 1e9
        })
        .collect()
}

/// This core's FMA peak in GFLOPS for `T` (AVX-512 or AVX2, whichever is faster here).
fn measured_peak<T: Dtype>() -> f64 {
    // A complex element is two reals; the peak in flops is the real component's.
    let real_size = if T::IS_COMPLEX {
        size_of::<T>() / 2
    } else {
        size_of::<T>()
    };
    let lanes = 32 / real_size; // per 256-bit register
    let mut best = 0.0f64;
    if std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2/FMA (checked).
        best = best.max(unsafe { peak::avx2(real_size == 4) } * lanes as f64);
    }
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512 F (checked).
        best = best.max(unsafe { peak::avx512(real_size == 4) } * 2.0 * lanes as f64);
    }
    best
}

mod peak {
    use std::arch::x86_64::*;
    use std::time::Instant;

    const ITERS: usize = 20_000_000;

    /// Billions of 256-bit FMA instructions per second × 2 (flops per lane per FMA).
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn avx2(single: bool) -> f64 {
        let mut acc = [_mm256_set1_pd(1.0); 12];
        let x = _mm256_set1_pd(0.999_999);
        let t = Instant::now();
        for _ in 0..ITERS / 12 {
            for a in acc.iter_mut() {
                *a = if single {
                    _mm256_castps_pd(_mm256_fmadd_ps(
                        _mm256_castpd_ps(*a),
                        _mm256_castpd_ps(x),
                        _mm256_castpd_ps(x),
                    ))
                } else {
                    _mm256_fmadd_pd(*a, x, x)
                };
            }
        }
        std::hint::black_box(acc);
        2.0 * (ITERS / 12 * 12) as f64 / t.elapsed().as_secs_f64() / 1e9
    }

    /// Billions of 512-bit FMA instructions per second × 2.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512(single: bool) -> f64 {
        let mut acc = [_mm512_set1_pd(1.0); 24];
        let x = _mm512_set1_pd(0.999_999);
        let t = Instant::now();
        for _ in 0..ITERS / 24 {
            for a in acc.iter_mut() {
                *a = if single {
                    _mm512_castps_pd(_mm512_fmadd_ps(
                        _mm512_castpd_ps(*a),
                        _mm512_castpd_ps(x),
                        _mm512_castpd_ps(x),
                    ))
                } else {
                    _mm512_fmadd_pd(*a, x, x)
                };
            }
        }
        std::hint::black_box(acc);
        2.0 * (ITERS / 24 * 24) as f64 / t.elapsed().as_secs_f64() / 1e9
    }
}

fn run_dtype<T: Dtype>(opts: &Options, peers: &[Peer], plots: &mut BTreeMap<String, Plot>) {
    let peak = measured_peak::<T>();
    for &threads in &opts.threads {
        for p in peers {
            p.set_threads(threads);
        }
        let mut contenders = vec![Contender::Oxblis(
            Rntm::new().with_num_threads(threads).unwrap(),
        )];
        contenders.extend(peers.iter().map(Contender::Peer));
        // The gemm crate's complex types are its own; it is compared on real dtypes only.
        if opts.gemm_crate && !T::IS_COMPLEX {
            contenders.push(Contender::GemmCrate(if threads == 1 {
                gemm::Parallelism::None
            } else {
                gemm::Parallelism::Rayon(threads)
            }));
        }
        let names: Vec<String> = contenders.iter().map(Contender::name).collect();
        for &tr in &opts.trans {
            println!(
                "\n{}gemm, {threads} thread(s), column-major {}; measured peak {:.1} GFLOPS/core; \
                 ratio = oxblis / peer",
                T::LETTER,
                tr.name(),
                peak
            );
            print!(
                "{:>6} {:>6} {:>6} | {:>8} {:>5}",
                "m", "n", "k", "oxblis", "%pk"
            );
            for name in &names[1..] {
                print!(" | {name:>10} {:>6}", "ratio");
            }
            println!();
            let mut shapes: Vec<(usize, usize, usize)> = Vec::new();
            if opts.squares {
                shapes.extend(opts.sizes.iter().map(|&s| (s, s, s)));
            }
            if opts.skinny {
                shapes.extend(SKINNY);
            }
            shapes.extend(opts.shapes.iter().copied());
            let plot = plots
                .entry(format!(
                    "{}gemm_{}_{threads}t",
                    T::LETTER,
                    tr.name().to_lowercase()
                ))
                .or_insert_with(|| Plot::new(names.clone()));
            for shape in shapes {
                let gap = if threads > 1 {
                    opts.gap
                } else {
                    Duration::ZERO
                };
                let gflops = measure::<T>(&contenders, tr, shape, opts.samples, gap);
                print!(
                    "{:>6} {:>6} {:>6} | {:>8.1} {:>4.0}%",
                    shape.0,
                    shape.1,
                    shape.2,
                    gflops[0],
                    100.0 * gflops[0] / (peak * threads as f64)
                );
                for g in &gflops[1..] {
                    print!(" | {g:>10.1} {:>6.2}", gflops[0] / g);
                }
                println!();
                if shape.0 == shape.1 && shape.1 == shape.2 {
                    plot.points.push((shape.0, gflops));
                }
            }
        }
    }
}

/// GFLOPS against square size, one line per contender.
struct Plot {
    names: Vec<String>,
    points: Vec<(usize, Vec<f64>)>,
}

impl Plot {
    fn new(names: Vec<String>) -> Plot {
        Plot {
            names,
            points: Vec::new(),
        }
    }

    fn svg(&self, title: &str) -> String {
        let (w, h, left, bottom) = (720.0, 420.0, 60.0, 40.0);
        let max_x = self.points.iter().map(|p| p.0).max().unwrap_or(1) as f64;
        let max_y = self
            .points
            .iter()
            .flat_map(|p| p.1.iter().copied())
            .fold(1.0, f64::max)
            * 1.1;
        let x = |v: f64| {
            left + (w - left - 20.0) * (v.ln() - 32f64.ln()).max(0.0)
                / (max_x.ln() - 32f64.ln()).max(1e-9)
        };
        let y = |v: f64| h - bottom - (h - bottom - 30.0) * v / max_y;
        let colors = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"];
        let mut s = format!(
            "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>\n\
             <rect width='100%' height='100%' fill='white'/>\n<text x='{left}' y='18'>{title} (GFLOPS, higher is better; x: m = n = k, log scale)</text>\n"
        );
        for tick in 0..=5 {
            let v = max_y * tick as f64 / 5.0;
            s += &format!(
                "<line x1='{left}' x2='{}' y1='{:.1}' y2='{:.1}' stroke='#ddd'/><text x='5' y='{:.1}'>{v:.0}</text>\n",
                w - 20.0,
                y(v),
                y(v),
                y(v) + 4.0
            );
        }
        for (size, _) in &self.points {
            s += &format!(
                "<text x='{:.1}' y='{}' text-anchor='middle'>{size}</text>\n",
                x(*size as f64),
                h - bottom + 16.0
            );
        }
        for (i, name) in self.names.iter().enumerate() {
            let color = colors[i % colors.len()];
            let pts: Vec<String> = self
                .points
                .iter()
                .map(|(size, g)| format!("{:.1},{:.1}", x(*size as f64), y(g[i])))
                .collect();
            s += &format!(
                "<polyline fill='none' stroke='{color}' stroke-width='2' points='{}'/>\n",
                pts.join(" ")
            );
            s += &format!(
                "<text x='{}' y='{}' fill='{color}'>{name}</text>\n",
                left + 10.0 + 110.0 * i as f64,
                h - 6.0
            );
        }
        s + "</svg>\n"
    }
}

fn main() {
    let opts = options();
    let peers: Vec<Peer> = opts
        .libs
        .iter()
        .filter_map(|(name, path)| {
            let env = (name.starts_with("blis"))
                .then_some(())
                .and(opts.blis_arch.as_deref())
                .map(|arch| {
                    // BLIS 0.9 numbers its configurations; skx is 0, haswell 3.
                    (
                        "BLIS_ARCH_TYPE",
                        if arch == "skx" {
                            "0"
                        } else if arch == "haswell" {
                            "3"
                        } else {
                            arch
                        },
                    )
                });
            Peer::load(name, path, env)
        })
        .collect();
    println!(
        "oxblis configuration: {}",
        oxblis::context().map(|c| c.name()).unwrap_or("none")
    );
    let mut plots = BTreeMap::new();
    for &dt in &opts.dtypes {
        match dt {
            's' => run_dtype::<f32>(&opts, &peers, &mut plots),
            'd' => run_dtype::<f64>(&opts, &peers, &mut plots),
            'c' => run_dtype::<c32>(&opts, &peers, &mut plots),
            'z' => run_dtype::<c64>(&opts, &peers, &mut plots),
            other => panic!("dtype {other}: the driver compares s, d, c and z"),
        }
    }
    if let Some(prefix) = &opts.svg {
        for (name, plot) in &plots {
            if plot.points.len() > 1 {
                let path = format!("{prefix}{name}.svg");
                std::fs::write(&path, plot.svg(name)).expect("write svg");
                println!("wrote {path}");
            }
        }
    }
}
