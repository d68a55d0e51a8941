#!/usr/bin/env bash
# Builds every package, typechecks sources and tests, checks the architecture's dependency rules, runs every test project once
# and prints "N passed, M failed" (the line CI reads). Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
rm -f .vitest-report.json
status=0
pnpm turbo run build --output-logs=errors-only || status=1
if [ "$status" -eq 0 ]; then
  node tooling/scripts/check-boundaries.mjs || status=1
  pnpm turbo run typecheck --output-logs=errors-only || status=1
fi
if [ "$status" -eq 0 ]; then
  pnpm exec vitest run --reporter=default --reporter=json --outputFile.json=.vitest-report.json || status=1
fi
node tooling/scripts/vitest-summary.mjs .vitest-report.json || status=1
exit "$status"
