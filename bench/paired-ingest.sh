#!/bin/bash
# Paired ingest runs (issue 39): `bench/paired-ingest.sh BASE_TREE [ROUNDS] > runs.jsonl` alternates
# `npm run bench -- ingest` on PostgreSQL for another checkout (BASE_TREE, e.g. a `git worktree` of
# the commit before, built with `npm run build`), this tree, and this tree with the evaluator off,
# ROUNDS times (default 3). Each line is the bench's JSON with "tree" (base, head, off) and "round"
# added. The servers run compiled (BENCH_FROM_DIST=1): run `npm run build` in both trees first.
# DATABASE_URL defaults to the local PostgreSQL.
set -euo pipefail
base=$(cd "$1" && pwd)
rounds=${2:-3}
head=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_FROM_DIST=1 BENCH_BACKENDS=postgres
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
for round in $(seq 1 "$rounds"); do
  for tree in base head off; do
    dir=$head
    [ "$tree" = base ] && dir=$base
    if [ "$tree" = off ]; then export BENCH_NO_EVALUATOR=1; else unset BENCH_NO_EVALUATOR; fi
    (cd "$dir" && npm run --silent bench -- ingest 2>/dev/null) | grep '"bench"' |
      sed "s/^{/{\"tree\":\"$tree\",\"round\":$round,/"
  done
done
