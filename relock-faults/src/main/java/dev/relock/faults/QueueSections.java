package dev.relock.faults;

import dev.relock.LockHandle;
import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The condition workload's loops: producers and consumers of a list on the resource Redis, {@value #QUEUE}, guarded by
 * the lock {@value FaultWorker#LOCK} and its condition {@value #CONDITION}. Thread 1 of each worker produces, the
 * others consume.
 *
 * <p>A producer, in its section, pushes one item ({@code <thread id>-<n>}, unique in the run) and signals; then,
 * outside the lock, pauses up to {@link #PRODUCER_PAUSE_MILLIS}, so consumers often find the queue empty and wait. A
 * consumer, in its section, awaits (timed, {@link #AWAIT_MILLIS} or the run's end) while the queue is empty, then
 * reads the head and removes it in two commands: only the lock keeps two consumers from taking one item. The steps
 * are logged so that {@link QueueChecker} can tell an item lost, one taken twice, and a signal lost.
 *
 * <p>Thread 2 consumes with the thread's lock and {@code await}. Thread 3 consumes with a handle
 * ({@code tryAcquireAsync}, {@code awaitAsync}), and ends one await in {@value #ENDED_EARLY_ONE_IN} early, up to
 * {@value #END_EARLY_MAX_MILLIS} ms in: by closing the handle or by cancelling the await's stage, half each. A signal
 * such an await took must still reach a consumer that waits (the relock-core review found a close racing the await's
 * take-back that left the lock held by nobody, renewed).
 */
final class QueueSections {

    static final String QUEUE = "campaign:queue";
    static final String CONDITION = "items";
    /** A consumer's await: far longer than a signal takes, so a consumer still waiting seconds after one is owed it. */
    static final long AWAIT_MILLIS = 10_000;
    static final int PRODUCER_PAUSE_MILLIS = 200;
    static final int ENDED_EARLY_ONE_IN = 4;
    static final int END_EARLY_MAX_MILLIS = 30;
    /** How long past the run's end a handle's await may take to complete before the worker reports it hung. */
    private static final long AWAIT_END_GRACE_MILLIS = 30_000;

    private QueueSections() {
    }

    static void run(WorkerThread t) throws InterruptedException {
        RelockLock lock = t.client().lock(FaultWorker.LOCK);
        RelockCondition items = lock.newCondition(CONDITION);
        if (t.index() == 3) {
            consumeByHandle(t, lock, items);
            return;
        }
        boolean producer = t.index() == 1;
        long produced = 0;
        while (t.running()) {
            OptionalLong taken = t.lockFor(lock, Claim.exclusive(FaultWorker.LOCK));
            if (taken.isEmpty()) {
                continue;
            }
            long token = taken.getAsLong();
            try {
                token = producer ? produce(t, items, token, t.id() + "-" + ++produced) : consume(t, lock, items, token);
            } catch (RuntimeException e) {
                t.log(EventKind.ERROR, token, "section: " + WorkerThread.describe(e));
            }
            t.release(token, lock::unlock);
            if (producer) {
                Thread.sleep(t.random().nextInt(PRODUCER_PAUSE_MILLIS)); // the schedule, outside the lock
            }
        }
    }

    private static long produce(WorkerThread t, RelockCondition items, long token, String item) {
        t.resource().rpush(QUEUE, item);
        t.log(EventKind.PRODUCED, token, item);
        items.signal();
        t.log(EventKind.SIGNALLED, token, item);
        return token;
    }

    /** Awaits while the queue is empty, then takes its head; returns the token of the hold it ends with. */
    private static long consume(WorkerThread t, RelockLock lock, RelockCondition items, long token)
            throws InterruptedException {
        String head = t.resource().lindex(QUEUE, 0);
        while (head == null && t.running()) {
            long timeout = Math.min(AWAIT_MILLIS, TimeUnit.NANOSECONDS.toMillis(t.nanosLeft()) + 1);
            t.log(EventKind.AWAIT_START, token, Long.toString(timeout));
            boolean signalled = items.await(timeout, TimeUnit.MILLISECONDS);
            t.log(EventKind.AWAIT_END, 0, signalled ? "signalled" : "timed out");
            token = lock.fencingToken().orElse(0);
            t.acquired(FaultWorker.LOCK, token, Claim.exclusive(FaultWorker.LOCK));
            head = t.resource().lindex(QUEUE, 0);
        }
        if (head != null) {
            t.log(EventKind.CONSUMING, token, head);
            // what was removed: another item than the head read only if another consumer took that one meanwhile
            t.log(EventKind.CONSUMED, token, String.valueOf(t.resource().lpop(QUEUE)));
        }
        return token;
    }

    /** Thread 3's loop: a consumer's sections, each with a handle of its own. */
    private static void consumeByHandle(WorkerThread t, RelockLock lock, RelockCondition items)
            throws InterruptedException {
        Claim claim = Claim.exclusive(FaultWorker.LOCK);
        while (t.running()) {
            t.log(EventKind.REQUEST, 0, claim.detail());
            Optional<LockHandle> taken;
            try {
                taken = lock.tryAcquireAsync(Duration.ofNanos(t.nanosLeft())).toCompletableFuture().get();
            } catch (ExecutionException e) {
                t.failed("", e.getCause());
                continue;
            }
            if (taken.isEmpty()) {
                t.log(EventKind.ERROR, 0, "not acquired before the run ended");
                continue;
            }
            LockHandle held = taken.get();
            t.acquired(FaultWorker.LOCK, held.fencingToken(), claim);
            boolean holding;
            try {
                holding = consumeWithHandle(t, items, held);
            } catch (RuntimeException | ExecutionException | TimeoutException e) {
                t.log(EventKind.ERROR, held.fencingToken(), "section: " + WorkerThread.describe(
                        e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e));
                holding = true; // closed below: it gives up whatever the handle still holds
            }
            if (holding) {
                t.release(held.fencingToken(), held::close);
            }
        }
    }

    /**
     * As {@link #consume}, with a handle's awaits, some of them ended early.
     *
     * @return whether the handle is still to close: false when an await was ended early and its section with it
     */
    private static boolean consumeWithHandle(WorkerThread t, RelockCondition items, LockHandle held)
            throws InterruptedException, ExecutionException, TimeoutException {
        String head = t.resource().lindex(QUEUE, 0);
        while (head == null && t.running()) {
            long timeout = Math.min(AWAIT_MILLIS, TimeUnit.NANOSECONDS.toMillis(t.nanosLeft()) + 1);
            t.log(EventKind.AWAIT_START, held.fencingToken(), Long.toString(timeout));
            CompletableFuture<Boolean> awaited = items.awaitAsync(held, Duration.ofMillis(timeout))
                    .toCompletableFuture();
            if (t.random().nextInt(ENDED_EARLY_ONE_IN) == 0) {
                Thread.sleep(t.random().nextInt(END_EARLY_MAX_MILLIS + 1)); // the schedule: how far in it ends
                if (t.random().nextBoolean()) {
                    // whether or not the await had taken the lock back, the close gives up what the handle has
                    held.close();
                    t.log(EventKind.AWAIT_END, 0, "ended by a close");
                    return false;
                }
                if (awaited.cancel(false)) {
                    t.log(EventKind.AWAIT_END, 0, "ended by a cancel");
                    return false; // the handle is closed
                }
                // the stage had completed: the handle holds the lock again, as after any await
            }
            boolean signalled = awaited.get(TimeUnit.NANOSECONDS.toMillis(t.nanosLeft()) + AWAIT_END_GRACE_MILLIS,
                    TimeUnit.MILLISECONDS);
            t.log(EventKind.AWAIT_END, 0, signalled ? "signalled" : "timed out");
            t.acquired(FaultWorker.LOCK, held.fencingToken(), Claim.exclusive(FaultWorker.LOCK));
            head = t.resource().lindex(QUEUE, 0);
        }
        if (head != null) {
            t.log(EventKind.CONSUMING, held.fencingToken(), head);
            t.log(EventKind.CONSUMED, held.fencingToken(), String.valueOf(t.resource().lpop(QUEUE)));
        }
        return true;
    }
}
