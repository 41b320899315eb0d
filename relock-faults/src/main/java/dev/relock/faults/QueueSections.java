package dev.relock.faults;

import dev.relock.LeaseLostException;
import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

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
 */
final class QueueSections {

    static final String QUEUE = "campaign:queue";
    static final String CONDITION = "items";
    /** A consumer's await: far longer than a signal takes, so a consumer still waiting seconds after one is owed it. */
    static final long AWAIT_MILLIS = 10_000;
    static final int PRODUCER_PAUSE_MILLIS = 200;

    private QueueSections() {
    }

    static void run(WorkerThread t) throws InterruptedException {
        RelockLock lock = t.client().lock(FaultWorker.LOCK);
        RelockCondition items = lock.newCondition(CONDITION);
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
            release(t, lock, token);
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

    private static void release(WorkerThread t, RelockLock lock, long token) {
        t.log(EventKind.RELEASING, token, "");
        try {
            lock.unlock();
            t.log(EventKind.RELEASED, token, "");
        } catch (LeaseLostException e) {
            t.log(EventKind.RELEASE_LOST, token, WorkerThread.describe(e));
        } catch (RuntimeException e) {
            t.log(EventKind.ERROR, token, "release: " + WorkerThread.describe(e));
        }
    }
}
