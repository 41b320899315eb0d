package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine.TypeConversionException;

/** How durations read on the command line and in the tables, and owners in the tables (no Redis, no process). */
class DurationsTest {

    @ParameterizedTest(name = "{0} ms -> {1}")
    @CsvSource({
        "0, 0ms", "850, 850ms", "1000, 1s", "29540, 29.5s", "29960, 30s", "59940, 59.9s", "60000, 1m",
        "754000, 12m34s", "3600000, 1h", "11100000, 3h05m", "86400000, 1d", "97200000, 1d3h"
    })
    void formatsForPeople(long millis, String text) {
        assertThat(Durations.format(Duration.ofMillis(millis))).isEqualTo(text);
    }

    /** Durations on the command line: a unit, or none for seconds as flock's -w takes them (issue 17). */
    @ParameterizedTest(name = "{0} -> {1} ms")
    @CsvSource({
        "500ms, 500", "2s, 2000", "1.5s, 1500", "1m, 60000", "1h, 3600000", "1d, 86400000",
        "5, 5000", "0.25, 250", "0, 0", "' 10 ', 10000"
    })
    void optionsReadWithOrWithoutAUnit(String text, long millis) {
        assertThat(new DurationConverter().convert(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest(name = "{0} is refused")
    @CsvSource({"-5", "-5s", "5 s", "5sec", "five", "''", ".5"})
    void anythingElseIsRefusedWithTheWayToWriteIt(String text) {
        assertThatThrownBy(() -> new DurationConverter().convert(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessage("'" + text + "' is not a duration; write it like 500ms, 2s, 1m, 1h or 5 (seconds),"
                        + " not negative");
    }

    @Test
    void aKeyWithoutExpiryReadsAsSuchAndIsMinusOneInJson() {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        assertThat(Durations.format(forever)).isEqualTo("no expiry");
        assertThat(Durations.millis(forever)).isEqualTo(-1);
        assertThat(Durations.millis(Duration.ofMillis(1500))).isEqualTo(1500);
    }

    @Test
    void ownersAreShortenedToEightHexDigitsAndTheThreadId() {
        assertThat(LockReport.shortOwner("0a1b2c3d4e5f60718293a4b5c6d7e8f9:42")).isEqualTo("0a1b2c3d:42");
        assertThat(LockReport.shortOwner("short:1")).isEqualTo("short:1");
    }
}
