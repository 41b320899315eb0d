#!/usr/bin/env bash
# Runs relock's fault campaign (issue 15) and writes docs/RELIABILITY.md.
#
#   relock-faults/run.sh            full run: 120 s per scenario (240 s for the guarded Sentinel master kill)
#   relock-faults/run.sh --quick    5 s per scenario, the scenarios CI's smoke test runs (each workload under one
#                                   fault, and the exclusive lock on each kind of servers: 10 scenarios)
#   relock-faults/run.sh --stale    lists the protocol files (relock-core's main sources and Lua scripts) changed
#                                   since the oldest row of docs/RELIABILITY.md was measured; exits 1 if any
#
# Other options go to the campaign: --seconds N, --seed S (replays a printed seed's schedule),
# --only TEXT (runs the scenarios whose name contains it and merges their rows into the report), --skip TEXT
# (repeatable: leaves out the scenarios whose name contains it, and merges as --only does), --out FILE,
# --work DIR. It starts its own redis-servers on free loopback ports (never a Redis you run) and its own worker
# JVMs, and kills or pauses only those.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--stale" ]; then
  rows=docs/reliability/rows.tsv
  if [ -f "$rows" ]; then
    commits=$(cut -f2 "$rows" | sed 's/+changes$//' | sort -u)
  else # a report written before rows kept their commits names the one it was run at
    commits=$(grep -o 'main at [0-9a-f]\{7,\}' docs/RELIABILITY.md | awk '{print $3}' | sort -u)
  fi
  oldest=""
  oldest_time=""
  for commit in $commits; do
    if ! time=$(git log -1 --format=%ct "$commit" -- 2>/dev/null) || [ -z "$time" ]; then
      echo "a row was measured at $commit, which this repository does not have"
      continue
    fi
    if [ -z "$oldest_time" ] || [ "$time" -lt "$oldest_time" ]; then
      oldest=$commit
      oldest_time=$time
    fi
  done
  if [ -z "$oldest" ]; then
    echo "no row of docs/RELIABILITY.md names a commit of this repository: every row is stale" >&2
    exit 2
  fi
  changed=$(git diff --name-only "$oldest" -- relock-core/src/main)
  if [ -z "$changed" ]; then
    echo "fresh: no protocol file changed since $oldest, the oldest row's commit"
    exit 0
  fi
  echo "stale: protocol files changed since $oldest, the oldest row's commit:"
  echo "$changed" | sed 's/^/  /'
  exit 1
fi

mvn -B -q -pl relock-faults -am package -DskipTests
classpath="relock-faults/target/classes:$(cat relock-faults/target/classpath.txt)"
exec java -cp "$classpath" dev.relock.faults.Campaign "$@"
