package dev.relock.spring.boot;

import dev.relock.HeldLock;
import dev.relock.RelockClient;
import java.time.Instant;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code locks}: the locks this application holds now, from
 * {@link RelockClient#heldLocks()}. No round trip to Redis. The same class serves Boot 3.5 and 4.
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
        return new HeldLocks(client.clientId(), client.heldLocks().stream().map(HeldLockDescriptor::of).toList());
    }

    /**
     * The endpoint's reply.
     *
     * @param clientId the id that makes this client's owner ids unique
     * @param locks one entry per held lock
     */
    public record HeldLocks(String clientId, List<HeldLockDescriptor> locks) {}

    /**
     * One held lock, as JSON shows it; the fields are those of {@link HeldLock}, the lease in
     * milliseconds.
     *
     * @param kind the kind's lower-case label ({@link dev.relock.LockKind#label()}), not the enum's name
     * @param remainingLeaseMillis the lease left when asked, in milliseconds
     * @param renewed whether the lease keeper renews the lease
     */
    public record HeldLockDescriptor(String name, String kind, String owner, long fencingToken, Instant heldSince,
            long remainingLeaseMillis, boolean renewed) {

        static HeldLockDescriptor of(HeldLock lock) {
            return new HeldLockDescriptor(lock.name(), lock.kind().label(), lock.owner(), lock.fencingToken(),
                    lock.heldSince(), lock.remainingLease().toMillis(), lock.renewed());
        }
    }
}
