package dev.relock.internal.metrics;

import java.util.Objects;
import java.util.function.Function;

/**
 * What the builder was given for metrics and traces. The registries are typed {@code Object} so
 * that this record, the builder and the client load without Micrometer on the class path; they are
 * a {@code MeterRegistry} and an {@code ObservationRegistry} when not null, and only
 * {@link MicrometerLockEvents} casts them.
 *
 * @param meterRegistry an {@code io.micrometer.core.instrument.MeterRegistry}, or null
 * @param observationRegistry an {@code io.micrometer.observation.ObservationRegistry}, or null
 * @param groupOfName maps a lock name to its {@code group} tag
 * @param histograms whether timers publish percentile histograms
 *
 * <p>Public because the builder, in the API package, and both engines make it or read it.
 */
public record Instrumentation(Object meterRegistry, Object observationRegistry, Function<String, String> groupOfName,
        boolean histograms) {

    /** The group of every name when the user maps none. */
    public static final String DEFAULT_GROUP = "all";

    /** No registries: nothing is measured. */
    public static final Instrumentation NONE = new Instrumentation(null, null, name -> DEFAULT_GROUP, false);

    public Instrumentation {
        Objects.requireNonNull(groupOfName, "groupOfName");
    }

    boolean isEnabled() {
        return meterRegistry != null || observationRegistry != null;
    }
}
