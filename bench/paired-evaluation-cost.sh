#!/bin/bash
# Paired evaluation-cost runs (issue 39): `bench/paired-evaluation-cost.sh BASE_TREE [PAIRS] >
# runs.jsonl` alternates bench/evaluation-cost.ts in another checkout (BASE_TREE, e.g. a `git
# worktree` of the commit before, with this tree's bench/evaluation-cost.ts copied in) and in
# this tree, PAIRS times (default 3), each with BENCH_ROUNDS rounds (default 3) of both loads.
# Each line is the bench's JSON with "tree" (base, head, and memory: this tree judging the calls
# its in-process ingest handed over, BENCH_FROM_MEMORY=1) and "pair" added; the first round of
# each run warms the JIT. Both trees evaluate with their compiled dist/: run `npm run build` in
# both first. DATABASE_URL defaults to the local PostgreSQL. BASE_FROM_MEMORY=1 runs the base tree
# judging from memory too (a base that has BENCH_FROM_MEMORY: the third round's and later).
set -euo pipefail
base=$(cd "$1" && pwd)
pairs=${2:-3}
head=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_FROM_DIST=1
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
for pair in $(seq 1 "$pairs"); do
  for tree in base head memory; do
    dir=$head
    [ "$tree" = base ] && dir=$base
    memory=0
    [ "$tree" = memory ] && memory=1
    [ "$tree" = base ] && [ "${BASE_FROM_MEMORY:-0}" = 1 ] && memory=1
    (cd "$dir" && BENCH_FROM_MEMORY=$memory npx tsx bench/evaluation-cost.ts 2>/dev/null) | grep '"bench"' |
      sed "s/^{/{\"tree\":\"$tree\",\"pair\":$pair,/"
  done
done
