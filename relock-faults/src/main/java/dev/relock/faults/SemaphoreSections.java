package dev.relock.faults;

import dev.relock.LeaseLostException;
import dev.relock.PermitHandle;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.Optional;

/**
 * The semaphore workload's loop, one per worker thread until the run ends: take one permit of {@value #PERMITS}
 * (renewed lease), work {@link #WORK_MILLIS}, give it back, each step logged. More threads ask than there are permits,
 * so a permit out too many shows as a section beside {@value #PERMITS} others, and a permit a dead holder kept shows
 * as a worker waiting while fewer were out.
 */
final class SemaphoreSections {

    static final String SEMAPHORE = "campaign-permits";
    static final int PERMITS = 3;
    /** Longer than a lock section's work, so that the permits are often all out. */
    static final long WORK_MILLIS = 5;

    private SemaphoreSections() {
    }

    static void run(WorkerThread t) throws InterruptedException {
        RelockSemaphore semaphore = t.client().semaphore(SEMAPHORE);
        Claim claim = Claim.permit(SEMAPHORE, PERMITS);
        setPermits(t, semaphore);
        while (t.running()) {
            t.log(EventKind.REQUEST, 0, claim.detail());
            PermitHandle permit;
            try {
                Optional<PermitHandle> acquired = semaphore.tryAcquire(1, Duration.ofNanos(t.nanosLeft()));
                if (acquired.isEmpty()) {
                    t.log(EventKind.ERROR, 0, "not acquired before the run ended");
                    continue;
                }
                permit = acquired.get();
            } catch (IllegalStateException e) {
                // no number of permits in Redis: never set yet, or lost with Redis's data; the first to set it wins
                t.failed("", e);
                setPermits(t, semaphore);
                continue;
            } catch (RuntimeException e) {
                t.failed("", e);
                continue;
            }
            t.acquired(SEMAPHORE, permit.fencingToken(), claim);
            Thread.sleep(WORK_MILLIS); // the section's work
            t.log(EventKind.RELEASING, permit.fencingToken(), "");
            try {
                permit.close();
                t.log(EventKind.RELEASED, permit.fencingToken(), "");
            } catch (LeaseLostException e) {
                t.log(EventKind.RELEASE_LOST, permit.fencingToken(), WorkerThread.describe(e));
            } catch (RuntimeException e) {
                t.log(EventKind.ERROR, permit.fencingToken(), "release: " + WorkerThread.describe(e));
            }
        }
    }

    /** Sets the number of permits if none is set; every thread of every worker may, only the first does. */
    static void setPermits(WorkerThread t, RelockSemaphore semaphore) throws InterruptedException {
        try {
            semaphore.trySetPermits(PERMITS);
        } catch (RuntimeException e) {
            t.failed("setting the permits: ", e);
        }
    }
}
