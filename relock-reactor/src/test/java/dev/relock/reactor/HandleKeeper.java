package dev.relock.reactor;

import dev.relock.LockHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * A subscriber of one acquisition that keeps every handle it is given, even one that comes after it cancelled (a
 * handle signalled as the cancel arrives belongs to the subscriber, as Reactive Streams has it): what a subscriber
 * that drops no handle owns, for a test to close.
 */
final class HandleKeeper implements CoreSubscriber<LockHandle> {

    /** Set once it cancelled, or the acquisition ended. */
    final AtomicBoolean settled = new AtomicBoolean();
    private final List<LockHandle> kept = new CopyOnWriteArrayList<>();
    private final AtomicReference<Subscription> subscription = new AtomicReference<>();

    @Override
    public void onSubscribe(Subscription s) {
        subscription.set(s);
        s.request(1);
    }

    @Override
    public void onNext(LockHandle handle) {
        kept.add(handle);
    }

    @Override
    public void onError(Throwable t) {
        settled.set(true);
    }

    @Override
    public void onComplete() {
        settled.set(true);
    }

    /** Cancels the subscription; from any thread, after it was subscribed. */
    void cancel() {
        subscription.get().cancel();
        settled.set(true);
    }

    /** Closes the handles kept so far and forgets them, so that each is closed here once. */
    void closeKept() {
        for (LockHandle handle : kept) {
            kept.remove(handle);
            handle.close();
        }
    }
}
