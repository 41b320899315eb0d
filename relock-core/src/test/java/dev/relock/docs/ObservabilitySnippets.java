package dev.relock.docs;

import dev.relock.RelockClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;

/** The Java block of docs/observability.md, compiled: the region between the markers is the block line for line. */
final class ObservabilitySnippets {

    private ObservabilitySnippets() {
    }

    static RelockClient metricsTracesAndLogs(MeterRegistry meterRegistry, ObservationRegistry observationRegistry) {
        // snippet docs/observability.md#meters
        RelockClient client = RelockClient.builder()
                .redisUri("redis://redis.internal:6379")
                .meterRegistry(meterRegistry)                   // e.g. a PrometheusMeterRegistry
                .observationRegistry(observationRegistry)       // e.g. bridged to OpenTelemetry by micrometer-tracing
                .metricsGroup(name -> name.split(":", 2)[0])           // "invoice:4711" -> "invoice"
                .build();
        // snippet end
        return client;
    }
}
