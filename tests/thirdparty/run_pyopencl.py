#!/usr/bin/python3
"""Runs tests/thirdparty/pyopencl_test.py (pytest) against one OpenCL platform and compares the
outcome with tests/thirdparty/pyopencl.expected-failures.

pyopencl's own on-disk kernel cache is turned off (PYOPENCL_NO_CACHE) and Manifold's program
cache points at a fresh folder, so every kernel is really compiled.

Usage: run_pyopencl.py --icd-dir DIR [--platform-name NAME] [--timeout S] [--work-dir DIR]
                       [-k EXPR]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expectations  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--icd-dir", required=True)
    ap.add_argument("--expected", default=os.path.join(HERE, "pyopencl.expected-failures"))
    ap.add_argument("--platform-name", default="Manifold",
                    help="the platform the loader must show (checked by a test)")
    ap.add_argument("--timeout", type=int, default=120, help="per test, seconds")
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("-k", default=None, help="pytest -k expression")
    args = ap.parse_args()

    for mod in ("pytest", "pyopencl", "numpy"):
        try:
            __import__(mod)
        except ImportError:
            print(f"pyopencl: {sys.executable} cannot import {mod} "
                  "(Debian packages python3-pyopencl python3-numpy python3-pytest)")
            return 77  # ctest: skipped, shown as such
    work = args.work_dir or tempfile.mkdtemp(prefix="pyopencl-")
    os.makedirs(work, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="manifold-cache-", dir=work)
    env = expectations.manifold_env(os.path.abspath(args.icd_dir), cache)
    env["PYOPENCL_NO_CACHE"] = "1"
    env["PYOPENCL_CTX"] = "0"
    env["THIRDPARTY_PLATFORM"] = args.platform_name
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["THIRDPARTY_TEST_TIMEOUT"] = str(args.timeout)
    test_file = os.path.join(HERE, "pyopencl_test.py")
    results, details = {}, {}
    t0 = time.monotonic()
    # A test that crashes the process or hangs (the test file's watchdog then ends the process)
    # is recorded as failed, and pytest starts again without the tests already done.
    for attempt in range(1, 50):
        junit = os.path.join(work, f"pyopencl-junit-{attempt}.xml")
        cmd = [sys.executable, "-m", "pytest", "-v", "-rs", "--no-header", "-p",
               "no:cacheprovider", "--junitxml", junit, test_file]
        if args.k:
            cmd += ["-k", args.k]
        for done in results:
            cmd += ["--deselect", f"{test_file}::{done}"]
        p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        with open(os.path.join(work, f"pytest-{attempt}.log"), "w") as f:
            f.write(p.stdout)
        if os.path.exists(junit):
            for tc in ET.parse(junit).getroot().iter("testcase"):
                name = tc.get("name")
                fail = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
                skip = tc.find("skipped")
                if fail is not None:
                    results[name] = (expectations.FAIL, (fail.get("message") or "")[:160])
                    details[name] = fail.text or ""
                elif skip is not None:
                    results[name] = (expectations.SKIP, (skip.get("message") or "")[:160])
                else:
                    results[name] = (expectations.PASS, f"{float(tc.get('time', 0)):.1f}s")
        if p.returncode in (0, 1, 5):  # 1: some tests failed; 5: nothing left to run
            break
        # The process died: take what -v printed, the test without an outcome is the culprit.
        last = None
        for line in p.stdout.splitlines():
            if "pyopencl_test.py::" not in line:
                continue
            node = line.split("pyopencl_test.py::", 1)[1].split()[0]
            outcome = line.split()[-1] if len(line.split()) > 1 else ""
            if "PASSED" in line:
                results.setdefault(node, (expectations.PASS, ""))
            elif "SKIPPED" in line:
                results.setdefault(node, (expectations.SKIP, outcome))
            elif "FAILED" in line or "ERROR" in line:
                results.setdefault(node, (expectations.FAIL, "failed"))
            else:
                last = node
        if last is None or last in results:
            print(p.stdout[-6000:])
            print(f"pyopencl: pytest exited with {p.returncode} outside any test")
            results["<pytest>"] = (expectations.FAIL, f"pytest exited with {p.returncode}")
            break
        why = "timed out" if "Timeout (" in p.stdout else f"crashed (exit {p.returncode})"
        results[last] = (expectations.FAIL, why)
        details[last] = p.stdout[-3000:]
        print(f"pyopencl: {last} {why}; running the remaining tests again", flush=True)
    dt = time.monotonic() - t0
    print(f"pyopencl: {len(results)} tests in {dt:.0f}s; logs in {work}")
    timed = sorted(((float(r[1][:-1]), n) for n, r in results.items()
                    if r[0] == expectations.PASS and r[1].endswith("s")), reverse=True)[:5]
    if timed:
        print("slowest: " + ", ".join(f"{n} {t:.1f}s" for t, n in timed))
    shutil.rmtree(cache, ignore_errors=True)
    return expectations.report("pyopencl", results, args.expected, details)


if __name__ == "__main__":
    sys.exit(main())
