package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import dev.relock.RelockLock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Conditions of write locks where the deployment serves them (one Redis: standalone, Sentinel, Cluster), and a
 * clear refusal where it does not (Redlock), with {@link java.util.concurrent.locks.Condition}'s semantics across
 * threads and clients.
 */
abstract class ConditionContract extends ContractBase {

    @Test
    void aDeploymentServesConditionsOrRefusesThemWithTheReason() throws Exception {
        RelockClient client = newClient();
        RelockLock lock = client.lock("conditioned");
        if (!deployment().servesConditions()) {
            assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("conditions").hasMessageContaining("'conditioned'");
            return;
        }
        RelockCondition condition = lock.newCondition();
        assertThat(condition.name()).isEqualTo(RelockCondition.DEFAULT_NAME);
        assertThat(condition.lockName()).isEqualTo("conditioned");
        assertThat(lock.newCondition("paid").name()).isEqualTo("paid");
        assertThat(condition.waiters()).isEmpty();
        // only the holder may await or signal
        assertThatThrownBy(condition::await).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'conditioned'");
        assertThatThrownBy(condition::signal).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(condition::signalAll).isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        assertThat(resultOf(inNewThread("not-the-holder", () -> {
            try {
                condition.signal();
                return null;
            } catch (IllegalMonitorStateException e) {
                return e;
            }
        }))).as("a signal by a thread that does not hold the lock").isInstanceOf(IllegalMonitorStateException.class);
        condition.signal(); // nobody waits: nothing happens
        lock.unlock();
        assertThatThrownBy(() -> lock.newCondition("a b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a b'");
        assertThatThrownBy(() -> lock.newCondition("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.newCondition("x".repeat(65))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.newCondition(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.readWriteLock("conditioned").readLock().newCondition())
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("read lock");
        assertThat(client.readWriteLock("conditioned").writeLock().newCondition().name()).isEqualTo("default");
    }

    @Test
    void aSignalAfterTheAwaitStartedIsNotLostAndTheHoldCountAndAGreaterTokenComeBack() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        RelockLock lock = newClient().lock("order");
        RelockCondition paid = lock.newCondition("paid");
        CompletableFuture<long[]> waiter = inNewThread("waiter", () -> {
            lock.lock();
            lock.lock();
            long before = lock.fencingToken().orElseThrow();
            paid.await();
            long[] after = {before, lock.fencingToken().orElseThrow(), lock.getHoldCount(),
                lock.isHeldByCurrentThread() ? 1 : 0};
            lock.unlock();
            lock.unlock();
            return after;
        });
        Polling.soon("the waiter in the wait set").until(() -> paid.waiters().size() == 1);
        // the waiter gave up both holds: another client gets the lock
        RelockLock other = newClient().lock("order");
        assertThat(other.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        RelockCondition othersPaid = other.newCondition("paid");
        othersPaid.signal();
        assertThat(paid.waiters()).as("the signalled waiter left the wait set").isEmpty();
        assertThat(waiter).as("the signalled waiter before the signaller released").isNotDone();
        other.unlock();
        long[] after = resultOf(waiter);
        assertThat(after[1]).as("token after the await").isGreaterThan(after[0]);
        assertThat(after[2]).as("hold count after the await").isEqualTo(2);
        assertThat(after[3]).as("held after the await").isEqualTo(1);
    }

    @Test
    void anAwaitWhoseTimeRunsOutReturnsFalseWithTheLockHeldAgain() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        RelockLock lock = newClient().lock("slow-order");
        RelockCondition condition = lock.newCondition();
        lock.lock();
        long start = System.nanoTime();
        assertThat(condition.await(200, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(millisSince(start)).isBetween(150L, HANG.toMillis());
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(condition.awaitNanos(TimeUnit.MILLISECONDS.toNanos(50))).isLessThanOrEqualTo(0);
        assertThat(condition.waiters()).isEmpty();
        lock.unlock();
    }

    @Test
    void aSignalReachesTheAsyncAwaitOfAHandleWhichHoldsTheLockAgain() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        RelockLock lock = newClient().lock("async-order");
        RelockCondition paid = lock.newCondition("paid");
        LockHandle held = resultOf(lock.acquireAsync().toCompletableFuture());
        long before = held.fencingToken();
        CompletableFuture<Boolean> awaited = paid.awaitAsync(held, HANG.multipliedBy(3)).toCompletableFuture();
        Polling.soon().until(() -> paid.waiters().size() == 1);
        RelockLock signaller = newClient().lock("async-order");
        LockHandle signalling = resultOf(signaller.acquireAsync().toCompletableFuture());
        signaller.newCondition("paid").signal(signalling);
        signalling.close();
        assertThat(resultOf(awaited)).isTrue();
        assertThat(held.isValid()).isTrue();
        assertThat(held.fencingToken()).isGreaterThan(before);
        held.close();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void anInterruptedAwaitTakesTheLockBackBeforeItThrows() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        RelockLock lock = newClient().lock("interrupted-order");
        RelockCondition condition = lock.newCondition();
        AtomicReference<Thread> thread = new AtomicReference<>();
        CompletableFuture<Object> waiter = inNewThread("waiter", () -> {
            thread.set(Thread.currentThread());
            lock.lock();
            lock.lock();
            try {
                condition.await();
                return "returned";
            } catch (InterruptedException e) {
                Object held = List.of(lock.isHeldByCurrentThread(), lock.getHoldCount());
                lock.unlock();
                lock.unlock();
                return held;
            }
        });
        Polling.soon().until(() -> condition.waiters().size() == 1);
        // meanwhile the lock is free: this thread takes it, so the interrupted waiter must wait for it
        lock.lock();
        thread.get().interrupt();
        Polling.soon().until(() -> condition.waiters().isEmpty());
        assertThat(waiter).isNotDone();
        lock.unlock();
        assertThat(resultOf(waiter)).isEqualTo(List.of(true, 2));
    }

    @Test
    void signalAllWakesEveryWaiterOfEveryClientAndSignalOneInJoiningOrder() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        List<String> woken = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Object>> waiters = new ArrayList<>();
        RelockLock signaller = newClient().lock("gate");
        for (int i = 0; i < 3; i++) {
            RelockLock lock = newClient().lock("gate");
            String name = "w" + i;
            int before = i;
            waiters.add(inNewThread(name, () -> {
                lock.lock();
                lock.newCondition().await();
                woken.add(name);
                lock.unlock();
                return null;
            }));
            Polling.soon().until(() -> signaller.newCondition().waiters().size() == before + 1);
        }
        signaller.lock();
        signaller.newCondition().signal();
        signaller.unlock();
        resultOf(waiters.get(0));
        assertThat(woken).containsExactly("w0");
        signaller.lock();
        signaller.newCondition().signalAll();
        signaller.unlock();
        for (CompletableFuture<Object> waiter : waiters) {
            resultOf(waiter);
        }
        assertThat(woken).containsExactly("w0", "w1", "w2");
    }

    /** A bounded buffer of 2 items, under one lock with two conditions, across 3 clients of 2 producers and 2 consumers. */
    @Test
    void aBoundedBufferAcrossClientsLosesAndRepeatsNoItem() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        int itemsPerProducer = 10;
        ArrayDeque<String> buffer = new ArrayDeque<>(); // guarded by the distributed lock alone
        List<String> taken = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Object>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockLock lock = newClient().lock("buffer");
            RelockCondition notFull = lock.newCondition("not-full");
            RelockCondition notEmpty = lock.newCondition("not-empty");
            for (int p = 0; p < 2; p++) {
                String producer = "c" + c + "p" + p;
                workers.add(inNewThread(producer, () -> {
                    for (int i = 0; i < itemsPerProducer; i++) {
                        lock.lock();
                        try {
                            while (buffer.size() == 2) {
                                notFull.await();
                            }
                            buffer.addLast(producer + "-" + i);
                            notEmpty.signal();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
            for (int k = 0; k < 2; k++) {
                workers.add(inNewThread("c" + c + "k" + k, () -> {
                    for (int i = 0; i < itemsPerProducer; i++) {
                        lock.lock();
                        try {
                            while (buffer.isEmpty()) {
                                notEmpty.await();
                            }
                            taken.add(buffer.removeFirst());
                            notFull.signal();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Object> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
        List<String> expected = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < itemsPerProducer; i++) {
                    expected.add("c" + c + "p" + p + "-" + i);
                }
            }
        }
        assertThat(taken).as("items taken").hasSize(expected.size()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(buffer).isEmpty();
    }

    @Test
    void closingTheClientOfAWaiterFailsItsAwait() throws Exception {
        assumeThat(deployment().servesConditions()).isTrue();
        RelockClient client = newClient();
        RelockLock lock = client.lock("closing-order");
        RelockCondition condition = lock.newCondition();
        CompletableFuture<Object> waiter = inNewThread("waiter", () -> {
            lock.lock();
            condition.await();
            return "returned";
        });
        Polling.soon().until(() -> condition.waiters().size() == 1);
        client.close();
        assertThatThrownBy(() -> resultOf(waiter)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
