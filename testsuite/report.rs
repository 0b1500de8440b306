//! Output: one line per test, a progress count on stderr when it is a terminal, optional
//! CSV, and the summary.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::gemm_test::{GemmCase, GemmResult, Outcome};

/// One finished test, ready to print.
pub struct TestLine {
    pub config: String,
    pub name: String,
    pub case: GemmCase,
    pub threads: String,
    pub result: GemmResult,
}

/// Tallies and writes results.
pub struct Report {
    pass: usize,
    marginal: usize,
    fail: usize,
    total: usize,
    csv: Option<BufWriter<File>>,
    progress: bool,
    last_progress: Instant,
    config: String,
}

impl Report {
    /// `total` is the number of tests expected (for the progress count).
    pub fn new(csv: Option<&str>, total: usize) -> Result<Report, String> {
        let csv = match csv {
            None => None,
            Some(path) => {
                let mut w = BufWriter::new(File::create(path).map_err(|e| format!("{path}: {e}"))?);
                writeln!(
                    w,
                    "config,test,m,n,k,threads,alpha,beta,gflops,residual,outcome,note"
                )
                .map_err(|e| format!("{path}: {e}"))?;
                Some(w)
            }
        };
        Ok(Report {
            pass: 0,
            marginal: 0,
            fail: 0,
            total,
            csv,
            progress: std::io::stderr().is_terminal(),
            last_progress: Instant::now(),
            config: String::new(),
        })
    }

    pub fn header(&self) {
        say(format_args!(
            "{:<16} {:>5} {:>5} {:>5} {:>9} {:>5} {:>9} {:>10}  result",
            "test", "m", "n", "k", "threads", "a,b", "GFLOPS", "residual"
        ));
    }

    /// Counts `line`, prints it if `show`, writes it to the CSV.
    pub fn record(&mut self, line: TestLine, show: bool) {
        let r = &line.result;
        match r.outcome {
            Outcome::Pass => self.pass += 1,
            Outcome::Marginal => self.marginal += 1,
            Outcome::Fail => self.fail += 1,
        }
        let c = &line.case;
        let scalars = format!("{},{}", c.alpha.letter(), c.beta.letter());
        if show {
            if self.progress {
                eprint!("\r\x1b[K");
            }
            if line.config != self.config {
                say(format_args!("configuration {}", line.config));
                self.config = line.config.clone();
            }
            let note = if r.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.note)
            };
            say(format_args!(
                "{:<16} {:>5} {:>5} {:>5} {:>9} {:>5} {:>9.2} {:>10.2e}  {}{note}",
                line.name,
                c.m,
                c.n,
                c.k,
                line.threads,
                scalars,
                r.gflops,
                r.residual,
                r.outcome.label()
            ));
        }
        if let Some(w) = &mut self.csv {
            let _ = writeln!(
                w,
                "{},{},{},{},{},{},{},{},{:.3},{:.3e},{},{:?}",
                line.config,
                line.name,
                c.m,
                c.n,
                c.k,
                line.threads,
                c.alpha.letter(),
                c.beta.letter(),
                r.gflops,
                r.residual,
                r.outcome.label(),
                r.note
            );
        }
        let done = self.pass + self.marginal + self.fail;
        if self.progress
            && (self.last_progress.elapsed() > Duration::from_millis(200) || done == self.total)
        {
            eprint!("\r\x1b[K[{done}/{}]", self.total);
            let _ = std::io::stderr().flush();
            self.last_progress = Instant::now();
        }
    }

    /// Prints the summary; returns whether any test failed.
    pub fn finish(mut self, elapsed: Duration, configs: &[&str], cpu: &str) -> bool {
        if self.progress {
            eprint!("\r\x1b[K");
        }
        if let Some(w) = &mut self.csv {
            let _ = w.flush();
        }
        say(format_args!(
            "summary: {} PASS, {} MARGINAL, {} FAIL in {:.1} s; configurations: {}; CPU features: {cpu}",
            self.pass,
            self.marginal,
            self.fail,
            elapsed.as_secs_f64(),
            configs.join(", ")
        ));
        self.fail > 0
    }
}

/// Prints a line on stdout; a closed stdout (`testsuite | head`) is not an error worth a
/// panic, and the exit status still tells the outcome.
pub fn say(line: std::fmt::Arguments) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}
