package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import static org.awaitility.Awaitility.await;
import org.junit.jupiter.api.Test;

/** The single-server multi-lock's own mechanics: one script for free locks, readers, a failing member, bad input (the rest is in contract/MultiLockContract). */
class MultiLockTest extends OneServerTestBase {

    @Test
    void freeLocksAreTakenInOneScriptCall() throws Exception {
        RelockMultiLock three = newClient().multiLock("one-call:1", "one-call:2", "one-call:3");
        three.tryLock(); // loads the script; both paths are then warm
        three.unlock();
        long before = scriptCalls();
        try (MultiLockHandle held = three.acquire()) {
            assertThat(scriptCalls() - before).as("script calls to take 3 free locks").isEqualTo(1);
            assertThat(held.fencingTokens()).hasSize(3);
            assertThat(held.fencingTokens().values()).allMatch(token -> token > 0);
        }
    }

    @Test
    void aReaderOnOneNameMakesTheWholeSetWait() throws Exception {
        RelockReadWriteLock reader = newClient().readWriteLock("with-reader:2");
        reader.readLock().lock();
        RelockMultiLock both = newClient().multiLock("with-reader:1", "with-reader:2");
        CompletableFuture<Optional<MultiLockHandle>> waiting =
                inNewThread("multi", () -> both.tryAcquire(HANG));
        await().atMost(HANG).until(() -> queue("with-reader:2").size() == 1);
        assertThat(newClient().lock("with-reader:1").isLocked()).as("taken in order while waiting").isTrue();
        reader.readLock().unlock();
        Optional<MultiLockHandle> held = resultOf(waiting);
        assertThat(held).isPresent();
        resultOf(inNewThread("release", () -> {
            held.get().close();
            return null;
        }));
    }


    /**
     * Issue 13, item 6 (reproduced): {@code lock()} took "a", then "b" refused the thread's write lock (it holds a
     * read lock on "b": an upgrade), and "a" stayed held and renewed for as long as the client lived. Every way of
     * taking the set gives back what it took when a later member throws.
     */
    @Test
    void aMemberThatThrowsGivesBackWhatTheSetHadTaken() throws Exception {
        RelockClient client = newClient();
        RelockMultiLock both = client.multiLock("leak:a", "leak:b");
        RelockLock reading = client.readWriteLock("leak:b").readLock();
        List<String> failures = resultOf(inNewThread("multi-upgrade", () -> {
            List<String> failed = new ArrayList<>();
            reading.lock();
            try {
                for (ThrowingRunnable attempt : List.<ThrowingRunnable>of(both::lock, both::lockInterruptibly,
                        both::tryLock, () -> both.tryLock(1, TimeUnit.SECONDS), both::acquire,
                        () -> both.tryAcquire(Duration.ofSeconds(1)))) {
                    try {
                        attempt.run();
                        failed.add("an attempt did not throw");
                    } catch (IllegalMonitorStateException expected) {
                        if (client.lock("leak:a").isHeldByCurrentThread() || newClient().lock("leak:a").isLocked()) {
                            failed.add("leak:a kept after " + expected.getMessage());
                        }
                    }
                }
            } finally {
                reading.unlock();
            }
            return failed;
        }));
        assertThat(failures).isEmpty();
        assertThat(client.heldLocks()).isEmpty();
    }

    /** An acquisition of the whole set, as a lambda. */
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void badInputIsRefusedClearly() {
        RelockClient client = newClient();
        assertThatThrownBy(() -> client.multiLock()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one");
        assertThatThrownBy(() -> client.multiLock("a", "a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice");
        assertThatThrownBy(() -> client.multiLock("a", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.multiLock((String[]) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.multiLock("a", " ")).isInstanceOf(IllegalArgumentException.class);
    }
}
