package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 39: how many time series one lock group costs in Prometheus, as docs/observability.md ("Series per group")
 * states them: a scrape of a {@link PrometheusMeterRegistry} after one acquisition and release of an exclusive lock,
 * its lines with the group's tag counted. Percentile histograms are opt-in ({@code metricsHistograms(true)}): with
 * them, as before issue 39 by default, a group is twenty times the series.
 */
@Tag("redis")
class MeterSeriesTest extends OneServerTestBase {

    /** acquire (acquired, timed_out, failed) and hold.time: count, sum, max each; leases.lost, locks.held, waiting. */
    static final int SERIES_PER_GROUP = 4 * 3 + 3;

    /** The same with percentile histograms: each of the four timers adds its buckets ({@code le}, +Inf included). */
    static final int SERIES_PER_GROUP_WITH_HISTOGRAMS = 4 * (3 + 69) + 3;

    private List<String> seriesOfGroup(boolean histograms) {
        return seriesOfGroup(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), histograms);
    }

    private List<String> seriesOfGroup(PrometheusMeterRegistry meters, boolean histograms) {
        RelockClient client = newClient(builder -> builder.meterRegistry(meters).metricsHistograms(histograms)
                .metricsGroup(name -> name.substring(0, name.indexOf(':'))));
        client.lock("orders:4711").lock();
        client.lock("orders:4711").unlock();
        return meters.scrape().lines()
                .filter(line -> !line.startsWith("#") && line.contains("group=\"orders\""))
                .toList();
    }

    @Test
    void aGroupIsFifteenSeriesWithoutHistograms() {
        List<String> series = seriesOfGroup(false);
        assertThat(series).noneMatch(line -> line.contains("_bucket"));
        assertThat(series).hasSize(SERIES_PER_GROUP);
    }

    @Test
    void withHistogramsEachTimerAddsItsBuckets() {
        List<String> series = seriesOfGroup(true);
        assertThat(series).filteredOn(line -> line.startsWith("relock_acquire_seconds_bucket")
                && line.contains("outcome=\"acquired\"")).hasSizeGreaterThan(60);
        assertThat(series).hasSize(SERIES_PER_GROUP_WITH_HISTOGRAMS);
    }

    @Test
    void withoutHistogramsTheRegistrysOwnFilterMayTurnThemOnForOneMeter() {
        PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // what Spring Boot's management.metrics.distribution.percentiles-histogram.relock.acquire=true does
        meters.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                return id.getName().equals("relock.acquire")
                        ? DistributionStatisticConfig.builder().percentilesHistogram(true).build().merge(config)
                        : config;
            }
        });
        List<String> series = seriesOfGroup(meters, false);
        assertThat(series).anyMatch(line -> line.startsWith("relock_acquire_seconds_bucket"))
                .noneMatch(line -> line.startsWith("relock_hold_time_seconds_bucket"));
    }
}
