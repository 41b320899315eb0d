package dev.relock.docs;

import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The before and after of docs/migrating-from-redisson.md, compiled against Redisson and relock (never run): each
 * region between markers is its block line for line (relock-core's DocSnippetsTest). The abstract methods stand
 * for the reader's own code.
 */
abstract class RedissonMigration {

    void before() throws InterruptedException {
        // snippet docs/migrating-from-redisson.md#before-and-after
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:6379");
        config.setLockWatchdogTimeout(30_000);
        RedissonClient redisson = Redisson.create(config);

        RLock lock = redisson.getLock("invoice:42");
        if (lock.tryLock(5, TimeUnit.SECONDS)) {              // renewed by the watchdog
            try {
                bill(42);
            } finally {
                lock.unlock();
            }
        }

        RFencedLock account = redisson.getFencedLock("account:17");
        Long token = account.lockAndGetToken();
        try {
            write(17, token);
        } finally {
            account.unlock();
        }

        RSemaphore exports = redisson.getSemaphore("exports");
        exports.trySetPermits(4);
        exports.acquire();
        try {
            runExport();
        } finally {
            exports.release();
        }

        RCountDownLatch ready = redisson.getCountDownLatch("nightly:ready");
        ready.trySetCount(3);
        ready.countDown();
        ready.await(10, TimeUnit.MINUTES);

        redisson.shutdown();
        // snippet end
    }

    @SuppressWarnings("try")
    void after() throws InterruptedException {
        // snippet docs/migrating-from-redisson.md#before-and-after~2
        RelockClient relock = RelockClient.builder()
                .redisUri("redis://127.0.0.1:6379")
                .defaultLease(Duration.ofSeconds(30))              // was lockWatchdogTimeout
                .leaseLostListener(lost -> alert(lost.lockName() + " lost: " + lost.reason()))
                .build();

        RelockLock lock = relock.lock("invoice:42");
        if (lock.tryLock(5, TimeUnit.SECONDS)) {              // renewed by the lease keeper
            try {
                bill(42);
            } finally {
                lock.unlock();
            }
        }

        try (LockHandle account = relock.lock("account:17").acquire()) {   // every lock has fencing tokens
            write(17, account.fencingToken());
        }

        RelockSemaphore exports = relock.semaphore("exports");
        exports.trySetPermits(4);
        try (PermitHandle permit = exports.acquire(1)) {      // leased: a crashed holder's permit comes back
            runExport();
        }

        RelockCountDownLatch ready = relock.countDownLatch("nightly:ready");
        ready.trySetCount(3);
        ready.countDown();
        ready.await(10, TimeUnit.MINUTES);

        relock.close();                                       // releases what it still holds
        // snippet end
    }

    abstract void bill(long invoice);

    abstract void write(long account, long fencingToken);

    abstract void runExport();

    abstract void alert(String message);
}
