"""Shared by the third-party suite runners: expected-failures lists, result comparison, summary.

An expected-failures file (tests/thirdparty/<suite>.expected-failures) lists one test per line:

    <test name>    # <one-line reason>

Blank lines and lines starting with '#' are comments. Every entry needs a reason.

Outcome of a run, per test: pass, fail, or skip. Against the list:
  - fail, not listed         -> NEW FAILURE (the run fails)
  - fail, listed             -> expected failure
  - pass, listed             -> NEW PASS (reported, so the list can be tightened; the run passes)
  - skip                     -> counted and listed, never silent
  - listed but not run       -> reported as stale (the run passes)
"""

import os
import sys

PASS, FAIL, SKIP = "pass", "fail", "skip"


def load_expected(path):
    """Returns {test name: reason}. Raises ValueError on an entry without a reason."""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, sep, reason = line.partition(" #")
            name, reason = name.strip(), reason.strip()
            if not sep or not reason:
                raise ValueError(f"{path}:{lineno}: entry without a reason: {line!r}")
            if name in expected:
                raise ValueError(f"{path}:{lineno}: duplicate entry {name!r}")
            expected[name] = reason
    return expected


def report(suite, results, expected_path, details=None, out=sys.stdout):
    """results: {test name: (status, short message)}; returns the process exit code.

    details: optional {test name: longer text} printed for new failures.
    """
    expected = load_expected(expected_path)
    details = details or {}
    new_fail, xfail, new_pass, skipped, passed = [], [], [], [], []
    for name in sorted(results):
        status, msg = results[name]
        if status == PASS:
            (new_pass if name in expected else passed).append(name)
        elif status == SKIP:
            skipped.append(name)
        else:
            (xfail if name in expected else new_fail).append(name)
    stale = sorted(n for n in expected if n not in results)

    def section(title, names, with_msg=True, with_reason=False):
        if not names:
            return
        print(f"\n{title} ({len(names)}):", file=out)
        for n in names:
            line = f"  {n}"
            if with_msg and results.get(n, (None, ""))[1]:
                line += f"  -- {results[n][1]}"
            if with_reason:
                line += f"  [listed: {expected[n]}]"
            print(line, file=out)

    section("Skipped", skipped)
    section("Expected failures", xfail, with_msg=False, with_reason=True)
    section("NEW PASSES: remove them from " + os.path.basename(expected_path), new_pass,
            with_msg=False)
    section("Listed in " + os.path.basename(expected_path) + " but not run", stale, False)
    if new_fail:
        print(f"\nNEW FAILURES ({len(new_fail)}):", file=out)
        for n in new_fail:
            print(f"  {n}  -- {results[n][1]}", file=out)
            if n in details and details[n]:
                for dl in details[n].rstrip().splitlines()[-25:]:
                    print(f"      | {dl}", file=out)
    total = len(results)
    print(f"\n== {suite}: {total} tests: {len(passed) + len(new_pass)} passed, "
          f"{len(xfail) + len(new_fail)} failed ({len(xfail)} expected, {len(new_fail)} new), "
          f"{len(skipped)} skipped, {len(new_pass)} new passes, {len(stale)} stale entries",
          file=out)
    if total == 0:
        print(f"== {suite}: FAILED: no test ran", file=out)
        return 1
    if new_fail:
        print(f"== {suite}: FAILED: {len(new_fail)} new failures", file=out)
        return 1
    print(f"== {suite}: OK", file=out)
    return 0


def manifold_env(icd_dir, cache_dir=None):
    """The environment for a third-party program: only the ICD folder icd_dir is visible."""
    env = dict(os.environ)
    env["OCL_ICD_VENDORS"] = icd_dir
    env.pop("OPENCL_VENDOR_PATH", None)
    if cache_dir:
        env["MANIFOLD_CACHE_DIR"] = cache_dir
    return env
