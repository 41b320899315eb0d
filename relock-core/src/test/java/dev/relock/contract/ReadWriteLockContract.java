package dev.relock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
        assertThatThrownBy(write::tryLock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("rules").hasMessageContaining("upgrad");
        assertThatThrownBy(() -> write.tryAcquire(Duration.ofSeconds(1))).isInstanceOf(IllegalMonitorStateException.class);
        read.unlock();
        read.unlock();
        assertThat(read.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(read::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("read lock 'rules'");

        write.lock();
        read.lock();
        write.unlock();
        assertThat(read.isHeldByCurrentThread()).as("downgraded").isTrue();
        assertThat(String.valueOf(client.inspect("rules").kind())).isEqualTo("shared");
        RelockLock otherWriter = newClient().readWriteLock("rules").writeLock();
        assertThat(otherWriter.tryLock()).as("the downgraded reader still keeps writers out").isFalse();
        RelockLock otherReader = newClient().readWriteLock("rules").readLock();
        assertThat(otherReader.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        otherReader.unlock();
        read.unlock();
        assertThat(otherWriter.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        otherWriter.unlock();
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
