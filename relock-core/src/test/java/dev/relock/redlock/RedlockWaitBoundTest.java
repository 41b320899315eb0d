package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import dev.relock.StderrCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Found by the fault campaign (issue 15): while a majority of five nodes was killed and restarted empty over and
 * over, one worker's {@code tryLock(wait)} never returned — neither when the others kept taking and releasing the
 * lock nor after its wait ended. A wait must end by its deadline (plus a command timeout for the attempt then in
 * flight) whatever the nodes do. Here three clients contend as the campaign's workers do, while a majority is
 * killed and brought back empty; every {@code tryLock} must return within its wait and a generous bound. This
 * test has not reproduced the campaign's hang (nor in 870 s of longer runs with 3 s and 40 s waits); it bounds what
 * the backstop in {@code SteppedAcquisition.run} guarantees, and with {@code -Drelock.test.redlockWaitBound.seconds}
 * it runs as long as asked, printing every thread's stack if a call outlives its bound ({@code
 * -Drelock.internal.traceAcquisitions=true} adds each acquisition's latest events to its ERROR lines).
 */
@Tag("redis")
class RedlockWaitBoundTest extends RedlockTestBase {

    private static final Duration LEASE = Duration.ofMillis(1500);
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    // the campaign's workers waited until the end of the run: minutes, through many faults
    private static final Duration WAIT = Duration.ofSeconds(Long.getLong("relock.test.redlockWaitBound.wait", 3));
    // far more than a command timeout past the wait: only a stuck acquisition takes this long
    private static final Duration LATE = Duration.ofSeconds(5);
    private static final long RUN_SECONDS = Long.getLong("relock.test.redlockWaitBound.seconds", 15);

    @Override
    int nodeCount() {
        return 5;
    }

    @Test
    void everyWaitEndsByItsDeadlineWhileAMajorityRestartsEmpty() throws Exception {
        // the backstop of a wait that does not end (SteppedAcquisition.run) logs an ERROR: caught here, as a failure
        try (StderrCapture logged = new StderrCapture()) {
            runWorkersThroughRestarts(logged);
        }
    }

    private void runWorkersThroughRestarts(StderrCapture logged) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_SECONDS);
        // by worker: when its tryLock call began (System.nanoTime()), or 0 between calls
        AtomicLongArray callStarts = new AtomicLongArray(3);
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            RelockClient client = newClient(b -> b.defaultLease(LEASE).commandTimeout(COMMAND_TIMEOUT));
            RelockLock lock = client.lock("restarting");
            int worker = w;
            workers.add(inNewThread("worker-" + w, () -> {
                int sections = 0;
                while (System.nanoTime() - end < 0) {
                    callStarts.set(worker, System.nanoTime());
                    boolean held = false;
                    try {
                        held = lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (IllegalStateException | RelockException e) {
                        // no majority answered (the faults), or the test closed the client after a stuck call
                    } finally {
                        callStarts.set(worker, 0);
                    }
                    if (held) {
                        sections++;
                        try {
                            Thread.sleep(1); // the campaign's section: some work under the lock
                            lock.unlock();
                        } catch (RelockException e) {
                            // lost or unreachable: the hold is gone from this thread all the same
                        }
                    }
                }
                return sections;
            }));
        }
        Random random = new Random(20261124);
        String stuck = null;
        while (System.nanoTime() - end < 0 && stuck == null) {
            List<Integer> indexes = new ArrayList<>(List.of(0, 1, 2, 3, 4));
            Collections.shuffle(indexes, random);
            for (int i : indexes.subList(0, 3)) {
                nodes.get(i).kill();
            }
            // longer than the lease: down past every hold, as the campaign's scenario has them
            stuck = stuckCallAfter(Duration.ofSeconds(2), callStarts);
            for (int i : indexes.subList(0, 3)) {
                nodes.get(i).restart();
            }
            if (stuck == null) {
                stuck = stuckCallAfter(Duration.ofMillis(1_000 + random.nextInt(2_000)), callStarts);
            }
        }
        assertThat(stuck).as("a tryLock that outlived its wait by %s ms", LATE.toMillis()).isNull();
        // Issue 15's bug (a Redlock wait left with no timer and no attempt in flight; caught here in CI on 24 Nov by
        // the backstop, with the state line): the acquisition now checks after every event that something will wake
        // it, and mends it at once if not, with an ERROR of its own. The backstop must never have to end a wait; a
        // mended one is shown (its line names the step that broke the rule) but does not fail the test.
        List<String> backstopped = logged.text().lines()
                .filter(line -> line.contains("the acquisition has not; giving it up")
                        || line.contains("an error in handling an event")).toList();
        assertThat(backstopped).as("waits the backstop had to end, or that failed on an Error").isEmpty();
        List<String> mended = logged.text().lines().filter(line -> line.contains("that it recovered from")).toList();
        if (!mended.isEmpty()) {
            System.err.println("KNOWN BUG (issue 15), mended: acquisitions left with nothing to wake them:\n"
                    + String.join("\n", mended));
        }
        int sections = 0;
        for (CompletableFuture<Integer> worker : workers) {
            try {
                // the last calls end within their bound too
                sections += worker.get(WAIT.plus(LATE).toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("a last tryLock outlived its wait by " + LATE.toMillis() + " ms; threads:\n"
                        + threadDump(), e);
            }
        }
        assertThat(sections).as("sections held between the faults").isPositive();
    }

    /**
     * Watches the workers' calls for {@code period}: the first worker whose call has lasted longer than its wait and
     * {@link #LATE}, with every thread's stack at that moment, or null.
     */
    private static String stuckCallAfter(Duration period, AtomicLongArray callStarts) throws InterruptedException {
        long until = System.nanoTime() + period.toNanos();
        while (System.nanoTime() - until < 0) {
            for (int w = 0; w < callStarts.length(); w++) {
                long started = callStarts.get(w);
                if (started != 0 && System.nanoTime() - started > WAIT.plus(LATE).toNanos()) {
                    return "worker-" + w + " in tryLock for " + millisSince(started) + " ms; threads:\n"
                            + threadDump();
                }
            }
            Thread.sleep(100); // on purpose: the watch looks every 100 ms for the whole period
        }
        return null;
    }

    private static String threadDump() {
        StringBuilder dump = new StringBuilder();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            dump.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
            for (StackTraceElement frame : stack) {
                dump.append("    at ").append(frame).append('\n');
            }
        });
        return dump.toString();
    }
}
