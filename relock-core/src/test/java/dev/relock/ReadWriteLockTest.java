package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The read-write lock on one Redis where it differs from Redlock (the rest is in contract/ReadWriteLockContract):
 * release-after of a downgraded writer's write hold, refused because both holds live in one hash.
 */
@Tag("redis")
class ReadWriteLockTest extends OneServerTestBase {

    /**
     * Review finding (issue 12, part 3): release-after of a downgraded writer's write hold cut the lock's hash, and
     * with it the owner's read hold, to the delay. The read hold lives in the same hash, so a delayed end of the
     * write hold alone cannot be kept there: it is refused, the read hold untouched.
     */
    @Test
    void releaseAfterOfADowngradedWriteHoldIsRefusedAndLeavesTheReadHold() throws Exception {
        RelockClient client = newClient(builder -> builder.defaultLease(Duration.ofSeconds(30)));
        RelockReadWriteLock lock = client.readWriteLock("downgraded-release-after");
        LockHandle write = lock.writeLock().acquire();
        lock.readLock().lock();
        assertThatThrownBy(() -> write.releaseAfter(Duration.ofMillis(50)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("read lock");
        assertThat(admin().pttl("relock:{downgraded-release-after}")).as("the hash lives as long as the read hold")
                .isGreaterThan(Duration.ofSeconds(20).toMillis());
        lock.readLock().unlock();
        assertThat(write.isValid()).isTrue();
        write.close();
        assertThat(lock.writeLock().isLocked()).isFalse();
    }
}
