#!/usr/bin/env bash
# Runs relock's fault campaign (issue 15) and writes docs/RELIABILITY.md.
#
#   relock-faults/run.sh            full run: 120 s per scenario (240 s for the guarded Sentinel master kill)
#   relock-faults/run.sh --quick    5 s per scenario (what CI's smoke test runs, about 3.5 min)
#
# Other options go to the campaign: --seconds N, --seed S (replays a printed seed's schedule),
# --only TEXT, --out FILE, --work DIR. It starts its own redis-servers on free loopback ports
# (never a Redis you run) and its own worker JVMs, and kills or pauses only those.
set -euo pipefail
cd "$(dirname "$0")/.."

mvn -B -q -pl relock-faults -am package -DskipTests
classpath="relock-faults/target/classes:$(cat relock-faults/target/classpath.txt)"
exec java -cp "$classpath" dev.relock.faults.Campaign "$@"
