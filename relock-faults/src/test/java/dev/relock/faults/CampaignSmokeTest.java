package dev.relock.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign end to end in its quick mode (run.sh --quick): every quick scenario (each workload under one fault, so
 * each of the checkers reads real histories, and the exclusive lock on one Redis, Sentinel, Cluster and Redlock) for a
 * few seconds with real worker JVMs and real redis-servers, so CI shows that run.sh still works and that the checkers'
 * verdicts hold on what the workers actually log. The full run is relock-faults/run.sh.
 */
@Tag("redis")
class CampaignSmokeTest {

    @Test
    void aShortCampaignKeepsEveryClaimAndWritesTheReport(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("RELIABILITY.md");
        List<ReliabilityReport.Row> rows = Campaign.run("--quick", "--seed", "15", "--out", report.toString(),
                "--work", dir.toString());
        assertThat(rows).extracting(row -> row.scenario().name())
                .containsExactlyElementsOf(Scenario.all().stream().filter(Scenario::quick).map(Scenario::name).toList());
        assertThat(rows).extracting(row -> row.scenario().workload()).contains(Workload.values());
        for (ReliabilityReport.Row row : rows) {
            Findings found = row.findings();
            String name = row.scenario().name();
            assertThat(row.passed()).as("%s: %s", name, found.summary()).isTrue();
            switch (row.scenario().workload()) {
                case CONDITION -> assertThat(found.queue().taken()).as("%s: items taken", name).isPositive();
                case LATCH -> {
                    assertThat(found.latch().opened()).as("%s: rounds opened", name).isPositive();
                    assertThat(found.latch().operations()).as("%s: operations", name).isPositive();
                    assertThat(found.latch().wakeups()).as("%s: waiters woken", name).isPositive();
                }
                default -> assertThat(found.criticalSections()).as("%s: sections", name).isPositive();
            }
            if (row.scenario().periodMillis() > 0) {
                assertThat(found.faults()).as("%s: faults injected", row.scenario().name()).isPositive();
            }
        }
        assertThat(Files.readString(report)).contains("<a id=\"fault-client-kill-9\"></a>client kill -9", "seed 15",
                "<a id=\"fault-semaphore-client-kill-9\"></a>semaphore: client kill -9");
        assertThat(dir.resolve("reliability/unavailability.png")).isNotEmptyFile();
    }
}
