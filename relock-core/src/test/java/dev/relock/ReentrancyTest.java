package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On one Redis a thread's re-entries are counted in the lock hash too, under its owner id (the rest of
 * re-entry, on every topology, is in contract/LockContract; Redlock counts re-entries in the client only).
 */
@Tag("redis")
class ReentrancyTest extends OneServerTestBase {

    @Test
    void holdsAreCountedInRedisToo() {
        RelockClient client = newClient();
        RelockLock lock = client.lock("counted");
        lock.lock();
        lock.lock();
        lock.lock();
        String owner = client.clientId() + ":" + Thread.currentThread().getId();
        assertThat(admin().hget("relock:{counted}", owner)).isEqualTo("3");
        lock.unlock();
        assertThat(admin().hget("relock:{counted}", owner)).isEqualTo("2");
        lock.unlock();
        lock.unlock();
        assertThat(admin().exists("relock:{counted}")).isZero();
    }
}
