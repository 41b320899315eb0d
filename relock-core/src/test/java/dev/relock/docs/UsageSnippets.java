package dev.relock.docs;

import dev.relock.LockHandle;
import dev.relock.MultiLockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The Java blocks of docs/usage.md, compiled: each region between markers is its block line for line
 * (DocSnippetsTest). The methods give the fragments the variables they use; the stubs at the end stand for the
 * reader's own code.
 */
abstract class UsageSnippets {

    void theLock() {
        // snippet docs/usage.md#the-lock
        try (RelockClient client = RelockClient.create("redis://127.0.0.1:6379")) {
            Lock lock = client.lock("orders:42");          // a java.util.concurrent.locks.Lock
            lock.lock();
            try {
                // one holder at a time, across threads, processes and machines
            } finally {
                lock.unlock();
            }
        }
        // snippet end
    }

    @SuppressWarnings("try")
    void readWriteLocksSemaphoresMultiLocks(RelockClient client, long amount) throws InterruptedException {
        // snippet docs/usage.md#read-write-locks-semaphores-multi-locks
        RelockReadWriteLock report = client.readWriteLock("report:2026-11");
        try (LockHandle reading = report.readLock().acquire()) {    // many readers at once, across clients
            render(report.name());
        }
        try (LockHandle writing = report.writeLock().acquire()) {   // one writer, no readers: client.lock("report:2026-11")
            regenerate(report.name());
        }

        RelockSemaphore exports = client.semaphore("exports");
        exports.trySetPermits(4);         // once, shared by every client
        try (PermitHandle permits = exports.acquire(2)) {   // leased: a crashed holder's permits come back
            runExport();
        }

        try (MultiLockHandle both = client.multiLock("account:17", "account:42").acquire()) {
            transfer(17, 42, amount);     // all or none; taken in one global order, so never a deadlock
        }
        // snippet end
    }

    void conditions(RelockClient client) throws InterruptedException {
        // snippet docs/usage.md#conditions
        RelockLock order = client.lock("order:42");
        Condition paid = order.newCondition("paid");  // the same wait set in every client that names it

        order.lock();                     // a consumer, in any service
        try {
            while (!isPaid(42)) {
                paid.await();             // gives up the lock, waits for a signal, takes the lock back
            }
            ship(42);
        } finally {
            order.unlock();
        }

        order.lock();                     // the payment service
        try {
            markPaid(42);
            paid.signalAll();             // every waiter gets the lock after this holder lets it go
        } finally {
            order.unlock();
        }
        // snippet end
    }

    CompletionStage<Boolean> conditionsForAHandle(RelockClient client, Executor workers) {
        // snippet docs/usage.md#conditions~2
        RelockLock order = client.lock("order:42");
        CompletionStage<Boolean> shipped = order.acquireAsync()    // a handle's hold: no thread owns it
                .thenCompose(held -> order.newCondition("paid").awaitAsync(held, Duration.ofMinutes(5))
                        .thenApplyAsync(signalled -> {     // off relock's threads: ship() may block
                            try (held) {                   // the handle holds the lock again here
                                if (!isPaid(42)) {
                                    return false;          // timed out, or woken spuriously: check and await again
                                }
                                ship(42);
                                return true;
                            }
                        }, workers));
        // snippet end
        return shipped;
    }

    CompletionStage<Boolean> countDownLatchesWithoutAThread(RelockClient client) {
        // snippet docs/usage.md#count-down-latches~2
        CompletionStage<Boolean> allReady = client.countDownLatch("nightly:ready")
                .awaitAsync(Duration.ofMinutes(10));   // no thread waits; cancel its future to stop waiting
        // snippet end
        return allReady;
    }

    void countDownLatches(RelockClient client) throws InterruptedException {
        // snippet docs/usage.md#count-down-latches
        RelockCountDownLatch ready = client.countDownLatch("nightly:ready");
        ready.trySetCount(3);                          // the coordinator, before the parties start
        // ... in each of three services, when its part is done:
        client.countDownLatch("nightly:ready").countDown();
        // ... wherever the rest must wait for all three:
        if (!client.countDownLatch("nightly:ready").await(Duration.ofMinutes(10))) {
            throw new IllegalStateException("not all parties ready in time");
        }
        // snippet end
    }

    abstract void render(String report);

    abstract void regenerate(String report);

    abstract void runExport();

    abstract void transfer(long from, long to, long amount);

    abstract boolean isPaid(long order);

    abstract void ship(long order);

    abstract void markPaid(long order);
}
