#!/usr/bin/python3
"""CLBlast's own correctness tests (Debian package clblast-tests) against one OpenCL platform.

Each clblast_test_<routine> binary runs its routine in every precision (S, D, C, Z and H where
the device has fp16) on a set of sizes, strides and layouts, and compares the result with the
netlib reference CBLAS. One test here is one routine in one precision, e.g. "xgemm/SGEMM".

The binaries print one character per case. The runner reads those itself rather than trusting
the final "N test(s) passed / skipped / failed" lines, because CLBlast counts a kernel that does
not compile ('\\') as skipped: here that is a failure. Per routine and precision:
  ':' '.'  correct result / correct error code          -> passed case
  'X' '/'  wrong result / wrong error code               -> failed case
  '\\'     OpenCL kernel failed to compile               -> failed case
  'o'      precision not supported by the device         -> skipped case
  '-'      the reference CBLAS cannot check error codes  -> not comparable (counted, shown)
A routine passes when it has passed cases, no failed case and finished. A binary that crashes or
is killed at the time limit fails the precision it was in and "<routine>/(rest)" (the precisions
it never reached, or a crash at exit). If every case is 'o' the routine is
skipped (shown in the summary).

CLBlast keeps compiled programs and tuning databases in memory only (per process): every
binary starts cold, so nothing cached by an earlier run can hide a failure. Manifold's own
program cache is pointed at a fresh folder for the same reason.

Usage: run_clblast.py --icd-dir DIR [--expected FILE] [--routines xgemm,xaxpy|all]
                      [--timeout SECONDS] [--work-dir DIR] [--full]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expectations  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# The routines run in CI (see tests/thirdparty/README.md for the timing that chose them): every
# BLAS level, every kernel family CLBlast has (xaxpy/xdot/xnrm2/xamax level-1 kernels, xgemv and
# xger level-2 kernels, the direct and indirect xgemm kernels with their pad/transpose helpers,
# xtrsm's triangular inversion, batched axpy, im2col/convgemm, and xsyrk/xherk for the
# triangular XgemmUpper/XgemmLower kernels). The batched/strided gemms (the same kernels as xgemm,
# 40-80 s each), banded/packed level-2 variants and the rest of level 3 are left out for CI time;
# --routines all runs them.
DEFAULT_ROUTINES = [
    "xaxpy", "xdot", "xnrm2", "xamax", "xasum", "xscal", "xcopy", "xswap",
    "xgemv", "xger", "xtrsv", "xsymv",
    "xim2col", "xomatcopy", "xhad", "xaxpybatched", "xconvgemm",
    # Level 3 last: the slowest (xtrsm about 110 s and xgemm 70 s at load 10).
    "xhemm", "xtrmm", "xsyrk", "xherk", "xtrsm", "xgemm",
]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
START = re.compile(r"Starting tests for the '(\w+)' routine")
CASES = re.compile(r"^\s+([:.X/\\o\-]+)\s*$")


def binary_path(routine):
    for d in ("/usr/bin", "/usr/local/bin"):
        p = os.path.join(d, "clblast_test_" + routine)
        if os.path.exists(p):
            return p
    found = shutil.which("clblast_test_" + routine)
    return found


def all_routines():
    names = set()
    for d in os.environ.get("PATH", "/usr/bin").split(":") + ["/usr/bin"]:
        if os.path.isdir(d):
            names.update(f[len("clblast_test_"):] for f in os.listdir(d)
                         if f.startswith("clblast_test_"))
    return sorted(names)


def parse(output):
    """Returns [(routine name, counts dict)] in the order printed."""
    routines = []
    cur = None
    for raw in output.splitlines():
        line = ANSI.sub("", raw)
        m = START.search(line)
        if m:
            cur = {"pass": 0, "fail": 0, "compile": 0, "unsupported": 0, "nocheck": 0,
                   "done": False}
            routines.append((m.group(1), cur))
            continue
        if cur is None:
            continue
        m = CASES.match(line)
        if m:
            s = m.group(1)
            cur["pass"] += s.count(":") + s.count(".")
            cur["fail"] += s.count("X") + s.count("/")
            cur["compile"] += s.count("\\")
            cur["unsupported"] += s.count("o")
            cur["nocheck"] += s.count("-")
        elif "Completed all test-cases for this routine" in line:
            cur["done"] = True
        elif "All tests skipped: Unsupported precision" in line:
            cur["unsupported"] += 1
            cur["done"] = True
    return routines


def run_one(routine, env, timeout, full, log_dir):
    exe = binary_path(routine)
    if not exe:
        return None, "binary clblast_test_%s not found" % routine, 0.0
    cmd = [exe, "-platform", "0", "-device", "0"] + (["-full_test"] if full else [])
    # Unbuffered, so that a binary killed at the timeout still shows how far it got.
    if shutil.which("stdbuf"):
        cmd = ["stdbuf", "-o0", "-e0"] + cmd
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc = "timeout"
    dt = time.monotonic() - t0
    with open(os.path.join(log_dir, routine + ".log"), "w") as f:
        f.write(ANSI.sub("", out))
    return (out, rc), None, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--icd-dir", required=True, help="folder of .icd files the loader may see")
    ap.add_argument("--expected", default=os.path.join(HERE, "clblast.expected-failures"))
    ap.add_argument("--routines", default="default",
                    help="comma-separated routines (xgemm,...), 'default' or 'all'")
    ap.add_argument("--timeout", type=int, default=240, help="per binary, seconds")
    ap.add_argument("--budget", type=int, default=780,
                    help="seconds for the whole run: binaries not started by then are reported "
                         "as skipped (budget), so ctest's own limit never cuts the summary off")
    ap.add_argument("--work-dir", default=None, help="logs go here (default: a temp folder)")
    ap.add_argument("--full", action="store_true", help="pass -full_test (much slower)")
    args = ap.parse_args()

    if args.routines == "default":
        routines = DEFAULT_ROUTINES
    elif args.routines == "all":
        routines = all_routines()
    else:
        routines = [r.strip() for r in args.routines.split(",") if r.strip()]
    if not all_routines():
        print("clblast: no clblast_test_* binary found (Debian package clblast-tests)")
        return 77  # ctest: skipped, shown as such

    work = args.work_dir or tempfile.mkdtemp(prefix="clblast-")
    os.makedirs(work, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="manifold-cache-", dir=work)
    env = expectations.manifold_env(os.path.abspath(args.icd_dir), cache)
    results, details = {}, {}
    total_t0 = time.monotonic()
    for routine in routines:
        left = args.budget - (time.monotonic() - total_t0)
        if left < 10:
            results[routine] = (expectations.SKIP, "not run: the suite's time budget is used up")
            continue
        run, err, dt = run_one(routine, env, min(args.timeout, int(left)), args.full, work)
        if run is None:
            results[routine] = (expectations.FAIL, err)
            continue
        out, rc = run
        parsed = parse(out)
        line = f"{routine:22s} {dt:6.1f}s  rc={rc}"
        if not parsed:
            results[routine] = (expectations.FAIL, f"no routine ran (rc={rc})")
            details[routine] = ANSI.sub("", out)
        for name, c in parsed:
            key = f"{routine}/{name}"
            nocheck = f", {c['nocheck']} not checkable" if c["nocheck"] else ""
            summary = (f"{c['pass']} passed, {c['fail']} wrong, {c['compile']} did not "
                       f"compile, {c['unsupported']} unsupported{nocheck}")
            line += f"  {name}:{c['pass']}/{c['fail'] + c['compile']}"
            if c["fail"] or c["compile"]:
                results[key] = (expectations.FAIL, summary)
            elif not c["done"]:
                results[key] = (expectations.FAIL, f"did not finish (rc={rc}): {summary}")
                details[key] = ANSI.sub("", out)
            elif c["pass"] == 0 and c["unsupported"]:
                results[key] = (expectations.SKIP, "precision not supported by the device")
            elif c["pass"] == 0:
                results[key] = (expectations.SKIP, "no checkable case: " + summary)
            else:
                results[key] = (expectations.PASS, summary)
        if parsed and rc != 0:
            # Killed or crashed: the precisions it never reached are failures too, not absent.
            results[f"{routine}/(rest)"] = (expectations.FAIL,
                                            f"binary ended (rc={rc}) before its last precisions")
        print(line, flush=True)
    print(f"clblast: {len(routines)} binaries in {time.monotonic() - total_t0:.0f}s; "
          f"logs in {work}")
    shutil.rmtree(cache, ignore_errors=True)
    return expectations.report("clblast", results, args.expected, details)


if __name__ == "__main__":
    sys.exit(main())
