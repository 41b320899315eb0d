package dev.relock.reactor;

import dev.relock.PermitHandle;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link RelockSemaphore} for Project Reactor: leased permits as {@link Mono}s of {@link PermitHandle}s, and a
 * {@code Mono} or {@code Flux} run while permits are held.
 *
 * <pre>{@code
 * ReactiveRelockSemaphore exports = ReactiveRelockSemaphore.of(client.semaphore("exports"));
 * Flux<Row> rows = exports.withPermits(1, export.rows());      // at most as many exports at once as permits
 * }</pre>
 *
 * <p>The number of permits lives in Redis and is set through the plain semaphore
 * ({@link RelockSemaphore#trySetPermits}, {@link RelockSemaphore#addPermits}: one blocking round trip, at start-up).
 * Publishers here are lazy and cancellable, and release as {@link ReactiveRelockLock}'s do; {@link ReactiveLocks}
 * states the rules in full. Releases and {@link #availablePermits()} run on {@link Schedulers#boundedElastic()}.
 *
 * <p>Immutable; a view of the semaphore it was made of.
 */
public final class ReactiveRelockSemaphore {

    private final RelockSemaphore semaphore;

    private ReactiveRelockSemaphore(RelockSemaphore semaphore) {
        this.semaphore = semaphore;
    }

    /**
     * The reactive view of {@code semaphore}, of whichever client made it.
     *
     * @throws NullPointerException if semaphore is null
     */
    public static ReactiveRelockSemaphore of(RelockSemaphore semaphore) {
        return new ReactiveRelockSemaphore(Objects.requireNonNull(semaphore, "semaphore"));
    }

    /** The semaphore's name. */
    public String name() {
        return semaphore.name();
    }

    /**
     * Acquires {@code permits} when subscribed, waiting as long as it takes, under a renewed lease; Redis trouble is
     * retried with back-off.
     *
     * @return a Mono of the handle, which the subscriber then owns and releases ({@link ReactiveLocks#release});
     *     errors with {@link IllegalArgumentException} if permits is not positive or more than the semaphore has,
     *     and with {@link IllegalStateException} if no number of permits is set or the client is closed
     */
    public Mono<PermitHandle> acquire(int permits) {
        return ReactiveLocks.acquire(semaphore, permits);
    }

    /**
     * Acquires {@code permits} when subscribed, under a renewed lease, waiting up to {@code wait}; a wait of zero or
     * less tries once.
     *
     * @return a Mono of the handle, or empty when the wait ended first
     * @throws NullPointerException if wait is null
     */
    public Mono<PermitHandle> tryAcquire(int permits, Duration wait) {
        return ReactiveLocks.tryAcquire(semaphore, permits, wait);
    }

    /**
     * As {@link #tryAcquire(int, Duration)}, with an explicit lease that is not renewed.
     *
     * @throws NullPointerException if wait or lease is null
     */
    public Mono<PermitHandle> tryAcquire(int permits, Duration wait, Duration lease) {
        return ReactiveLocks.tryAcquire(semaphore, permits, wait, lease);
    }

    /**
     * Acquires {@code permits} when subscribed (as {@link #acquire(int)}), then subscribes {@code body} and holds
     * them until it completes, fails or is cancelled; the body's value is signalled after they are given back.
     *
     * @throws NullPointerException if body is null
     */
    public <T> Mono<T> withPermits(int permits, Mono<T> body) {
        return ReactiveLocks.withPermits(semaphore, permits, body);
    }

    /**
     * As {@link #withPermits(int, Mono)}, for a Flux: its elements are signalled while the permits are held, its
     * completion after they are given back.
     *
     * @throws NullPointerException if body is null
     */
    public <T> Flux<T> withPermits(int permits, Flux<T> body) {
        return ReactiveLocks.withPermits(semaphore, permits, body);
    }

    /**
     * The permits free when subscribed (0 for a semaphore whose number was never set), as
     * {@link RelockSemaphore#availablePermits()}. One round trip, on {@link Schedulers#boundedElastic()}.
     */
    public Mono<Integer> availablePermits() {
        return ReactiveLocks.roundTrip(semaphore::availablePermits);
    }

    @Override
    public String toString() {
        return "ReactiveRelockSemaphore[" + semaphore.name() + "]";
    }
}
