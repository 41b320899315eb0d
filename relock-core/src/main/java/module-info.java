/**
 * relock: distributed locks on Redis. Users see {@code dev.relock} (the client, its builder, the lock types, handles,
 * listeners and exceptions) and {@code dev.relock.fencing} (resource-side guards); every other package is internal
 * and not exported. The one qualified export is the metrics package to the Spring Boot starter, which counts its own
 * lock calls in the same meters as the client's.
 *
 * <p>On the class path (where most applications run) this descriptor is not read and nothing is hidden; the
 * {@code internal} package names say the same there. Micrometer is optional: a client built without a registry never
 * loads a Micrometer type ({@code dev.relock.internal.metrics.Instrumentation}).
 */
module dev.relock {
    // the builder takes Lettuce's RedisURI, RedisClient and ClientResources
    requires transitive lettuce.core;
    // JdbcFence works on a java.sql.Connection
    requires transitive java.sql;
    // the builder takes a MeterRegistry and an ObservationRegistry, when the application has them
    requires static transitive micrometer.core;
    requires static transitive micrometer.observation;
    requires static micrometer.commons;
    requires org.slf4j;
    // Lettuce's event loops and timer, which relock's timers and I/O-thread checks use
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    // the subscription to Lettuce's event bus (a Flux) is a Disposable
    requires reactor.core;

    exports dev.relock;
    exports dev.relock.fencing;
    exports dev.relock.internal.metrics to dev.relock.spring;
}
