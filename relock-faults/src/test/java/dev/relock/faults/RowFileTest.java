package dev.relock.faults;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RowFileTest {

    private static ReliabilityReport.Row row(String scenarioName, String commit, int sections) {
        Scenario<?> scenario = Scenario.all().stream().filter(s -> s.name().equals(scenarioName)).findFirst()
                .orElseThrow();
        Findings findings = Histories.check(
                "100 w1.1 ACQUIRED 7 campaign",
                "110 w1.1 PRODUCED 7 a",
                "120 coordinator ROUND_SET 3 2",
                "200 w1.1 RELEASING 7");
        Findings counted = new Findings(sections, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                findings.queue(), findings.latch());
        return new ReliabilityReport.Row(scenario, "one Redis, without persistence", counted,
                new ReliabilityReport.Measurement(commit, 15, 120));
    }

    @Test
    void rowsReadBackAsWritten(@TempDir Path dir) throws IOException {
        Path file = RowFile.beside(dir.resolve("RELIABILITY.md"));
        List<ReliabilityReport.Row> rows = List.of(row("none (baseline)", "abc1234", 50),
                row("semaphore: client kill -9", "def5678+changes", 60));

        RowFile.write(file, rows);

        assertThat(file).isEqualTo(dir.resolve("reliability/rows.tsv"));
        assertThat(RowFile.read(file)).isEqualTo(rows);
    }

    @Test
    void measuredRowsReplaceTheirScenariosAndKeepTheOthersInTheCampaignsOrder() {
        List<ReliabilityReport.Row> kept = List.of(row("semaphore: client kill -9", "old", 1),
                row("none (baseline)", "old", 2), row("client kill -9", "old", 3));
        List<ReliabilityReport.Row> measured = List.of(row("client kill -9", "new", 4));

        List<ReliabilityReport.Row> merged = RowFile.merge(kept, measured);

        assertThat(merged).extracting(r -> r.scenario().name() + " " + r.measured().commit())
                .containsExactly("none (baseline) old", "client kill -9 new", "semaphore: client kill -9 old");
    }

    @Test
    void writingTheReportAgainKeepsItsPartWrittenByHand(@TempDir Path dir) throws IOException {
        Path report = dir.resolve("RELIABILITY.md");
        List<ReliabilityReport.Row> rows = List.of(row("none (baseline)", "abc1234", 50));
        ReliabilityReport.write(report, rows);
        Files.writeString(report, Files.readString(report) + "\n" + ReliabilityReport.HAND_WRITTEN
                + "\n\n- a bug the campaign found, by hand\n");

        ReliabilityReport.write(report, List.of(row("none (baseline)", "def5678", 60)));

        assertThat(Files.readString(report)).contains("`def5678`, seed 15").doesNotContain("`abc1234`")
                .endsWith(ReliabilityReport.HAND_WRITTEN + "\n\n- a bug the campaign found, by hand\n");
    }

    @Test
    void aRowOfAScenarioGoneOrOfAnotherShapeIsDropped(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("rows.tsv");
        RowFile.write(file, List.of(row("none (baseline)", "abc1234", 50)));
        String good = Files.readString(file, UTF_8).strip();
        Files.write(file, List.of(good, good.replace("none (baseline)", "a fault no longer run"),
                good + "\t99", good.substring(0, good.lastIndexOf('\t'))), UTF_8);

        assertThat(RowFile.read(file)).extracting(r -> r.scenario().name()).containsExactly("none (baseline)");
        assertThat(RowFile.read(dir.resolve("missing.tsv"))).isEmpty();
    }
}
