package dev.relock.reactor;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * relock for Project Reactor as static methods: acquisitions, and latch and condition waits, as {@link Mono}s, and a
 * {@code Mono} or {@code Flux} run while a lock is held. {@link ReactiveRelockLock}, {@link ReactiveRelockReadWriteLock} and
 * {@link ReactiveRelockSemaphore} offer the same as objects, through these methods; what only this class has is
 * {@link #release}, and {@link #holding}/{@link #holdingMany} for a body made from the handle.
 *
 * <pre>{@code
 * RelockLock lock = client.lock("invoice:" + id);
 * Mono<Invoice> paid = ReactiveLocks.withLock(lock, invoices.load(id).map(Invoice::paid).flatMap(invoices::save));
 *
 * Flux<Row> exported = ReactiveLocks.holdingMany(ReactiveLocks.tryAcquire(lock, Duration.ofSeconds(2)),
 *         held -> rows.export(held.fencingToken()));           // empty when not acquired within 2 s
 * }</pre>
 *
 * <p>Built on relock-core's handle-owned asynchronous API ({@link RelockLock#acquireAsync()},
 * {@link RelockLock#tryAcquireAsync}): a hold belongs to its {@link LockHandle}, not to a thread, so any thread may
 * release it, and it is not reentrant: a publisher that takes a lock it already holds (through another handle or
 * a thread) waits like any other owner. The read half of {@link dev.relock.RelockReadWriteLock} is a
 * {@link RelockLock} too: pass {@code readWriteLock.readLock()} for a shared hold.
 *
 * <ul>
 *   <li><b>Lazy.</b> Nothing happens until a subscriber requests; every subscription acquires anew.
 *   <li><b>Cancelling withdraws.</b> Cancelling a subscription that waits for a lock takes the waiter out of the
 *       lock's queue; a hold acquired at that moment is released, never left without an owner.
 *   <li><b>Released on every ending.</b> {@code withLock}, {@code withPermits}, {@code holding} and
 *       {@code holdingMany} release on complete, on error and on cancel ({@code usingWhen}). A {@code Mono}'s value
 *       and a {@code Flux}'s completion are signalled after the release; a {@code Flux}'s elements while held.
 *   <li><b>A lost lease ends the publisher.</b> When the lease is found lost while the body runs (it ran out, Redis
 *       lost the key, an operator forced the lock open), the body is cancelled and the publisher fails with
 *       {@link LeaseLostException}: a stream does not go on unprotected.
 *   <li><b>A failed release is an error.</b> When the release after a completed body fails
 *       ({@link LeaseLostException}: the lease was lost meanwhile; {@link dev.relock.RelockException}: Redis could
 *       not be reached, and the lease runs out on its own), the publisher fails with that exception: the work ran,
 *       but maybe without the exclusion asked for. After a body's error it is added to that error as suppressed.
 * </ul>
 *
 * <p>Threads. relock-core has no asynchronous release: {@link LockHandle#close()} blocks for a round trip, so every
 * release here runs on {@link Schedulers#boundedElastic()}, and the signals that follow it (a {@code Mono}'s value,
 * completion, errors) come from there. The handle, and the body's subscription, come from the thread that
 * completes the acquisition: a Lettuce event-executor thread, or the subscribing thread when the outcome is known
 * at once. Do not block there ({@code publishOn} or {@code subscribeOn} a scheduler of your own for blocking work).
 */
public final class ReactiveLocks {

    private static final Logger LOG = Loggers.getLogger(ReactiveLocks.class);

    /** The end of a Flux body, marked so that its completion and the loss, merged, are told apart. */
    private static final Object END = new Object();

    private ReactiveLocks() {}

    // ---- acquiring ---------------------------------------------------------------------------------------------

    /**
     * Acquires {@code lock} for a new handle when subscribed, waiting as long as it takes, with a lease renewed
     * while held; Redis trouble is retried with back-off ({@link RelockLock#acquireAsync()}).
     *
     * @return a Mono of the handle, which the subscriber must release ({@link #release}, or
     *     {@link #holding}/{@link #holdingMany} to have it done); errors with {@link IllegalStateException} if the
     *     client is or gets closed
     */
    public static Mono<LockHandle> acquire(RelockLock lock) {
        Objects.requireNonNull(lock, "lock");
        return Mono.fromDirect(Acquisition.<LockHandle, LockHandle>ofHandle(lock::acquireAsync, Function.identity()));
    }

    /**
     * Acquires {@code lock} for a new handle when subscribed, with a renewed lease, waiting up to {@code wait}; a
     * wait of zero or less tries once ({@link RelockLock#tryAcquireAsync(Duration)}).
     *
     * @return a Mono of the handle, or empty when the wait ended first; errors with
     *     {@link dev.relock.RelockException} when Redis fails
     */
    public static Mono<LockHandle> tryAcquire(RelockLock lock, Duration wait) {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(wait, "wait");
        return ifAcquired(() -> lock.tryAcquireAsync(wait));
    }

    /**
     * As {@link #tryAcquire(RelockLock, Duration)}, with an explicit lease that is not renewed; a lease that is not
     * positive is an {@link IllegalArgumentException} signalled when subscribed.
     */
    public static Mono<LockHandle> tryAcquire(RelockLock lock, Duration wait, Duration lease) {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        return ifAcquired(() -> lock.tryAcquireAsync(wait, lease));
    }

    /**
     * Acquires {@code permits} of {@code semaphore} when subscribed, waiting as long as it takes, under a renewed
     * lease ({@link RelockSemaphore#acquireAsync(int)}).
     */
    public static Mono<PermitHandle> acquire(RelockSemaphore semaphore, int permits) {
        Objects.requireNonNull(semaphore, "semaphore");
        return Mono.fromDirect(Acquisition.<PermitHandle, PermitHandle>ofHandle(() -> semaphore.acquireAsync(permits),
                Function.identity()));
    }

    /**
     * Acquires {@code permits} of {@code semaphore} when subscribed, under a renewed lease, waiting up to
     * {@code wait} ({@link RelockSemaphore#tryAcquireAsync(int, Duration)}).
     *
     * @return a Mono of the handle, or empty when the wait ended first
     */
    public static Mono<PermitHandle> tryAcquire(RelockSemaphore semaphore, int permits, Duration wait) {
        Objects.requireNonNull(semaphore, "semaphore");
        Objects.requireNonNull(wait, "wait");
        return ifAcquired(() -> semaphore.tryAcquireAsync(permits, wait));
    }

    /** As {@link #tryAcquire(RelockSemaphore, int, Duration)}, with an explicit lease that is not renewed. */
    public static Mono<PermitHandle> tryAcquire(RelockSemaphore semaphore, int permits, Duration wait,
            Duration lease) {
        Objects.requireNonNull(semaphore, "semaphore");
        Objects.requireNonNull(wait, "wait");
        Objects.requireNonNull(lease, "lease");
        return ifAcquired(() -> semaphore.tryAcquireAsync(permits, wait, lease));
    }

    private static <H extends LockHandle> Mono<H> ifAcquired(Supplier<CompletionStage<Optional<H>>> start) {
        return Mono.fromDirect(Acquisition.<Optional<H>, H>ofHandle(start, held -> held.orElse(null)));
    }

    // ---- waiting -----------------------------------------------------------------------------------------------

    /**
     * Waits when subscribed until {@code latch}'s count reaches zero, up to {@code timeout}
     * ({@link RelockCountDownLatch#awaitAsync}); no thread waits meanwhile. Cancelling the subscription ends the wait.
     *
     * @return a Mono of true when the count reached zero, false when the time was up first; errors with
     *     {@link IllegalStateException} if the latch expired before reaching zero or the client is or gets closed,
     *     with {@link dev.relock.RelockException} if the first read of the latch failed
     */
    public static Mono<Boolean> await(RelockCountDownLatch latch, Duration timeout) {
        Objects.requireNonNull(latch, "latch");
        Objects.requireNonNull(timeout, "timeout");
        return Mono.fromDirect(new Acquisition<Boolean, Boolean>(() -> latch.awaitAsync(timeout), Function.identity(),
                opened -> { }));
    }

    /**
     * Awaits {@code condition} when subscribed for the lock held through {@code held} (a handle of {@link #acquire},
     * inside {@link #holding} say), until a signal comes or {@code timeout} has passed
     * ({@link RelockCondition#awaitAsync}); no thread waits meanwhile. The handle gives the lock up while it waits and
     * holds it again, with a greater fencing token, when the Mono signals. Await in a loop ({@code repeat}) that
     * checks what you wait for: wake-ups may be spurious.
     *
     * <p>Cancelling the subscription ends the wait: before a signal picked it, the await leaves the wait set and the
     * handle holds nothing; after, relock-core takes the lock back, signals the next waiter in its place and releases
     * it, so no signal is lost. A cancel that crosses the Mono's own signal (the value already on its way) passes the
     * signal on from here, on {@link Schedulers#boundedElastic()}, as the handle's holder: it reaches the next waiter
     * if the handle still holds the lock by then.
     *
     * @return a Mono of true if a signal came before the time was up, false otherwise; errors as
     *     {@link RelockCondition#awaitAsync} fails ({@link IllegalArgumentException} for a handle it cannot await
     *     with, signalled when subscribed)
     */
    public static Mono<Boolean> await(RelockCondition condition, LockHandle held, Duration timeout) {
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(held, "held");
        Objects.requireNonNull(timeout, "timeout");
        return Mono.fromDirect(new Acquisition<Boolean, Boolean>(() -> condition.awaitAsync(held, timeout),
                Function.identity(), signalled -> {
                    if (signalled) {
                        passOn(condition, held);
                    }
                }));
    }

    /**
     * Signals {@code condition} when subscribed, as the holder of {@code held} ({@link RelockCondition#signal(LockHandle)},
     * a round trip, on {@link Schedulers#boundedElastic()}): its waiter that joined first gets the lock after this
     * holder lets it go.
     *
     * @return a Mono that completes once signalled; errors with {@link IllegalMonitorStateException} if the handle does
     *     not hold the lock, {@link LeaseLostException} if Redis no longer had it
     */
    public static Mono<Void> signal(RelockCondition condition, LockHandle held) {
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(held, "held");
        return roundTrip(() -> {
            condition.signal(held);
            return null;
        });
    }

    /** As {@link #signal}, for every waiter ({@link RelockCondition#signalAll(LockHandle)}). */
    public static Mono<Void> signalAll(RelockCondition condition, LockHandle held) {
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(held, "held");
        return roundTrip(() -> {
            condition.signalAll(held);
            return null;
        });
    }

    /** Signals the next waiter in the place of a subscriber that cancelled as its signal came; a failure is logged. */
    private static void passOn(RelockCondition condition, LockHandle held) {
        signal(condition, held).subscribe(null, failure -> LOG.warn("condition '" + condition.name() + "' of lock '"
                + condition.lockName() + "': a signal that reached a cancelled subscriber could not be passed on; the"
                + " next waiter may wait for another signal", failure));
    }

    // ---- releasing ---------------------------------------------------------------------------------------------

    /**
     * Releases {@code handle} when subscribed, on {@link Schedulers#boundedElastic()} ({@link LockHandle#close()}
     * blocks for a round trip). Releasing a released handle does nothing.
     *
     * @return a Mono that completes once released; errors with {@link LeaseLostException} if the lease was lost
     *     before, or {@link dev.relock.RelockException} if Redis could not be reached (the lease then runs out on
     *     its own)
     */
    public static Mono<Void> release(LockHandle handle) {
        Objects.requireNonNull(handle, "handle");
        return closing(handle, failure -> {
            throw failure;
        });
    }

    /** Releases a handle nobody took (its subscriber had cancelled), logging a failure: there is nobody to tell. */
    static void releaseUnseen(LockHandle handle) {
        closeQuietly(handle, "after its subscriber cancelled").subscribe();
    }

    // ---- holding -----------------------------------------------------------------------------------------------

    /**
     * Acquires {@code lock} when subscribed (as {@link #acquire(RelockLock)}: waiting as long as it takes), then
     * subscribes {@code body} and holds the lock until the body ends. See the class comment for how it ends.
     */
    public static <T> Mono<T> withLock(RelockLock lock, Mono<T> body) {
        Objects.requireNonNull(body, "body");
        return holding(acquire(lock), held -> body);
    }

    /** As {@link #withLock(RelockLock, Mono)}, for a Flux: the lock is held until it completes, fails or is cancelled. */
    public static <T> Flux<T> withLock(RelockLock lock, Flux<T> body) {
        Objects.requireNonNull(body, "body");
        return holdingMany(acquire(lock), held -> body);
    }

    /** As {@link #withLock(RelockLock, Mono)}, holding {@code permits} of {@code semaphore}. */
    public static <T> Mono<T> withPermits(RelockSemaphore semaphore, int permits, Mono<T> body) {
        Objects.requireNonNull(body, "body");
        return holding(acquire(semaphore, permits), held -> body);
    }

    /** As {@link #withLock(RelockLock, Flux)}, holding {@code permits} of {@code semaphore}. */
    public static <T> Flux<T> withPermits(RelockSemaphore semaphore, int permits, Flux<T> body) {
        Objects.requireNonNull(body, "body");
        return holdingMany(acquire(semaphore, permits), held -> body);
    }

    /**
     * Subscribes {@code acquisition} (this class's {@code acquire} or {@code tryAcquire}, or any Mono of a handle
     * nobody else releases), then the Mono {@code body} makes of the handle, holding it until the body ends;
     * releases it on every ending. Empty when the acquisition is empty (not acquired): the body is not called then.
     *
     * @param body makes the work from the handle (its {@link LockHandle#fencingToken()}, say); called once per
     *     subscription, after the acquisition
     */
    public static <H extends LockHandle, T> Mono<T> holding(Mono<H> acquisition,
            Function<? super H, ? extends Mono<? extends T>> body) {
        Objects.requireNonNull(acquisition, "acquisition");
        Objects.requireNonNull(body, "body");
        return Mono.usingWhen(acquisition,
                        // the loss first: a lease already known lost ends the race before the body is subscribed
                        held -> Mono.<T>firstWithSignal(lossOf(held), bodyOf(held, body)),
                        ReactiveLocks::releaseAfterComplete,
                        ReactiveLocks::releaseAfterError,
                        held -> closeQuietly(held, "after its subscriber cancelled"))
                .onErrorMap(ReleaseFailure::wrapsOne, ReleaseFailure::unwrap);
    }

    /** As {@link #holding}, for a body of many elements: the handle is held until the body ends. */
    public static <H extends LockHandle, T> Flux<T> holdingMany(Mono<H> acquisition,
            Function<? super H, ? extends Publisher<? extends T>> body) {
        Objects.requireNonNull(acquisition, "acquisition");
        Objects.requireNonNull(body, "body");
        return Flux.usingWhen(acquisition,
                        held -> ReactiveLocks.<T>untilLost(Flux.from(bodyOf(held, body)), held),
                        ReactiveLocks::releaseAfterComplete,
                        ReactiveLocks::releaseAfterError,
                        held -> closeQuietly(held, "after its subscriber cancelled"))
                .onErrorMap(ReleaseFailure::wrapsOne, ReleaseFailure::unwrap);
    }

    private static <H, P> P bodyOf(H held, Function<? super H, ? extends P> body) {
        return Objects.requireNonNull(body.apply(held), "the body function returned null instead of a publisher");
    }

    /**
     * The body's elements until it ends or the lease is lost. A loss is signalled on the lease keeper's thread,
     * concurrently with the body's signals: {@code merge} serialises the two, and on the loss cancels the body.
     */
    @SuppressWarnings("unchecked")
    private static <T> Flux<T> untilLost(Flux<? extends T> body, LockHandle held) {
        // the loss first: a lease already known lost fails the merge before the body is subscribed
        return Flux.<Object>merge(lossOf(held), Flux.concat(body, Mono.just(END)))
                .takeWhile(element -> element != END)
                .map(element -> (T) element);
    }

    /** Fails with LeaseLostException once the hold's lease is found lost; never signals otherwise. */
    private static <T> Mono<T> lossOf(LockHandle held) {
        // true: cancelling this Mono must not cancel the hold's whenLost() (only a copy of it is seen here anyway)
        return Mono.fromFuture(held.whenLost().toCompletableFuture(), true)
                .flatMap(lost -> Mono.error(new LeaseLostException(lost.lockName(), lost.reason())));
    }

    /** Releases after the body completed; a failure fails the publisher (see {@link ReleaseFailure}). */
    private static Mono<Void> releaseAfterComplete(LockHandle held) {
        return closing(held, failure -> {
            throw new ReleaseFailure(failure);
        });
    }

    /** Releases after the body failed; a release failure joins the body's error, unless it is the same loss. */
    private static Mono<Void> releaseAfterError(LockHandle held, Throwable bodyError) {
        return closing(held, failure -> {
            if (!(bodyError instanceof LeaseLostException && failure instanceof LeaseLostException)) {
                bodyError.addSuppressed(failure);
            }
        });
    }

    /** Releases with nobody to tell of a failure: a lost lease was reported by the client; the rest is logged. */
    private static Mono<Void> closeQuietly(LockHandle held, String when) {
        return closing(held, failure -> {
            if (failure instanceof LeaseLostException) {
                LOG.debug("lock '{}' released {}: its lease had been lost", held.name(), when);
            } else {
                LOG.warn("lock '" + held.name() + "' could not be released " + when + "; its lease runs out on its own",
                        failure);
            }
        });
    }

    /** Closes the handle when subscribed, off the subscribing thread (a round trip), handing a failure to onFailure. */
    private static Mono<Void> closing(LockHandle held, Consumer<RuntimeException> onFailure) {
        return roundTrip(() -> {
            try {
                held.close();
            } catch (RuntimeException e) {
                onFailure.accept(e);
            }
            return null;
        });
    }

    /**
     * A Mono of what {@code call} returns (empty for null), called when subscribed on
     * {@link Schedulers#boundedElastic()}: every call of relock-core that waits for Redis runs there, never on the
     * subscribing thread, which may be a Lettuce thread or one of Reactor's non-blocking schedulers.
     */
    static <T> Mono<T> roundTrip(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * The failure of a release after a completed body, as it travels through {@code usingWhen}, which wraps it in
     * a RuntimeException of its own; the publisher fails with the release's exception itself.
     */
    private static final class ReleaseFailure extends RuntimeException {

        ReleaseFailure(RuntimeException cause) {
            super(cause.getMessage(), cause, false, false);
        }

        static boolean wrapsOne(Throwable error) {
            return error.getCause() instanceof ReleaseFailure;
        }

        static Throwable unwrap(Throwable error) {
            return error.getCause().getCause();
        }
    }
}
