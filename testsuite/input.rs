//! The input files, in the spirit of BLIS's `input.general` and `input.operations`: one
//! setting per line, in a fixed order, each line's value before an optional `# comment`.
//! The format is documented in `docs/Testsuite.md` and by the default files themselves
//! (`testsuite/input.general`, `testsuite/input.operations`). Errors name the file, the
//! line and what was expected.

use oxblis::check::{Op, Storage, Values};
use oxblis::{Rntm, Ways};

/// A scalar class for alpha or beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarClass {
    Zero,
    One,
    MinusOne,
    Random,
}

impl ScalarClass {
    fn parse(s: &str) -> Option<ScalarClass> {
        match s {
            "0" => Some(ScalarClass::Zero),
            "1" => Some(ScalarClass::One),
            "-1" => Some(ScalarClass::MinusOne),
            "r" => Some(ScalarClass::Random),
            _ => None,
        }
    }

    pub fn letter(self) -> &'static str {
        match self {
            ScalarClass::Zero => "0",
            ScalarClass::One => "1",
            ScalarClass::MinusOne => "-1",
            ScalarClass::Random => "r",
        }
    }
}

/// How many threads a test runs with: a total (the library factorizes it) or explicit
/// ways per loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Total(usize),
    Ways(Ways),
}

impl Threads {
    /// The `Rntm` for this setting; an error for counts the library refuses (checked when
    /// the setting is parsed, so a parsed setting always has one).
    pub fn rntm(self) -> oxblis::Result<Rntm> {
        match self {
            Threads::Total(n) => Rntm::new().with_num_threads(n),
            Threads::Ways(w) => Rntm::new().with_ways(w),
        }
    }

    pub fn label(self) -> String {
        match self {
            Threads::Total(n) => format!("{n}"),
            Threads::Ways(w) => format!("{}.{}.{}.{}.{}", w.jc, w.pc, w.ic, w.jr, w.ir),
        }
    }
}

/// `input.general`.
#[derive(Clone, Debug)]
pub struct General {
    pub repeats: usize,
    /// (C, A, B) storage combinations.
    pub storage: Vec<[Storage; 3]>,
    pub dtypes: Vec<char>,
    pub sizes: Vec<usize>,
    pub scalars: Vec<(ScalarClass, ScalarClass)>,
    pub threads: Vec<Threads>,
    /// `None`: every configuration this CPU supports.
    pub configs: Option<Vec<String>>,
    pub values: Values,
}

/// The operations the suite knows (brgemm joins with issue #9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationKind {
    Gemm,
}

/// One operation block of `input.operations`.
#[derive(Clone, Debug)]
pub struct Operation {
    pub kind: OperationKind,
    pub enabled: bool,
    /// m, n, k: `None` = the problem size.
    pub dims: [Option<usize>; 3],
    /// (op(A), op(B)) pairs.
    pub ops: Vec<(Op, Op)>,
}

/// A parse error: where, and what was expected.
#[derive(Debug)]
pub struct InputError(pub String);

/// The settings of one file: (line number, value text) for each line that has a value.
fn settings(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.split('#').next().unwrap_or("").trim()))
        .filter(|(_, value)| !value.is_empty())
        .collect()
}

struct Reader<'a> {
    file: &'a str,
    lines: std::vec::IntoIter<(usize, &'a str)>,
    last_line: usize,
}

impl<'a> Reader<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        Reader {
            file,
            lines: settings(text).into_iter(),
            last_line: 0,
        }
    }

    /// The next setting, parsed by `parse`; `what` says what was expected.
    fn next<T>(
        &mut self,
        what: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, InputError> {
        let Some((line, value)) = self.lines.next() else {
            return Err(InputError(format!(
                "{}: ends after line {}; expected {what}",
                self.file, self.last_line
            )));
        };
        self.last_line = line;
        parse(value).ok_or_else(|| {
            InputError(format!(
                "{}:{line}: expected {what}, found {value:?}",
                self.file
            ))
        })
    }

    fn done(&mut self) -> bool {
        self.lines.as_slice().is_empty()
    }
}

fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split_whitespace()
}

/// Every item of `s`'s tokens parsed by `f`, or `None` if any fails or there are none.
fn all<T>(s: &str, f: impl Fn(&str) -> Option<Vec<T>>) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for t in tokens(s) {
        out.extend(f(t)?);
    }
    (!out.is_empty()).then_some(out)
}

fn storage_letter(c: char) -> Option<Vec<Storage>> {
    match c {
        '?' => Some(Storage::ALL.to_vec()),
        c => Storage::from_letter(c).map(|s| vec![s]),
    }
}

fn storage_combos(token: &str) -> Option<Vec<[Storage; 3]>> {
    let letters: Vec<char> = token.chars().collect();
    let [c, a, b] = letters[..] else { return None };
    let mut out = Vec::new();
    for sc in storage_letter(c)? {
        for sa in storage_letter(a)? {
            for sb in storage_letter(b)? {
                out.push([sc, sa, sb]);
            }
        }
    }
    Some(out)
}

/// `7`, or a range `first-max:step`.
fn sizes(token: &str) -> Option<Vec<usize>> {
    if let Some((range, step)) = token.split_once(':') {
        let (first, max) = range.split_once('-')?;
        let (first, max, step): (usize, usize, usize) =
            (first.parse().ok()?, max.parse().ok()?, step.parse().ok()?);
        (step > 0 && first <= max).then(|| (first..=max).step_by(step).collect())
    } else {
        token.parse().ok().map(|n| vec![n])
    }
}

fn threads(token: &str) -> Option<Vec<Threads>> {
    let parts: Vec<usize> = token
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let t = match parts[..] {
        [n] => Threads::Total(n),
        [jc, pc, ic, jr, ir] => Threads::Ways(Ways { jc, pc, ic, jr, ir }),
        _ => return None,
    };
    // The library's own validation (counts of at least 1, within its limit).
    t.rntm().is_ok().then_some(vec![t])
}

/// A thread-settings list as on the command line (`1,2,1.2.1.1.1`), or `None` if any entry is
/// malformed.
pub fn parse_thread_list(list: &str) -> Option<Vec<Threads>> {
    all(&list.replace(',', " "), threads)
}

fn op_letter(c: char) -> Option<Vec<Op>> {
    match c {
        'n' => Some(vec![Op::N]),
        't' => Some(vec![Op::T]),
        'c' => Some(vec![Op::C]),
        'r' => Some(vec![Op::R]),
        '?' => Some(vec![Op::N, Op::T, Op::C, Op::R]),
        _ => None,
    }
}

fn op_pairs(token: &str) -> Option<Vec<(Op, Op)>> {
    let letters: Vec<char> = token.chars().collect();
    let [a, b] = letters[..] else { return None };
    let mut out = Vec::new();
    for oa in op_letter(a)? {
        for ob in op_letter(b)? {
            out.push((oa, ob));
        }
    }
    Some(out)
}

