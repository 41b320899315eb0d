package dev.relock.spring.boot;

import dev.relock.ClientIdentity;
import dev.relock.HeldLock;
import dev.relock.RelockClient;
import java.time.Instant;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code locks}: the locks this application holds now, from
 * {@link RelockClient#heldLocks()}. No round trip to Redis, so it answers while Redis is down: an auto-configured
 * client that has not connected yet holds nothing and has no identity, and says so with {@code connected: false}
 * instead of trying to connect. The same class serves Boot 3.5 and 4.
 */
@Endpoint(id = "locks")
public class RelockLocksEndpoint {

    private final RelockClient client;

    /** An endpoint that lists the holds of {@code client}. */
    public RelockLocksEndpoint(RelockClient client) {
        this.client = client;
    }

    /** The held locks, by name. */
    @ReadOperation
    public HeldLocks locks() {
        RelockClient connected = LazyRelockClient.connectedOrNull(client);
        if (connected == null) {
            return new HeldLocks(false, null, null, null, ProcessHandle.current().pid(), null, null, List.of());
        }
        ClientIdentity identity = connected.identity();
        return new HeldLocks(true, connected.clientId(), identity.application(), identity.host(), identity.pid(),
                identity.label(), identity.connectionName(),
                connected.heldLocks().stream().map(HeldLockDescriptor::of).toList());
    }

    /**
     * The endpoint's reply. Until the client has connected, the fields of its identity other than {@code pid} are
     * null: they are made when it connects.
     *
     * @param connected whether the client has connected to Redis; false only for an auto-configured client that
     *     could not connect yet (it connects on first use). It does not say whether Redis answers now: the
     *     {@code relock} health indicator asks it
     * @param clientId the id that makes this client's owner ids unique
     * @param application the client's application name ({@code spring.application.name}), or ""
     * @param host the host the application runs on
     * @param pid its process id
     * @param label the client's label ({@code relock.client-label}), or ""
     * @param connectionName what {@code CLIENT LIST} shows for the connections relock opened
     * @param locks one entry per held lock; empty while not connected
     */
    public record HeldLocks(boolean connected, String clientId, String application, String host, long pid,
            String label, String connectionName, List<HeldLockDescriptor> locks) {}

    /**
     * One held lock, as JSON shows it; the fields are those of {@link HeldLock}, the lease in
     * milliseconds.
     *
     * @param kind the kind's lower-case label ({@link dev.relock.LockKind#label()}), not the enum's name
     * @param remainingLeaseMillis the lease left when asked, in milliseconds
     * @param renewed whether the lease keeper renews the lease
     * @param thread the name of the thread that took it, or ""
     */
    public record HeldLockDescriptor(String name, String kind, String owner, long fencingToken, Instant heldSince,
            long remainingLeaseMillis, boolean renewed, String thread) {

        static HeldLockDescriptor of(HeldLock lock) {
            return new HeldLockDescriptor(lock.name(), lock.kind().label(), lock.owner(), lock.fencingToken(),
                    lock.heldSince(), lock.remainingLease().toMillis(), lock.renewed(), lock.thread());
        }
    }
}
