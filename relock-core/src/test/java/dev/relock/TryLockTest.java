package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * tryLock against a waiter queued in Redis by hand, as acquire.lua queues one (the rest of tryLock and
 * tryAcquire, on every topology, is in contract/LockContract).
 */
@Tag("redis")
class TryLockTest extends OneServerTestBase {

    @Test
    void tryLockDoesNotJumpAQueuedWaiter() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("no-jumping");
        // a waiter of some other client, queued and not yet expired, but whose client never takes its
        // turn (as if it had crashed): written the way acquire.lua queues a waiter, with server time
        String absent = "00000000000000000000000000000000:1";
        admin().zadd(queueKey("no-jumping"), serverMillis() * 1000.0, absent);
        admin().hset("relock:{no-jumping}:expiry", absent, Long.toString(serverMillis() + 60_000));
        admin().pexpire(queueKey("no-jumping"), 60_000);
        admin().pexpire("relock:{no-jumping}:expiry", 60_000);

        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.tryLock()).as("free, but somebody is in line").isFalse();

        // a waiter is served once the absent head's entry has expired
        admin().hset("relock:{no-jumping}:expiry", absent, Long.toString(serverMillis() + 500));
        long start = System.nanoTime();
        assertThat(lock.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            assertThat(millisSince(start)).isLessThan(HANG.toMillis());
            assertThat(queue("no-jumping")).isEmpty();
        } finally {
            lock.unlock();
        }
    }

    private long serverMillis() {
        List<String> time = admin().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
