package dev.relock.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How the parent turns the workers' reports into the numbers of the table. */
class DemoRunResultTest {

    private static final Workload TWO_LOCKS = new Workload(2, 1, 2, Duration.ofSeconds(1));

    @Test
    void handoffIsMeasuredFromOneWorkersReleaseToTheNextAcquisitionOfTheLockByAnother() {
        List<Acquisition> acquisitions = new ArrayList<>(List.of(
                // lock 0: worker 0, then worker 1 after 300 µs, then worker 1 again (not a handoff between workers)
                hold(0, 0, 1_000, 1_100, 1),
                hold(1, 0, 1_400, 1_500, 2),
                hold(1, 0, 1_600, 1_700, 3),
                // lock 1: worker 1, then worker 0 after 100 µs; listed out of order on purpose
                hold(0, 1, 2_300, 2_400, 5),
                hold(1, 1, 2_000, 2_200, 4)));

        RunResult result = RunResult.locked(TWO_LOCKS, 1_000_000, 5, 5, new long[] {2, 3}, acquisitions, 0, 0);

        assertThat(result.handoff().count()).isEqualTo(2);
        assertThat(result.handoff().p50Micros()).isEqualTo(100);
        assertThat(result.handoff().maxMicros()).isEqualTo(300);
        assertThat(result.overlappingHolds()).isZero();
        assertThat(result.acquireWait().count()).isEqualTo(5);
        assertThat(result.lostUpdates()).isZero();
        assertThat(result.passed()).isTrue();
        assertThat(result.throughputPerSecond()).isEqualTo(5.0);
        assertThat(result.fewestPerWorker()).isEqualTo(2);
        assertThat(result.mostPerWorker()).isEqualTo(3);
    }

    @Test
    void holdsThatOverlapAreCountedNotTakenForHandoffs() {
        List<Acquisition> acquisitions = new ArrayList<>(List.of(
                hold(0, 0, 1_000, 2_000, 1),
                hold(1, 0, 1_500, 2_500, 2)));

        RunResult result = RunResult.locked(TWO_LOCKS, 1_000_000, 2, 2, new long[] {1, 1}, acquisitions, 0, 0);

        assertThat(result.overlappingHolds()).isEqualTo(1);
        assertThat(result.handoff().count()).isZero();
    }

    @Test
    void lostUpdatesOrFencingViolationsFailTheRun() {
        assertThat(RunResult.locked(TWO_LOCKS, 1, 10, 9, new long[] {5, 5}, List.of(), 0, 0).passed()).isFalse();
        assertThat(RunResult.locked(TWO_LOCKS, 1, 10, 10, new long[] {5, 5}, List.of(), 1, 0).passed()).isFalse();
    }

    @Test
    void percentilesAreNearestRank() {
        long[] values = new long[200];
        for (int i = 0; i < values.length; i++) {
            values[i] = values.length - i; // 200 .. 1, unsorted
        }
        Latencies latencies = Latencies.of(values);
        assertThat(latencies.p50Micros()).isEqualTo(100);
        assertThat(latencies.p99Micros()).isEqualTo(198);
        assertThat(latencies.maxMicros()).isEqualTo(200);
        assertThat(Latencies.of(new long[0])).isEqualTo(Latencies.NONE);
    }

    @Test
    void tableShowsBothRunsSideBySideWithDashesWhereAMeasureDoesNotApply() {
        RunResult locked = RunResult.locked(TWO_LOCKS, 2_000_000, 1_000, 1_000, new long[] {480, 520},
                List.of(hold(0, 0, 1_000, 1_420, 1), hold(1, 0, 2_000, 2_100, 2)), 0, 0);
        RunResult unlocked = RunResult.unlocked(TWO_LOCKS, 2_000_000, 20_000, 12_000, new long[] {9_000, 11_000});

        String table = ReportTable.render(List.of(locked, unlocked));
        Map<String, List<String>> rows = TableRows.parse(table);

        assertThat(table.lines().findFirst().orElseThrow()).contains("with lock", "without lock");
        assertThat(rows.get("acquisitions")).containsExactly("1,000", "-");
        assertThat(rows.get("increments (GET then SET)")).containsExactly("1,000", "20,000");
        assertThat(rows.get("throughput")).containsExactly("500/s", "10,000/s");
        assertThat(rows.get("handoff latency p50")).containsExactly("0.58 ms", "-");
        assertThat(rows.get("fairness: min / max per worker")).containsExactly("480 / 520", "9,000 / 11,000");
        assertThat(rows.get("lost updates")).containsExactly("0", "8,000 (40%)");
        assertThat(rows.get("fencing-order violations")).containsExactly("0", "-");
        // columns line up: every row is as wide as the header
        assertThat(table.lines().filter(line -> !line.isEmpty()).map(String::length).distinct()).hasSize(1);
    }

    @Test
    void durationsReadLikePeopleWriteThem() {
        assertThat(ReportTable.duration(420)).isEqualTo("0.42 ms");
        assertThat(ReportTable.duration(12_340)).isEqualTo("12.3 ms");
        assertThat(ReportTable.duration(250_000)).isEqualTo("250 ms");
        assertThat(ReportTable.duration(1_250_000)).isEqualTo("1.25 s");
    }

    private static Acquisition hold(int worker, int lock, long acquiredAt, long releasedAt, long token) {
        return new Acquisition(worker, 0, lock, token, 10, acquiredAt, releasedAt, false);
    }
}
