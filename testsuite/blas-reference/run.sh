#!/usr/bin/env bash
# Runs Debian's reference BLAS test programs (package libblas-test) on oxblis's gemm:
# xblat3{s,d,c,z} (Fortran interface) and x{s,d,c,z}cblat3 (CBLAS, both layouts), with the
# GEMM-only input files in this folder, oxblis preloaded over the reference libblas3.
#
#   testsuite/blas-reference/run.sh [path/to/liboxblis.so]
#
# Default library: target/release/liboxblis.so (built here if missing). Fails on any output
# line starting with "****", any "FAILED", a tester that exits non-zero, or one that does not
# report GEMM as passing its error exits and its computational tests (for CBLAS: in both
# layouts). Needs: apt-get install libblas-test libblas3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
lib="${1:-$root/target/release/liboxblis.so}"
if [[ -z "${1:-}" ]]; then
    (cd "$root" && cargo build --release --lib --quiet)
fi
lib="$(realpath "$lib")"
testers=/usr/lib/x86_64-linux-gnu/blas
if [[ ! -x "$testers/xblat3d" ]]; then
    echo "blas-reference: $testers/xblat3d not found; apt-get install libblas-test libblas3" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
status=0
for t in s d c z; do
    for kind in fortran cblas; do
        if [[ $kind == fortran ]]; then
            prog="xblat3$t"; input="$here/${t}blat3.in"
        else
            prog="x${t}cblat3"; input="$here/${t}cblat3.in"
        fi
        # The testers are linked against libblas.so.3; the reference one (which also holds
        # the CBLAS globals the CBLAS testers use) is put first, and oxblis over it.
        LD_LIBRARY_PATH="$testers" LD_PRELOAD="$lib" "$testers/$prog" < "$input" > out.txt 2>&1 \
            || { echo "FAIL $prog: exit status $?"; status=1; }
        # The Fortran testers write their summary to a file named in the input.
        summary=out.txt
        [[ $kind == fortran ]] && summary="${t}blat3.out"
        cat out.txt >> "$summary.all" 2>/dev/null || true
        [[ $summary != out.txt ]] && cat "$summary" >> "$summary.all"
        report="$(cat "$summary.all")"
        rm -f "$summary.all"
        if grep -E -q '^ *\*\*\*\*|FAILED' <<< "$report"; then
            echo "FAIL $prog:"
            grep -E '^ *\*\*\*\*|FAILED' <<< "$report" | head -20
            status=1
        else
            if [[ $kind == fortran ]]; then
                wanted=('GEMM +PASSED THE TESTS OF ERROR-EXITS' 'GEMM +PASSED THE COMPUTATIONAL TESTS')
            else
                wanted=('gemm +PASSED THE TESTS OF ERROR-EXITS'
                        'gemm +PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS'
                        'gemm +PASSED THE ROW-MAJOR +COMPUTATIONAL TESTS')
            fi
            missing=0
            for w in "${wanted[@]}"; do
                grep -E -q "$w" <<< "$report" || { echo "FAIL $prog: no line matching '$w'"; missing=1; }
            done
            if [[ $missing == 1 ]]; then
                tail -20 <<< "$report"
                status=1
            else
                echo "PASS $prog: $(grep -E -o 'gemm +PASSED.*|GEMM +PASSED.*' <<< "$report" | tr -s ' ' | paste -sd ';' -)"
            fi
        fi
        rm -f out.txt "${t}blat3.out"
    done
done
exit $status
