#!/usr/bin/env bash
# Runs relock's benchmarks (issue 4) and writes docs/BENCHMARKS.md and docs/bench/*.png.
#
#   relock-bench/run.sh            full run, about 10 minutes
#   relock-bench/run.sh --quick    one-minute smoke run (one short repeat, 5,000 held locks only)
#
# Other options go to the harness: --no-jmh, --wait-quiet MINUTES (wait for a 1-minute load below
# 0.7 first), --only S1,S2,S3,S3p,S4,S5,S5R,S6,ceilings,jmh,protocol,scaling (S5R: Redlock over 5 servers;
# protocol: an uncontended pair's Redis cost, relock's scripts against lighter protocols;
# scaling: connections, many waiters, many holders, Cluster of 1-3 masters; alone, it replaces that section of
# docs/BENCHMARKS.md), --out DIR.
# It builds what it measures, starts one private redis-server (and five more for Redlock) on free
# loopback ports (never a Redis you run), measures every subject against them, and stops them. Needs JDK 17+ and Maven; redis-server
# as for the tests (RELOCK_REDIS_SERVER, PATH, or the embedded binary); redis-benchmark is optional.
set -euo pipefail
cd "$(dirname "$0")/.."

load_before_build="$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || true)"
echo "== building relock and the harness"
mvn -B -q -pl relock-bench/harness -am package -DskipTests

classpath="relock-bench/harness/target/classes:$(cat relock-bench/harness/target/classpath.txt)"
exec java -cp "$classpath" -Drelock.bench.worktree="$PWD" -Drelock.bench.loadBeforeBuild="$load_before_build" \
  dev.relock.bench.BenchMain "$@"
