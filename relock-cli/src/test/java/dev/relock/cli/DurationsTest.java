package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How durations and owners read in the tables (no Redis, no process). */
class DurationsTest {

    @ParameterizedTest(name = "{0} ms -> {1}")
    @CsvSource({
        "0, 0ms", "850, 850ms", "1000, 1s", "29540, 29.5s", "29960, 30s", "59940, 59.9s", "60000, 1m",
        "754000, 12m34s", "3600000, 1h", "11100000, 3h05m", "86400000, 1d", "97200000, 1d3h"
    })
    void formatsForPeople(long millis, String text) {
        assertThat(Durations.format(Duration.ofMillis(millis))).isEqualTo(text);
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
