package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lock names beyond ASCII reach Redis as their UTF-8 bytes, in every argument relock sends (keys, owners, wake-up
 * routes), on a real server: relock's connections encode strings straight into the command buffer with an exact length
 * ({@code Utf8Codec}), and a wrong length would corrupt the command stream or split one name into two keys.
 */
@Tag("redis")
class NonAsciiNameTest extends OneServerTestBase {

    private static final String NAME = "zähler-Ω-🔒-日本";

    @Test
    void aNonAsciiNameIsOneLockAcrossClientsUnderItsUtf8Key() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        RelockLock held = first.lock(NAME);
        held.lock();
        try {
            // the admin connection is Lettuce's own UTF-8 codec: the key relock wrote is the name's UTF-8 bytes
            assertThat(admin().exists("relock:{" + NAME + "}")).isEqualTo(1L);
            assertThat(second.lock(NAME).tryLock()).isFalse();
            LockInfo info = second.inspect(NAME);
            assertThat(info.name()).isEqualTo(NAME);
            assertThat(info.isHeld()).isTrue();
            assertThat(second.list("zähler-*")).extracting(LockInfo::name).containsExactly(NAME);
        } finally {
            held.unlock();
        }
    }

    @Test
    void aWaiterOnANonAsciiNameIsHandedTheLock() throws Exception {
        RelockClient holder = newClient();
        RelockClient waiter = newClient();
        RelockLock held = holder.lock(NAME);
        held.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch mayUnlock = new CountDownLatch(1);
        CompletableFuture<Long> waited = holdingInNewThread("waiter", waiter.lock(NAME), HANG, acquired, mayUnlock);
        // the waiter queues under the same UTF-8 key before the holder lets go
        await().atMost(HANG).until(() -> queue(NAME).size() == 1);
        long holderToken = held.fencingToken().orElseThrow();
        held.unlock();
        assertThat(acquired.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        mayUnlock.countDown();
        assertThat(resultOf(waited)).isGreaterThan(holderToken);
    }
}
