package dev.relock.shedlock;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;

/**
 * A ShedLock lock provider whose locks are relock locks.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(RelockClient relock) {
 *     return new RelockLockProvider(relock);
 * }
 * }</pre>
 *
 * <p>A job's lock is the relock lock {@code namePrefix + ":" + jobName}. As ShedLock requires,
 * {@link #lock} never waits and returns empty while anyone holds the lock, this process and this
 * thread included: each acquisition is owned by its {@link SimpleLock}, not by a thread, and is
 * not reentrant; any thread may unlock it.
 *
 * <p>How long a lock lives is chosen by the {@link Lease}:
 * <ul>
 *   <li>{@link Lease#RENEWED_WHILE_RUNNING} (the default): the client's lease keeper renews the
 *       lease for as long as the job runs, however long that is, and a lock left by a node that
 *       died frees itself after the client's default lease (30 s unless configured).
 *       {@code lockAtMostFor} is not used: a job that runs longer keeps its lock, which is what
 *       ShedLock's {@code KeepAliveLockProvider} gives, without a thread of its own.
 *   <li>{@link Lease#LOCK_AT_MOST_FOR}: the lease is {@code lockAtMostFor}, not renewed, as with
 *       ShedLock's Redis provider: a job that runs longer loses its lock and may run twice.
 * </ul>
 * In both, {@link SimpleLock#unlock()} before {@code lockAtLeastFor} has passed since the lock
 * was taken leaves the lock taken in Redis until then, and frees it on its own.
 *
 * <p>{@link SimpleLock#extend} (and so ShedLock's {@code LockExtender}) extends the lease to at
 * least {@code lockAtMostFor} from now, never shortening it: with {@link Lease#LOCK_AT_MOST_FOR}
 * the lock then ends {@code lockAtMostFor} from now unless extended again; with the default lease
 * it goes on being renewed, every renewal for at least {@code lockAtMostFor}, so a node that dies
 * leaves the lock taken that long. An extension of a lock whose lease was lost returns empty. Redis
 * trouble surfaces from {@link #lock} and {@link SimpleLock#extend} as {@link RelockException},
 * which names the lock, after at most the client's command timeout.
 */
public final class RelockLockProvider implements ExtensibleLockProvider {

    /** How long a job's lock lives while it is held. */
    public enum Lease {
        /** Renewed by the client's lease keeper while held; a dead node's lock frees after the client's default lease. */
        RENEWED_WHILE_RUNNING,
        /** {@code lockAtMostFor}, not renewed. */
        LOCK_AT_MOST_FOR
    }

    /** The name prefix of {@link #RelockLockProvider(RelockClient)}. */
    public static final String DEFAULT_NAME_PREFIX = "shedlock";

    private final RelockClient client;
    private final String namePrefix;
    private final Lease lease;

    /**
     * A provider with leases renewed while the job runs and lock names {@code "shedlock:" + job}.
     *
     * @throws NullPointerException if client is null
     */
    public RelockLockProvider(RelockClient client) {
        this(client, DEFAULT_NAME_PREFIX, Lease.RENEWED_WHILE_RUNNING);
    }

    /**
     * A provider with lock names {@code namePrefix + ":" + job} and the given lease.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if namePrefix is blank
     */
    public RelockLockProvider(RelockClient client, String namePrefix, Lease lease) {
        this.client = Objects.requireNonNull(client, "client");
        this.namePrefix = Objects.requireNonNull(namePrefix, "namePrefix");
        this.lease = Objects.requireNonNull(lease, "lease");
        if (namePrefix.isBlank()) {
            throw new IllegalArgumentException("namePrefix must not be blank");
        }
    }

    /**
     * Takes the job's lock if nobody holds it, without waiting.
     *
     * @return the lock, or empty if it is held by anyone
     * @throws RelockException if Redis cannot be reached within the client's command timeout
     * @throws LockException if the thread is interrupted meanwhile (its interrupt status is kept)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration");
        long startNanos = System.nanoTime();
        RelockLock lock = client.lock(lockName(lockConfiguration.getName()));
        CompletableFuture<Optional<LockHandle>> acquisition = (switch (lease) {
            case RENEWED_WHILE_RUNNING -> lock.tryAcquireAsync(Duration.ZERO);
            case LOCK_AT_MOST_FOR -> lock.tryAcquireAsync(Duration.ZERO, lockConfiguration.getLockAtMostFor());
        }).toCompletableFuture();
        return awaitInCallersThread(acquisition, lock.name(), answerBound())
                .map(handle -> new RelockSimpleLock(handle, lockConfiguration.getLockAtLeastFor(), startNanos));
    }

    /** The relock lock name of a job: hand it to {@link RelockClient#lock(String)} to look at the lock. */
    public String lockName(String jobName) {
        Objects.requireNonNull(jobName, "jobName");
        return namePrefix + ":" + jobName;
    }

    @Override
    public String toString() {
        // the client's own text, not clientId(): that connects a client that has not connected yet (the starter's)
        return "RelockLockProvider{namePrefix=" + namePrefix + ", lease=" + lease + ", client=" + client + "}";
    }

    /**
     * How long one attempt that does not wait may take: relock completes it within the command
     * timeout; the bound only keeps a scheduler thread from hanging if it did not.
     */
    private Duration answerBound() {
        return client.settings().commandTimeout().multipliedBy(2).plusSeconds(1);
    }

    private static Optional<LockHandle> awaitInCallersThread(
            CompletableFuture<Optional<LockHandle>> acquisition, String name, Duration bound) {
        try {
            return acquisition.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            acquisition.cancel(false);
            throw new RelockException("No answer within " + bound + " while taking lock '" + name + "'", e);
        } catch (InterruptedException e) {
            // cancelling withdraws the attempt; a lock taken just then is released by relock
            acquisition.cancel(false);
            Thread.currentThread().interrupt();
            throw new LockException("Interrupted while taking lock '" + name + "'", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new LockException("Could not take lock '" + name + "'", e.getCause());
        }
    }
}
