#!/usr/bin/python3
"""piglit's OpenCL suite (Debian package piglit, profile "cl") against one OpenCL platform.

Runs `piglit run cl` with only the given ICD folder visible, reads piglit's JSON results and
compares them with tests/thirdparty/piglit.expected-failures. piglit's statuses map to:
  pass, warn                    -> passed
  fail, crash, timeout, incomplete, dmesg-* -> failed
  skip, notrun                  -> skipped (counted and listed)

Subsets (--subset):
  ci    (default) every API, custom and program test, every hand-written program@execute test,
        and the generated builtin/store/vload/vstore tests minus the slowest families (see
        SUBSET_CI_EXCLUDE below and tests/thirdparty/README.md for the timing behind it).
  full  the whole cl profile (about 710 tests).

Usage: run_piglit.py --icd-dir DIR [--subset ci|full] [--jobs N] [--timeout S] [--work-dir DIR]
                     [--expected FILE] [--platform-name NAME]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expectations  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Regular expressions (piglit -x, matched against the lower-case test name) left out of the CI
# subset. Keep this list short and say why each entry is there.
SUBSET_CI_EXCLUDE = [
]

STATUS = {
    "pass": expectations.PASS, "warn": expectations.PASS,
    "skip": expectations.SKIP, "notrun": expectations.SKIP,
}


def piglit_exe():
    return shutil.which("piglit") or ("/usr/bin/piglit" if os.path.exists("/usr/bin/piglit")
                                      else None)


def load_results(results_dir):
    """piglit writes results.json at the end; a run cut short leaves tests/<n>.json files."""
    final = os.path.join(results_dir, "results.json")
    tests = {}
    if os.path.exists(final):
        with open(final) as f:
            tests = json.load(f).get("tests", {})
    else:
        tdir = os.path.join(results_dir, "tests")
        for fn in os.listdir(tdir) if os.path.isdir(tdir) else []:
            try:
                with open(os.path.join(tdir, fn)) as f:
                    tests.update(json.load(f))
            except (OSError, ValueError):
                pass
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--icd-dir", required=True, help="folder of .icd files the loader may see")
    ap.add_argument("--expected", default=os.path.join(HERE, "piglit.expected-failures"))
    ap.add_argument("--subset", choices=["ci", "full"], default="ci")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="per test, seconds")
    ap.add_argument("--work-dir", default=None, help="piglit's results go here")
    ap.add_argument("--include", action="append", default=[],
                    help="extra piglit -t regex (only matching tests run)")
    args = ap.parse_args()

    exe = piglit_exe()
    if not exe:
        print("piglit: not installed (Debian package piglit)")
        return 77  # ctest: skipped, shown as such
    work = args.work_dir or tempfile.mkdtemp(prefix="piglit-")
    os.makedirs(work, exist_ok=True)
    results_dir = os.path.join(work, "results")
    cache = tempfile.mkdtemp(prefix="manifold-cache-", dir=work)
    env = expectations.manifold_env(os.path.abspath(args.icd_dir), cache)
    env["PIGLIT_COMPRESSION"] = "none"
    cmd = [exe, "run", "cl", "-o", "-b", "json", "-l", "dummy", "-j", str(args.jobs),
           "--timeout", str(args.timeout), "-n", "manifold-" + args.subset]
    if args.subset == "ci":
        for rx in SUBSET_CI_EXCLUDE:
            cmd += ["-x", rx]
    for rx in args.include:
        cmd += ["-t", rx]
    cmd.append(results_dir)
    print("piglit: " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    dt = time.monotonic() - t0
    if p.returncode != 0:
        print(p.stdout[-4000:])
        print(f"piglit: exited with {p.returncode}")
    tests = load_results(results_dir)
    results, details = {}, {}
    for name, r in tests.items():
        status = STATUS.get(r.get("result"), expectations.FAIL)
        msg = r.get("result", "?")
        if status != expectations.PASS:
            out = (r.get("out") or "") + (r.get("err") or "")
            failing = [k for k, v in (r.get("subtests") or {}).items()
                       if k != "__type__" and v not in ("pass", "warn", "skip")]
            if failing:
                msg += ": subtests " + ", ".join(failing[:4]) + (" ..." if len(failing) > 4
                                                                   else "")
            details[name] = out
        results[name] = (status, msg)
    print(f"piglit: {len(tests)} tests in {dt:.0f}s; results in {results_dir}")
    shutil.rmtree(cache, ignore_errors=True)
    rc = expectations.report("piglit", results, args.expected, details)
    return rc if p.returncode == 0 or rc != 0 else 1


if __name__ == "__main__":
    sys.exit(main())
