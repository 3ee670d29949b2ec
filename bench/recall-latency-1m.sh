#!/usr/bin/env bash
# The 1M-memory Recall bench of docs/recall.md ("A million memories in one bank (PostgreSQL)"),
# as one command sequence against a PostgreSQL server sized for it (docs/deploy.md: shared_buffers
# at least the HNSW index, 3 GB here; maintenance_work_mem 2 GB for the index build).
#
#   MNEMO_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres bench/recall-latency-1m.sh build
#   MNEMO_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres bench/recall-latency-1m.sh measure
#
# build: loads 100k memories with bench/recall-latency.ts (--load-only), then copies them nine times
# with bench/recall-latency-1m.sql (part 1, then parts 2 and 3 at the same time), then VACUUM ANALYZE.
# measure: loads the HNSW index and the memories table into shared_buffers (pg_prewarm), runs
# bench/recall-latency.ts at 1M (c=1 and c=16, floors) and bench/recall-plans.ts (EXPLAIN of the
# channels statement, vector recall@10), and prints shared buffers hit and read over the run.
# MNEMO_1M_DATABASE names the database (mnemo_1m).
set -euo pipefail
cd "$(dirname "$0")/.."
admin=${MNEMO_BENCH_DATABASE_URL:?set MNEMO_BENCH_DATABASE_URL to an admin connection string}
db=${MNEMO_1M_DATABASE:-mnemo_1m}
url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.toString())' "$admin" "$db")
sql() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }
# One "-- Part N:" section of the SQL file.
part() { awk -v n="$1:" '/^-- Part /{p = ($3 == n)} p' bench/recall-latency-1m.sql | sql; }
stamp() { echo "$(date -u +%H:%M:%S) $*" >&2; }

build() {
  stamp "loading 100k memories"
  npx tsx bench/recall-latency.ts --sizes 1000000 --engines postgres --database "$db" --load-only 100000
  sql -c 'VACUUM ANALYZE memories, memory_terms, bank_terms'
  stamp "part 1"; part 1
  stamp "parts 2 and 3"; part 2 & p2=$!; part 3 & p3=$!
  wait "$p2"; wait "$p3"
  sql -c 'VACUUM ANALYZE'
  sql -Atc "SELECT 'memories ' || count(*) || ', HNSW index ' || pg_size_pretty(pg_relation_size('memories_hnsw_100')) FROM memories"
  stamp "built"
}

buffers() {
  sql -Atc "SELECT 'shared buffers hit ' || blks_hit || ', read ' || blks_read FROM pg_stat_database WHERE datname = current_database()"
}

measure() {
  sql -c 'CREATE EXTENSION IF NOT EXISTS pg_prewarm'
  sql -Atc "SELECT 'prewarmed ' || pg_prewarm('memories_hnsw_100') || ' + ' || pg_prewarm('memories') || ' pages'"
  buffers
  stamp "recall-latency"
  npx tsx bench/recall-latency.ts --sizes 1000000 --engines postgres --database "$db"
  buffers
  stamp "recall-plans"
  npx tsx bench/recall-plans.ts --database-url "$url"
  buffers
}

case "${1:-}" in
  build) build ;;
  measure) measure ;;
  all) build; measure ;;
  *) echo "usage: $0 build|measure|all" >&2; exit 2 ;;
esac
