#!/usr/bin/env bash
# The repository's own rules, checked on the source tree (no build needed):
#   - README.md stays a manual: at most 220 lines (the details live in docs/);
#   - code, comments and program output describe the code, not its history: no issue numbers and
#     no dates in the sources of the platform, its tools, benchmarks, scripts and tests
#     (bench/results/ is the dated record of measurements);
#   - README.md and docs/ carry no issue numbers or dates either, except in the names of the
#     bench/results/ files they link to (the dated record of measurements).
# Usage: hygiene_check.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: hygiene_check.sh SOURCE_DIR}
cd "$root" || exit 2
failed=0
fail() { echo "FAIL: $*"; failed=1; }

readme_limit=220
readme_lines=$(wc -l < README.md)
[ "$readme_lines" -le "$readme_limit" ] ||
  fail "README.md has $readme_lines lines (at most $readme_limit: move details into docs/)"

issue='[Ii]ssues? #?[0-9]+'
date='20[0-9]{2}-[0-1][0-9]-[0-3][0-9]'
# Links into bench/results/ name dated files: those paths are dropped before looking.
without_results_links() { sed -E 's#bench/results/[^ )`"]*##g'; }
source_dirs=(api core scheduler svm backends compiler server settings tools bench scripts tests)
if hits=$(grep -rnE --exclude-dir=results "$issue|$date" "${source_dirs[@]}" |
          without_results_links | grep -E "$issue|$date"); then
  fail "issue numbers or dates in code (say what the code does and why instead):"
  echo "$hits"
fi

docs=(README.md)
[ -d docs ] && while IFS= read -r f; do docs+=("$f"); done < <(find docs -name '*.md' | sort)
for f in "${docs[@]}"; do
  if hits=$(without_results_links < "$f" | grep -nE "$issue|$date"); then
    fail "issue numbers or dates in $f (outside links to bench/results/):"
    echo "$hits"
  fi
done

[ $failed = 0 ] && echo "hygiene: README.md $readme_lines lines, no issue numbers or dates"
exit $failed
