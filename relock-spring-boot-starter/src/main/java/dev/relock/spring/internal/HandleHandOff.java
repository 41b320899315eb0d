package dev.relock.spring.internal;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.reactor.ReactiveLocks;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * An acquisition whose outcome (its handle, its end without one, its failure) is signalled on a thread of
 * {@link Schedulers#boundedElastic()} instead of the thread that acquired (a Lettuce event executor of the relock
 * client), so that what the subscriber does then, such as calling a locked method in {@code usingWhen}'s resource
 * closure or a fallback when the lock was not acquired, never holds up that client's timers, replies and hand-overs.
 *
 * <p>Design notes. Unlike {@code publishOn}, which drops a value whose subscriber cancels before it is delivered,
 * this never loses a handle: the state moves {@code WAITING → PENDING} (the outcome came, its delivery is scheduled)
 * {@code → DELIVERED}, or to {@code CANCELLED} from either of the first two, by compare-and-set only, so exactly one
 * of two things happens to a handle: the delivery that moves {@code PENDING → DELIVERED} signals it (from then on it
 * is the subscriber's), or the cancel that moves {@code PENDING → CANCELLED} releases it here; a handle that comes
 * after a cancel is released here too. The outcome's fields are written before {@code WAITING → PENDING} and read
 * only after it.
 */
final class HandleHandOff implements CoreSubscriber<LockHandle>, Subscription {

    private static final Logger LOG = LoggerFactory.getLogger(HandleHandOff.class);

    private static final int WAITING = 0;
    private static final int PENDING = 1;
    private static final int DELIVERED = 2;
    private static final int CANCELLED = 3;

    private final CoreSubscriber<? super LockHandle> actual;
    private final AtomicInteger state = new AtomicInteger(WAITING);
    // set in onSubscribe, before the subscriber can request or cancel
    private Subscription upstream;
    // the outcome: a handle, a failure, or neither (not acquired)
    private LockHandle handle;
    private Throwable failure;

    private HandleHandOff(CoreSubscriber<? super LockHandle> actual) {
        this.actual = actual;
    }

    /** {@code acquisition}, its outcome signalled on a thread of {@link Schedulers#boundedElastic()}. */
    static Mono<LockHandle> onBoundedElastic(Mono<LockHandle> acquisition) {
        return acquisition.transform(Operators.<LockHandle, LockHandle>lift(
                (scannable, subscriber) -> new HandleHandOff(subscriber)));
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription subscription) {
        upstream = subscription;
        actual.onSubscribe(this);
    }

    @Override
    public void onNext(LockHandle held) {
        handle = held;
        if (!state.compareAndSet(WAITING, PENDING)) {
            // cancelled while the acquisition signalled it
            release(held);
            return;
        }
        schedule();
    }

    @Override
    public void onError(Throwable error) {
        failure = error;
        if (state.compareAndSet(WAITING, PENDING)) {
            schedule();
        }
    }

    @Override
    public void onComplete() {
        // after a handle, the handle's delivery completes (the state is no longer WAITING)
        if (state.compareAndSet(WAITING, PENDING)) {
            schedule();
        }
    }

    private void schedule() {
        try {
            // asked for on each hand-off: Reactor replaces its shared schedulers after a shutdownNow() or a reset
            Schedulers.boundedElastic().schedule(this::deliver);
        } catch (RejectedExecutionException e) {
            if (handle != null) {
                if (state.compareAndSet(PENDING, DELIVERED)) {
                    release(handle);
                    actual.onError(e);
                }
            } else {
                // nothing to hand over but the end: here, then
                deliver();
            }
        }
    }

    private void deliver() {
        if (!state.compareAndSet(PENDING, DELIVERED)) {
            return;
        }
        if (handle != null) {
            actual.onNext(handle);
            actual.onComplete();
        } else if (failure != null) {
            actual.onError(failure);
        } else {
            actual.onComplete();
        }
    }

    @Override
    public void request(long n) {
        upstream.request(n);
    }

    @Override
    public void cancel() {
        if (state.compareAndSet(WAITING, CANCELLED)) {
            upstream.cancel();
        } else if (state.compareAndSet(PENDING, CANCELLED) && handle != null) {
            release(handle);
        }
    }

    /** Releases a handle nobody takes any more, off the calling thread; a failure is logged, nobody is left to tell. */
    private static void release(LockHandle held) {
        ReactiveLocks.release(held).subscribe(null, error -> {
            if (error instanceof LeaseLostException) {
                LOG.debug("lock '{}' released after its subscriber cancelled: its lease had been lost", held.name());
            } else {
                LOG.warn("lock '{}' could not be released after its subscriber cancelled; its lease runs out on its"
                        + " own", held.name(), error);
            }
        });
    }
}
