package dev.relock.reactor;

import dev.relock.LockHandle;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One asynchronous acquisition of relock-core as a publisher of at most one handle: each subscription starts its
 * own acquisition on its first request and emits the handle, nothing (the wait ended first) or the failure.
 *
 * <p>Design notes. A subscription moves through {@code IDLE → STARTED → DONE}, or to {@code CANCELLED} from
 * either of the first two, by compare-and-set only, so that for every handle exactly one of two things happens:
 * the thread that moves {@code STARTED → DONE} signals it (from then on it belongs to the subscriber), or the
 * completion finds {@code CANCELLED} and releases it here. A cancel while {@code STARTED} also cancels the
 * core's future, which withdraws the waiter from the lock's queue; a hold the core acquires at that moment is
 * released by the core, and one it had already handed to the future is released here. What remains is the
 * window every Reactive Streams source has: a cancel that arrives while the handle is being signalled; the
 * downstream operator gets the handle then ({@code Flux.usingWhen}, under {@link ReactiveLocks#withLock},
 * releases it).
 *
 * <p>Signals come from the thread that completes the core's future: a Lettuce event-executor thread, or the
 * requesting thread when the outcome is known at once.
 *
 * @param <R> what the core's future completes with: the handle, or an Optional of it
 * @param <H> the handle type
 */
final class Acquisition<R, H extends LockHandle> implements Publisher<H> {

    private final Supplier<? extends CompletionStage<R>> start;
    private final Function<R, H> handleOf;

    /**
     * @param start starts one acquisition of the core, returning its stage (whose future cancels it)
     * @param handleOf the handle in the stage's result, or null for "not acquired"
     */
    Acquisition(Supplier<? extends CompletionStage<R>> start, Function<R, H> handleOf) {
        this.start = start;
        this.handleOf = handleOf;
    }

    @Override
    public void subscribe(Subscriber<? super H> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        subscriber.onSubscribe(new Pending<>(subscriber, start, handleOf));
    }

    private static final class Pending<R, H extends LockHandle> implements Subscription {

        private static final int IDLE = 0;
        private static final int STARTED = 1;
        private static final int DONE = 2;
        private static final int CANCELLED = 3;

        private final Subscriber<? super H> subscriber;
        private final Supplier<? extends CompletionStage<R>> start;
        private final Function<R, H> handleOf;
        private final AtomicInteger state = new AtomicInteger(IDLE);
        // set once, after IDLE → STARTED; a cancel that finds it still null is seen by the starting thread
        private volatile CompletableFuture<R> future;

        Pending(Subscriber<? super H> subscriber, Supplier<? extends CompletionStage<R>> start,
                Function<R, H> handleOf) {
            this.subscriber = subscriber;
            this.start = start;
            this.handleOf = handleOf;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                if (cancelIfPending()) {
                    subscriber.onError(new IllegalArgumentException(
                            "Reactive Streams rule 3.9: request must be positive, was " + n));
                }
                return;
            }
            if (!state.compareAndSet(IDLE, STARTED)) {
                return;
            }
            CompletableFuture<R> started;
            try {
                started = start.get().toCompletableFuture();
            } catch (RuntimeException e) {
                // refused before it began: a closed client, a bad argument
                if (state.compareAndSet(STARTED, DONE)) {
                    subscriber.onError(e);
                }
                return;
            }
            future = started;
            if (state.get() == CANCELLED) {
                // cancelled between the start and the line above: that cancel found no future to cancel
                started.cancel(false);
            }
            started.whenComplete(this::complete);
        }

        @Override
        public void cancel() {
            cancelIfPending();
        }

        /** Moves IDLE or STARTED to CANCELLED, withdrawing a started acquisition; false if it had ended. */
        private boolean cancelIfPending() {
            if (state.compareAndSet(IDLE, CANCELLED)) {
                return true;
            }
            if (state.compareAndSet(STARTED, CANCELLED)) {
                CompletableFuture<R> started = future;
                if (started != null) {
                    started.cancel(false);
                }
                return true;
            }
            return false;
        }

        private void complete(R result, Throwable failure) {
            H handle = failure == null && result != null ? handleOf.apply(result) : null;
            if (!state.compareAndSet(STARTED, DONE)) {
                // cancelled: nobody takes this handle any more (a CancellationException needs nothing)
                if (handle != null) {
                    ReactiveLocks.releaseUnseen(handle);
                }
                return;
            }
            if (failure != null) {
                subscriber.onError(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
                return;
            }
            if (handle != null) {
                subscriber.onNext(handle);
            }
            subscriber.onComplete();
        }
    }
}
