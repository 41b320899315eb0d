package dev.relock.spring.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code relock.*} properties of the auto-configured {@link dev.relock.RelockClient}. Where to
 * connect comes from {@code spring.data.redis.*}; a setting left unset keeps relock's default.
 */
@ConfigurationProperties(prefix = "relock")
public class RelockProperties {

    /**
     * {@code value}, the text of the property named {@code property}, which a lock name starts with.
     *
     * @throws IllegalStateException naming the property if the value is null or blank
     */
    static String requireText(String property, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(property + " must not be blank: relock's lock names start with it, was '"
                    + value + "'");
        }
        return value;
    }

    /** Whether to auto-configure a RelockClient and apply @DistributedLock. */
    private boolean enabled = true;

    /** Prefix of every key and channel relock uses (relock's default: "relock"). */
    private String keyPrefix;

    /** Lease of holds taken without an explicit lease, renewed every third of it (relock's default: 30s). */
    private Duration defaultLease;

    /**
     * A label that tells this instance's client apart in its identity and Redis connection names (CLIENT LIST),
     * beside spring.application.name, host and PID; none by default.
     */
    private String clientLabel;

    /** How long one Redis command may take (default: spring.data.redis.timeout if set, else relock's 3s). */
    private Duration commandTimeout;

    /** How long the first queued waiter keeps its turn after a release (relock's default: 1s). */
    private Duration handoffGrace;

    /** Meters and observations of the auto-configured client. */
    private final Metrics metrics = new Metrics();

    /** Reserved: waiting for replicas after acquiring is not available yet. */
    private final ReplicationGuard replicationGuard = new ReplicationGuard();

    /** The Spring Integration LockRegistry bean. */
    private final SpringIntegration springIntegration = new SpringIntegration();

    /** The ShedLock LockProvider bean. */
    private final Shedlock shedlock = new Shedlock();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public String getClientLabel() {
        return clientLabel;
    }

    public void setClientLabel(String clientLabel) {
        this.clientLabel = clientLabel;
    }

    public Duration getDefaultLease() {
        return defaultLease;
    }

    public void setDefaultLease(Duration defaultLease) {
        this.defaultLease = defaultLease;
    }

    public Duration getCommandTimeout() {
        return commandTimeout;
    }

    public void setCommandTimeout(Duration commandTimeout) {
        this.commandTimeout = commandTimeout;
    }

    public Duration getHandoffGrace() {
        return handoffGrace;
    }

    public void setHandoffGrace(Duration handoffGrace) {
        this.handoffGrace = handoffGrace;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public ReplicationGuard getReplicationGuard() {
        return replicationGuard;
    }

    public SpringIntegration getSpringIntegration() {
        return springIntegration;
    }

    public Shedlock getShedlock() {
        return shedlock;
    }

    /**
     * {@code relock.spring-integration.*}: the {@code RelockLockRegistry} that is the application's Spring Integration
     * {@code LockRegistry}, where relock-spring-integration (or -6) is on the class path and the application declares
     * no LockRegistry of its own.
     */
    public static class SpringIntegration {

        /** Whether to declare the LockRegistry bean. */
        private boolean enabled = true;

        /** The registry key: a lock key K is the relock lock "registry-key:K", as in RedisLockRegistry. */
        private String registryKey = "lock-registry";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getRegistryKey() {
            return registryKey;
        }

        public void setRegistryKey(String registryKey) {
            this.registryKey = registryKey;
        }
    }

    /**
     * {@code relock.shedlock.*}: the {@code RelockLockProvider} that is the application's ShedLock
     * {@code LockProvider}, where relock-shedlock is on the class path and the application declares no LockProvider
     * of its own. Its leases are renewed while a job runs.
     */
    public static class Shedlock {

        /** Whether to declare the LockProvider bean. */
        private boolean enabled = true;

        /** The prefix of the lock names: a job J is the relock lock "name-prefix:J". */
        private String namePrefix = "shedlock";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getNamePrefix() {
            return namePrefix;
        }

        public void setNamePrefix(String namePrefix) {
            this.namePrefix = namePrefix;
        }
    }

    /**
     * {@code relock.metrics.*}: whether the auto-configured client reports to the application's
     * Micrometer {@code MeterRegistry} and {@code ObservationRegistry} (if it has them).
     */
    public static class Metrics {

        /** Whether the client reports meters and observations to the application's registries. */
        private boolean enabled = true;

        /**
         * Whether relock's timers publish percentile histograms (about 70 series per timer instead of 3), for
         * histogram_quantile across instances.
         */
        private boolean histograms;

        /**
         * Whether the relock.wait and relock.hold observations also become timers (relock.wait, relock.wait.active,
         * relock.hold, relock.hold.active) through the application's meter observation handler; they repeat
         * relock.acquire, relock.waiting, relock.hold.time and relock.locks.held, so they are denied by default.
         */
        private boolean observationTimers;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isHistograms() {
            return histograms;
        }

        public void setHistograms(boolean histograms) {
            this.histograms = histograms;
        }

        public boolean isObservationTimers() {
            return observationTimers;
        }

        public void setObservationTimers(boolean observationTimers) {
            this.observationTimers = observationTimers;
        }
    }

    /**
     * {@code relock.replication-guard.*}: after each fresh acquisition, wait until this many
     * replicas have the lock ({@code WAIT}), see {@link dev.relock.ReplicationGuard}. Off by default.
     */
    public static class ReplicationGuard {

        /** Whether acquisitions wait for replicas. */
        private boolean enabled;

        /** How many replicas must acknowledge each fresh acquisition. */
        private int replicas = 1;

        /** How long to wait for them; must be shorter than the command timeout. */
        private Duration timeout = Duration.ofMillis(200);

        /** What happens when too few acknowledge in time. */
        private dev.relock.ReplicationGuard.OnShortfall onShortfall =
                dev.relock.ReplicationGuard.OnShortfall.RELEASE_AND_RETRY;

        /** Whether to wait for the AOF fsync of the master and the replicas too ({@code WAITAOF}, Redis 7.2+). */
        private boolean fsynced;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getReplicas() {
            return replicas;
        }

        public void setReplicas(int replicas) {
            this.replicas = replicas;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public dev.relock.ReplicationGuard.OnShortfall getOnShortfall() {
            return onShortfall;
        }

        public void setOnShortfall(dev.relock.ReplicationGuard.OnShortfall onShortfall) {
            this.onShortfall = onShortfall;
        }

        public boolean isFsynced() {
            return fsynced;
        }

        public void setFsynced(boolean fsynced) {
            this.fsynced = fsynced;
        }

        /** The core setting these properties describe, or null when disabled. */
        dev.relock.ReplicationGuard toGuard() {
            return enabled ? new dev.relock.ReplicationGuard(replicas, timeout, onShortfall, fsynced) : null;
        }
    }
}
