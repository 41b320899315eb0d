package dev.relock.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign end to end in its quick mode (run.sh --quick): every scenario for a few seconds with real worker JVMs and real
 * redis-servers, so CI shows that run.sh still works and that the checker's verdicts hold on what the
 * workers actually log. The full run is relock-faults/run.sh.
 */
class CampaignSmokeTest {

    @Test
    void aShortCampaignKeepsEveryClaimAndWritesTheReport(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("RELIABILITY.md");
        List<ReliabilityReport.Row> rows = Campaign.run("--quick", "--seed", "15", "--out", report.toString(),
                "--work", dir.toString());
        assertThat(rows).extracting(row -> row.scenario().name())
                .containsExactlyElementsOf(Scenario.all().stream().map(Scenario::name).toList());
        for (ReliabilityReport.Row row : rows) {
            Findings found = row.findings();
            assertThat(row.passed()).as("%s: %s", row.scenario().name(), found.summary()).isTrue();
            assertThat(found.criticalSections()).as("%s: sections", row.scenario().name()).isPositive();
            if (row.scenario().periodMillis() > 0) {
                assertThat(found.faults()).as("%s: faults injected", row.scenario().name()).isPositive();
            }
        }
        assertThat(Files.readString(report)).contains("<a id=\"fault-client-kill-9\"></a>client kill -9", "seed 15");
        assertThat(dir.resolve("reliability/unavailability.png")).isNotEmptyFile();
    }
}