/// Parses `input.general` (`file` names it in errors).
pub fn parse_general(file: &str, text: &str) -> Result<General, InputError> {
    let mut r = Reader::new(file, text);
    let repeats = r.next("the number of repeats (a positive integer)", |s| {
        s.parse().ok().filter(|&n: &usize| n > 0)
    })?;
    let storage = r.next(
        "storage combinations of C, A, B: three letters each from c r g v ? (e.g. ccc crg)",
        |s| all(s, storage_combos),
    )?;
    let dtypes = r.next(
        "datatypes: letters from s d c z b i u (b = bf16 → f32, i = i8 → i32, u = u8 × i8 → i32; e.g. sdczbiu)",
        |s| {
            let d: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
            (!d.is_empty() && d.iter().all(|c| "sdczbiu".contains(*c))).then_some(d)
        },
    )?;
    let sizes = r.next(
        "problem sizes: integers or ranges first-max:step (e.g. 0 1 7 64-256:64)",
        |s| all(s, sizes),
    )?;
    let scalars = r.next(
        "alpha,beta classes: pairs from 0 1 -1 r (e.g. r,r 1,0 0,r)",
        |s| {
            all(s, |t| {
                let (a, b) = t.split_once(',')?;
                Some(vec![(ScalarClass::parse(a)?, ScalarClass::parse(b)?)])
            })
        },
    )?;
    let threads = r.next(
        "thread settings: totals (1 2) or ways jc.pc.ic.jr.ir (1.2.1.1.1), each at least 1",
        |s| all(s, threads),
    )?;
    let configs = r.next("configurations: all, or configuration names", |s| {
        let names: Vec<String> = tokens(s).map(str::to_string).collect();
        match names.as_slice() {
            [all] if all == "all" => Some(None),
            [] => None,
            _ => Some(Some(names)),
        }
    })?;
    let values = r.next("values: uniform or integers", |s| match s {
        "uniform" => Some(Values::Uniform),
        "integers" => Some(Values::SmallIntegers),
        _ => None,
    })?;
    if !r.done() {
        let (line, value) = r.lines.next().unwrap();
        return Err(InputError(format!(
            "{file}:{line}: unexpected setting {value:?} after the last one (values)"
        )));
    }
    Ok(General {
        repeats,
        storage,
        dtypes,
        sizes,
        scalars,
        threads,
        configs,
        values,
    })
}

/// Parses `input.operations`: blocks of four settings (name, enabled, dimensions,
/// parameters).
pub fn parse_operations(file: &str, text: &str) -> Result<Vec<Operation>, InputError> {
    let mut r = Reader::new(file, text);
    let mut out = Vec::new();
    while !r.done() {
        let kind = r.next("an operation name (gemm)", |s| {
            (s == "gemm").then_some(OperationKind::Gemm)
        })?;
        let enabled = r.next("1 (test it) or 0 (skip it)", |s| match s {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        })?;
        let dims = r.next(
            "dimensions m n k: -1 for the problem size, or a fixed size",
            |s| {
                let d: Vec<Option<usize>> = tokens(s)
                    .map(|t| {
                        if t == "-1" {
                            Some(None)
                        } else {
                            t.parse().ok().map(Some)
                        }
                    })
                    .collect::<Option<_>>()?;
                d.try_into().ok()
            },
        )?;
        let ops = r.next(
            "op(A) op(B) pairs: two letters each from n t c r ? (e.g. ?? or nn tn)",
            |s| all(s, op_pairs),
        )?;
        out.push(Operation {
            kind,
            enabled,
            dims,
            ops,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_files_parse() {
        parse_general("input.general", include_str!("input.general")).unwrap();
        parse_general("input.general.quick", include_str!("input.general.quick")).unwrap();
        parse_general("input.general.full", include_str!("input.general.full")).unwrap();
        parse_operations("input.operations", include_str!("input.operations")).unwrap();
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let text = "1 # repeats\n\nccc crx # storage\n";
        let e = parse_general("g", text).unwrap_err().0;
        assert!(e.starts_with("g:3: expected storage combinations"), "{e}");
        let e = parse_general("g", "1\nccc\nsdcz\n0 1 5-3:1\n")
            .unwrap_err()
            .0;
        assert!(e.starts_with("g:4: expected problem sizes"), "{e}");
        let e = parse_general("g", "1\nccc\n").unwrap_err().0;
        assert!(e.contains("ends after line 2; expected datatypes"), "{e}");
        let e = parse_operations("o", "gemm\n1\n-1 -1\n").unwrap_err().0;
        assert!(e.starts_with("o:3: expected dimensions"), "{e}");
    }

    #[test]
    fn wildcards_and_ranges_expand() {
        assert_eq!(storage_combos("c?r").unwrap().len(), 4);
        assert_eq!(sizes("64-256:64").unwrap(), vec![64, 128, 192, 256]);
        assert_eq!(op_pairs("?n").unwrap().len(), 4);
        assert!(threads("0").is_none());
        assert!(threads("1.2.1.1.1").is_some());
    }
}
