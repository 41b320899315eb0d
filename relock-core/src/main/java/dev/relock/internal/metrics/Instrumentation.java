package dev.relock.internal.metrics;

import dev.relock.internal.engine.LockEvents;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What the builder was given for metrics and traces. The registries are typed {@code Object} so
 * that this record, the builder and the client load without Micrometer on the class path; they are
 * a {@code MeterRegistry} and an {@code ObservationRegistry} when not null, and only
 * {@link MicrometerLockEvents} casts them.
 *
 * <p>Public because the builder, in the API package, and both engines make it or read it.
 *
 * @param meterRegistry an {@code io.micrometer.core.instrument.MeterRegistry}, or null
 * @param observationRegistry an {@code io.micrometer.observation.ObservationRegistry}, or null
 * @param groupOfName maps a lock name to its {@code group} tag
 * @param histograms whether timers publish percentile histograms
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

    /**
     * The events for this instrumentation, made before the client connects; {@link LockEvents#NONE} without a
     * registry. Each of {@code nodes} counts as down until {@link LockEvents#nodeConnected} tells of its connection.
     * {@link MicrometerLockEvents} is named only here, so the JVM loads it (and Micrometer) only when a registry was
     * configured.
     *
     * @param nodes the nodes the client is to use, as the {@code node} tag names them
     */
    public LockEvents events(List<String> nodes) {
        return isEnabled() ? MicrometerLockEvents.create(this, nodes) : LockEvents.NONE;
    }

    boolean isEnabled() {
        return meterRegistry != null || observationRegistry != null;
    }
}
