package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The read-write lock, as every deployment must serve it: sharing, exclusion, writer preference, re-entry, tokens. */
abstract class ReadWriteLockContract extends ContractBase {

    @Test
    void readersOfTwoClientsShareTheLockAndAWriterWaitsForBoth() throws Exception {
        RelockLock first = newClient().readWriteLock("doc").readLock();
        RelockLock second = newClient().readWriteLock("doc").readLock();
        RelockClient writerClient = newClient();
        RelockLock writer = writerClient.readWriteLock("doc").writeLock();
        LockHandle firstRead = first.acquire();
        LockHandle secondRead = resultOf(inNewThread("second-reader",
                () -> second.tryAcquire(HANG).orElseThrow(() -> new AssertionError("no second reader"))));
        assertThat(writerClient.inspect("doc").holders()).as("two readers at once").hasSize(2);
        assertThat(secondRead.fencingToken()).as("readers draw from the one counter too")
                .isGreaterThan(firstRead.fencingToken());
        assertThat(first.fencingToken()).as("a reader's own token").hasValue(firstRead.fencingToken());
        assertThat(writerClient.readWriteLock("doc").readLock().fencingToken()).as("the highest reader's, seen from outside")
                .hasValue(secondRead.fencingToken());
        assertThat(writer.tryLock(200, TimeUnit.MILLISECONDS)).as("a writer while two read").isFalse();
        firstRead.close();
        assertThat(writer.tryLock()).as("a writer while one still reads").isFalse();
        secondRead.close();
        assertThat(writer.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(writer.fencingToken().orElseThrow()).as("the writer's token after both readers'")
                .isGreaterThan(secondRead.fencingToken()).isGreaterThan(firstRead.fencingToken());
        writer.unlock();
    }

    @Test
    void aWriterKeepsReadersOfOtherClientsOutAndLetsThemInAtRelease() throws Exception {
        RelockLock writer = newClient().readWriteLock("written").writeLock();
        RelockClient readerClient = newClient();
        writer.lock();
        RelockLock refused = readerClient.readWriteLock("written").readLock();
        assertThat(refused.tryLock()).isFalse();
        assertThat(refused.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
        List<CompletableFuture<Long>> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            readers.add(inNewThread("reader-" + i, () -> {
                RelockLock read = readerClient.readWriteLock("written").readLock();
                read.lock();
                try {
                    return read.fencingToken().orElseThrow();
                } finally {
                    read.unlock();
                }
            }));
        }
        if (deployment().countsWaitingReaders()) {
            await().atMost(HANG).until(() -> readerClient.inspect("written").waiters() == 2);
        }
        assertThat(readers).noneMatch(CompletableFuture::isDone);
        long writeToken = writer.fencingToken().orElseThrow();
        writer.unlock();
        for (CompletableFuture<Long> reader : readers) {
            assertThat(resultOf(reader)).isGreaterThan(writeToken);
        }
    }

    @Test
    void readersAndWritersOfThreeClientsNeverOverlap() throws Exception {
        AtomicInteger readersInside = new AtomicInteger();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger writeSections = new AtomicInteger();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockReadWriteLock lock = newClient().readWriteLock("mixed");
            for (int kind = 0; kind < 2; kind++) {
                boolean writes = kind == 0;
                workers.add(inNewThread((writes ? "writer-" : "reader-") + c, () -> {
                    RelockLock half = writes ? lock.writeLock() : lock.readLock();
                    for (int i = 0; i < 8; i++) {
                        half.lock();
                        try {
                            int writersNow = writes ? writersInside.incrementAndGet() : writersInside.get();
                            int readersNow = writes ? readersInside.get() : readersInside.incrementAndGet();
                            if (writes ? writersNow != 1 || readersNow != 0 : writersNow != 0) {
                                violations.incrementAndGet();
                            }
                            if (writes) {
                                writeSections.incrementAndGet();
                            }
                            Thread.yield();
                            (writes ? writersInside : readersInside).decrementAndGet();
                        } finally {
                            half.unlock();
                        }
                    }
                    return null;
                }));
            }
        }
        for (CompletableFuture<Void> worker : workers) {
            worker.get(2 * HANG.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(violations).as("a writer inside with anyone else").hasValue(0);
        assertThat(writeSections).as("write sections").hasValue(3 * 8);
    }

    @Test
    void aWriterGetsInDespiteReadersThatNeverLeaveTheLockFree() throws Exception {
        AtomicBoolean written = new AtomicBoolean();
        List<CompletableFuture<Integer>> readers = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            RelockClient client = newClient();
            for (int t = 0; t < 2; t++) {
                readers.add(inNewThread("reader-" + c + "-" + t, () -> {
                    RelockLock read = client.readWriteLock("busy").readLock();
                    int reads = 0;
                    while (!written.get()) {
                        read.lock();
                        try {
                            reads++;
                            Thread.sleep(20); // on purpose: readers overlap, so the lock is never free
                        } finally {
                            read.unlock();
                        }
                    }
                    return reads;
                }));
            }
        }
        RelockClient writerClient = newClient();
        await().atMost(HANG).until(() -> writerClient.inspect("busy").isHeld());
        try {
            assertThat(resultOf(inNewThread("writer", () -> {
                RelockLock write = writerClient.readWriteLock("busy").writeLock();
                boolean in = write.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
                if (in) {
                    write.unlock();
                }
                return in;
            }))).as("the writer got in while readers kept coming").isTrue();
        } finally {
            written.set(true);
        }
        for (CompletableFuture<Integer> reader : readers) {
            assertThat(resultOf(reader)).as("reads of one reader").isPositive();
        }
    }

    @Test
    void aWaitingWriterKeepsNewReadersOutButNotReentrantOnes() throws Exception {
        RelockReadWriteLock holder = newClient().readWriteLock("writer-first");
        RelockClient writerClient = newClient();
        RelockLock lateReader = newClient().readWriteLock("writer-first").readLock();
        holder.readLock().lock();
        CountDownLatch writerIn = new CountDownLatch(1);
        CountDownLatch writerMayLeave = new CountDownLatch(1);
        CompletableFuture<Void> writer = inNewThread("writer", () -> {
            RelockLock write = writerClient.readWriteLock("writer-first").writeLock();
            write.lock();
            writerIn.countDown();
            writerMayLeave.await();
            write.unlock();
            return null;
        });
        await().atMost(HANG).until(() -> writerClient.inspect("writer-first").waiters() == 1);
        assertThat(resultOf(inNewThread("late-reader", () -> lateReader.tryLock(300, TimeUnit.MILLISECONDS))).booleanValue())
                .as("a new reader behind a waiting writer").isFalse();
        assertThat(holder.readLock().tryLock()).as("the reader already in may re-enter").isTrue();
        holder.readLock().unlock();
        holder.readLock().unlock();
        assertThat(writerIn.await(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("the writer got in after the reader left").isTrue();
        writerMayLeave.countDown();
        resultOf(writer);
        assertThat(lateReader.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        lateReader.unlock();
    }

    @Test
    void reentryDowngradeAndARefusedUpgrade() throws Exception {
        RelockClient client = newClient();
        RelockReadWriteLock lock = client.readWriteLock("rules");
        RelockLock read = lock.readLock();
        RelockLock write = lock.writeLock();
        read.lock();
        read.lock();
        assertThat(read.getHoldCount()).isEqualTo(2);
        assertThat(write.getHoldCount()).isZero();
        long asked = System.nanoTime();
        assertThatThrownBy(write::lock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("rules").hasMessageContaining("upgrad");
        assertThatThrownBy(write::tryLock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("rules").hasMessageContaining("upgrad");
        assertThatThrownBy(() -> write.tryLock(5, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> write.tryAcquire(Duration.ofSeconds(1))).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(millisSince(asked)).as("ms until four upgrades were refused: at once, not after a wait").isLessThan(5_000);
        read.unlock();
        read.unlock();
        assertThat(read.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(read::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("read lock 'rules'");

        write.lock();
        write.lock();
        assertThat(write.getHoldCount()).isEqualTo(2);
        write.unlock();
        assertThat(write.isHeldByCurrentThread()).as("after one of two unlocks").isTrue();
        long writeToken = write.fencingToken().orElseThrow();
        read.lock();
        assertThat(read.fencingToken().orElseThrow()).as("the downgrade's read token").isGreaterThan(writeToken);
        RelockLock otherReader = newClient().readWriteLock("rules").readLock();
        assertThat(otherReader.tryLock()).as("another reader while the downgrading writer still writes").isFalse();
        write.unlock();
        assertThat(write.isHeldByCurrentThread()).isFalse();
        assertThat(read.isHeldByCurrentThread()).as("downgraded").isTrue();
        assertThat(client.inspect("rules").kind()).isEqualTo(LockKind.SHARED);
        RelockLock otherWriter = newClient().readWriteLock("rules").writeLock();
        assertThat(otherWriter.tryLock()).as("the downgraded reader still keeps writers out").isFalse();
        assertThat(otherReader.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("readers share with the downgraded one")
                .isTrue();
        otherReader.unlock();
        read.unlock();
        assertThat(otherWriter.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        otherWriter.unlock();

        if (!deployment().forceUnlockUnderReadersIsReported()) {
            return;
        }
        // an operator opens the lock under two readers: each finds out at its unlock
        read.lock();
        otherReader.lock();
        assertThat(otherWriter.forceUnlock()).isTrue();
        assertThat(client.inspect("rules").isHeld()).isFalse();
        assertThatThrownBy(otherReader::unlock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(read::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("rules");
    }

    @Test
    void explicitLeasesOfADeadReaderAndOfADowngradedWriteHoldEndWhileTheOtherHoldsLiveOn() throws Exception {
        // a reader nobody renews, as if its process had died, beside a live one
        RelockClient aliveClient = newClient();
        RelockLock alive = aliveClient.readWriteLock("reader-crash").readLock();
        RelockLock dead = newClient().readWriteLock("reader-crash").readLock();
        alive.lock();
        assertThat(resultOf(inNewThread("dead-reader", () -> dead.tryLock(0, 500, TimeUnit.MILLISECONDS)))).isTrue();
        assertThat(aliveClient.inspect("reader-crash").holders()).hasSize(2);
        // a writer that downgraded: an explicit write lease beside a renewed read hold (issue 12, part 3: the read
        // hold's renewals kept the write hold in Redis after its lease was reported lost, and other readers out)
        RelockReadWriteLock downgraded = newClient(b -> b.defaultLease(Duration.ofMillis(900))).readWriteLock("downgraded");
        RelockLock otherReader = newClient().readWriteLock("downgraded").readLock();
        assertThat(downgraded.writeLock().tryLock(0, 500, TimeUnit.MILLISECONDS)).isTrue();
        downgraded.readLock().lock();

        await().atMost(HANG).until(() -> aliveClient.inspect("reader-crash").holders().size() == 1);
        LockInfo info = aliveClient.inspect("reader-crash");
        assertThat(info.kind()).isEqualTo(LockKind.SHARED);
        assertThat(info.holders().keySet()).allMatch(owner -> owner.startsWith(aliveClient.clientId() + ":"));
        assertThat(alive.isHeldByCurrentThread()).isTrue();
        alive.unlock();
        assertThat(aliveClient.inspect("reader-crash").isHeld()).isFalse();

        await().atMost(HANG).until(() -> lost.stream().anyMatch(event -> event.lockName().equals("downgraded")));
        assertThat(otherReader.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).as("another reader once the write lease ran out")
                .isTrue();
        otherReader.unlock();
        assertThat(downgraded.readLock().isHeldByCurrentThread()).as("the read hold lives on").isTrue();
        assertThatThrownBy(downgraded.writeLock()::unlock).isInstanceOf(LeaseLostException.class);
        downgraded.readLock().unlock();
    }

    @Test
    void aReadHoldReleasedAfterADelayLeavesNoKeyOnceTheDelayIsOver() throws Exception {
        // a lease far longer than the wait below: the keys must go with the delay, not with the lease once renewed
        RelockClient client = newClient(b -> b.defaultLease(Duration.ofSeconds(60)));
        RelockLock reader = client.readWriteLock("fading").readLock();
        RelockLock writer = client.readWriteLock("fading-write").writeLock();
        LockHandle reading = reader.acquire();
        LockHandle writing = writer.acquire();
        // a delay the next two round trips fit in on a loaded machine (200 ms did not, once: CI beside a fault campaign)
        reading.releaseAfter(Duration.ofSeconds(2));
        writing.releaseAfter(Duration.ofSeconds(2));
        assertThat(keysOfLock("fading")).as("keys of the read-locked lock right after releaseAfter").isNotEmpty();
        // nobody touches the lock meanwhile: on Redlock a node no later attempt reaches keeps what the release left
        Polling.soon("keys gone after the delay").untilAsserted(() -> {
            assertThat(keysOfLock("fading")).isEmpty();
            assertThat(keysOfLock("fading-write")).isEmpty();
        });
    }

    @Test
    void aReadersExtendedLeaseKeepsAWriterOutPastItsFirstEndAndTheReaderIsToldBeforeTheWriterGetsIn()
            throws Exception {
        // leases of seconds, and both clients made before the first one starts: a machine that stalls the test's
        // thread for a few hundred ms between the acquisition and the extension does not end the first lease
        RelockClient readerClient = newClient();
        RelockLock writer = newClient().readWriteLock("extended-read").writeLock();
        LockHandle reading = readerClient.readWriteLock("extended-read").readLock()
                .tryAcquire(Duration.ZERO, Duration.ofMillis(1000)).orElseThrow();
        AtomicLong toldAt = new AtomicLong();
        reading.whenLost().thenRun(() -> toldAt.set(System.nanoTime()));

        long extendedAt = System.nanoTime();
        reading.extendLease(Duration.ofMillis(2500));
        assertThat(readerClient.heldLocks()).singleElement().satisfies(held -> {
            assertThat(held.renewed()).isFalse();
            assertThat(held.remainingLease()).isGreaterThan(Duration.ofMillis(1000));
        });

        // once the extended read lease ran out in Redis, or (Redlock) the reader's validity ended (2.5 s - 75 ms of
        // drift) and it gave the lock up on every node
        assertThat(writer.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long acquiredAt = System.nanoTime();
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt - extendedAt)).as("ms from the extension to the writer")
                .isGreaterThanOrEqualTo(2500 - 75);
        assertThat(toldAt.get()).as("when the reader was told").isPositive().isLessThanOrEqualTo(acquiredAt);
        assertThatThrownBy(() -> reading.extendLease(Duration.ofSeconds(5))).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("extended-read");
        assertThat(writer.isHeldByCurrentThread()).as("the late extension left the writer alone").isTrue();
        writer.unlock();
        assertThatThrownBy(reading::close).isInstanceOf(LeaseLostException.class);
        assertThat(lost).as("the loss is told once").hasSize(1);
    }

    @Test
    void theExclusiveLockIsTheWriteHalf() throws Exception {
        RelockClient client = newClient();
        RelockLock exclusive = client.lock("halves");
        RelockLock reader = newClient().readWriteLock("halves").readLock();
        exclusive.lock();
        assertThat(reader.tryLock()).as("a reader while the exclusive lock is held").isFalse();
        assertThat(client.readWriteLock("halves").writeLock().isHeldByCurrentThread()).isTrue();
        exclusive.unlock();
        assertThat(reader.tryLock()).isTrue();
        assertThat(exclusive.tryLock()).as("the exclusive lock while a reader holds").isFalse();
        reader.unlock();
    }
}
