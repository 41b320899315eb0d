package dev.relock.reactor;

import dev.relock.LockHandle;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One asynchronous operation of relock-core (an acquisition, a latch's or a condition's wait) as a publisher of at most
 * one value: each subscription starts its own on its first request and emits the value (a handle, whether a wait was
 * signalled), nothing (an acquisition's wait ended first) or the failure.
 *
 * <p>Design notes. A subscription moves through {@code IDLE → STARTED → DONE}, or to {@code CANCELLED} from
 * either of the first two, by compare-and-set only, so that for every value exactly one of two things happens:
 * the thread that moves {@code STARTED → DONE} signals it (from then on it belongs to the subscriber), or the
 * completion finds {@code CANCELLED} and hands it to {@code unclaimed} (which releases a handle, or passes a signal
 * on). A cancel while {@code STARTED} also cancels the core's future, which withdraws the waiter from the lock's
 * queue (or ends the wait); a hold the core acquires at that moment is released by the core, and one it had already
 * handed to the future is released here. What remains is the window every Reactive Streams source has: a cancel that
 * arrives while the value is being signalled; the downstream operator gets the value then ({@code Flux.usingWhen},
 * under {@link ReactiveLocks#withLock}, releases a handle).
 *
 * <p>Signals come from the thread that completes the core's future: a Lettuce event-executor thread, or the
 * requesting thread when the outcome is known at once.
 *
 * @param <R> what the core's future completes with: the handle, an Optional of it, or a wait's outcome
 * @param <T> what is emitted
 */
final class Acquisition<R, T> implements Publisher<T> {

    private final Supplier<? extends CompletionStage<R>> start;
    private final Function<R, T> valueOf;
    private final Consumer<? super T> unclaimed;

    /**
     * @param start starts one operation of the core, returning its stage (whose future cancels it)
     * @param valueOf what to emit for the stage's result, or null for nothing
     * @param unclaimed what becomes of a value nobody takes (its subscriber cancelled as it came)
     */
    Acquisition(Supplier<? extends CompletionStage<R>> start, Function<R, T> valueOf, Consumer<? super T> unclaimed) {
        this.start = start;
        this.valueOf = valueOf;
        this.unclaimed = unclaimed;
    }

    /** An acquisition of a handle: a handle nobody takes is released. */
    static <R, H extends LockHandle> Acquisition<R, H> ofHandle(Supplier<? extends CompletionStage<R>> start,
            Function<R, H> handleOf) {
        return new Acquisition<>(start, handleOf, ReactiveLocks::releaseUnseen);
    }

    @Override
    public void subscribe(Subscriber<? super T> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        subscriber.onSubscribe(new Pending<>(subscriber, start, valueOf, unclaimed));
    }

    private static final class Pending<R, T> implements Subscription {

        private static final int IDLE = 0;
        private static final int STARTED = 1;
        private static final int DONE = 2;
        private static final int CANCELLED = 3;

        private final Subscriber<? super T> subscriber;
        private final Supplier<? extends CompletionStage<R>> start;
        private final Function<R, T> valueOf;
        private final Consumer<? super T> unclaimed;
        private final AtomicInteger state = new AtomicInteger(IDLE);
        // set once, after IDLE → STARTED; a cancel that finds it still null is seen by the starting thread
        private volatile CompletableFuture<R> future;

        Pending(Subscriber<? super T> subscriber, Supplier<? extends CompletionStage<R>> start,
                Function<R, T> valueOf, Consumer<? super T> unclaimed) {
            this.subscriber = subscriber;
            this.start = start;
            this.valueOf = valueOf;
            this.unclaimed = unclaimed;
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
            T value = failure == null && result != null ? valueOf.apply(result) : null;
            if (!state.compareAndSet(STARTED, DONE)) {
                // cancelled: nobody takes this value any more (a CancellationException needs nothing)
                if (value != null) {
                    unclaimed.accept(value);
                }
                return;
            }
            if (failure != null) {
                subscriber.onError(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
                return;
            }
            if (value != null) {
                subscriber.onNext(value);
            }
            subscriber.onComplete();
        }
    }
}
