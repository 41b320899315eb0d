package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.LockKind;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Read-write locks on Redlock over five independent servers: readers share across clients, a
 * writer excludes readers and readers exclude a writer, also while one or two nodes are down;
 * reentrancy, downgrade, refused upgrade, renewal of read leases and their loss.
 */
@Tag("redis")
class RedlockReadWriteLockTest extends RedlockTestBase {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);

    @Override
    int nodeCount() {
        return 5;
    }

    private static String readerOn(dev.relock.testredis.RedisServer node, String name, String owner) {
        return node.execute("HGET", "relock:{" + name + "}", "r|" + owner);
    }

    @Test
    void readersOfTwoClientsShareAndKeepAWriterOutUntilBothLeft() throws Exception {
        RelockClient first = newClient();
        RelockClient second = newClient();
        RelockClient writerClient = newClient();
        RelockReadWriteLock mine = first.readWriteLock("doc");
        RelockReadWriteLock theirs = second.readWriteLock("doc");
        RelockLock writer = writerClient.readWriteLock("doc").writeLock();

        LockHandle read1 = mine.readLock().acquire();
        LockHandle read2 = theirs.readLock().tryAcquire(HANG).orElseThrow();
        assertThat(first.inspect("doc").kind()).isEqualTo(LockKind.SHARED);
        assertThat(first.inspect("doc").holders()).hasSize(2);
        assertThat(writer.tryLock()).isFalse();
        assertThat(writerClient.lock("doc").tryLock(100, TimeUnit.MILLISECONDS))
                .as("the exclusive lock of the name is the write half").isFalse();

        CompletableFuture<Long> waitingWriter = inNewThread("writer", () -> {
            try (LockHandle held = writer.tryAcquire(HANG).orElseThrow()) {
                return held.fencingToken();
            }
        });
        read1.close();
        assertThat(waitingWriter).as("one reader is still in").isNotDone();
        read2.close();
        long writerToken = resultOf(waitingWriter);
        assertThat(writerToken).as("a writer's token exceeds every earlier reader's")
                .isGreaterThan(read1.fencingToken()).isGreaterThan(read2.fencingToken());
    }

    @ParameterizedTest(name = "{0} of 5 nodes killed")
    @ValueSource(ints = {1, 2})
    void exclusionHoldsWhileAMinorityIsDown(int killed) throws Exception {
        RelockClient a = newClient(b -> b.commandTimeout(COMMAND_TIMEOUT));
        RelockClient b = newClient(b2 -> b2.commandTimeout(COMMAND_TIMEOUT));
        for (int i = 0; i < killed; i++) {
            nodes.get(i).kill();
        }
        RelockReadWriteLock ofA = a.readWriteLock("minority");
        RelockReadWriteLock ofB = b.readWriteLock("minority");
        try (LockHandle read = ofA.readLock().acquire()) {
            assertThat(ofB.writeLock().tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
            try (LockHandle shared = ofB.readLock().tryAcquire(HANG).orElseThrow()) {
                assertThat(a.inspect("minority").holders()).hasSize(2);
            }
        }
        try (LockHandle written = ofB.writeLock().tryAcquire(HANG).orElseThrow()) {
            assertThat(ofA.readLock().tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(ofA.writeLock().tryLock()).isFalse();
        }
        assertThat(ofA.readLock().tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        ofA.readLock().unlock();
    }

    @ParameterizedTest(name = "{0} of 5 nodes killed")
    @ValueSource(ints = {0, 2})
    void readersAndWritersOfThreeClientsNeverOverlap(int killed) throws Exception {
        for (int i = 0; i < killed; i++) {
            nodes.get(i).kill();
        }
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RelockReadWriteLock lock = newClient(b -> b.commandTimeout(COMMAND_TIMEOUT)).readWriteLock("mixed");
            for (int t = 0; t < 2; t++) {
                boolean writes = t == 0;
                workers.add(inNewThread("client" + c + (writes ? "-writer" : "-reader"), () -> {
                    start.await();
                    for (int i = 0; i < 15; i++) {
                        if (writes) {
                            try (LockHandle held = lock.writeLock().acquire()) {
                                if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                writers.decrementAndGet();
                            }
                        } else {
                            try (LockHandle held = lock.readLock().acquire()) {
                                readers.incrementAndGet();
                                if (writers.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                readers.decrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
        }
        start.countDown();
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
        assertThat(violations).as("a writer inside with anyone else").hasValue(0);
    }

    @Test
    void aReadLeaseIsRenewedByMajorityAndItsLossIsReported() throws Exception {
        RelockClient client = newClient(b -> b.defaultLease(Duration.ofMillis(900)).commandTimeout(COMMAND_TIMEOUT));
        RelockLock read = client.readWriteLock("renewed").readLock();
        RelockLock writer = newClient().readWriteLock("renewed").writeLock();
        LockHandle held = read.acquire();
        String owner = client.heldLocks().get(0).owner();
        // three lease lengths: only renewal keeps the writer out so long
        assertThat(writer.tryLock(2700, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(held.state()).isEqualTo(dev.relock.LeaseState.HELD);
        await().atMost(HANG).until(() -> nodes.stream().filter(node -> readerOn(node, "renewed", owner) != null)
                .count() == 5);

        // one node forgets it: a renewal that a majority confirmed gives it back there
        nodes.get(4).flushAll();
        await().atMost(HANG).until(() -> readerOn(nodes.get(4), "renewed", owner) != null);
        assertThat(held.state()).isEqualTo(dev.relock.LeaseState.HELD);

        // a majority goes away (killed, not flushed one by one: a renewal between two flushes
        // would rightly give the key back to the first): no renewal is confirmed, the lease ends
        for (int i = 0; i < 3; i++) {
            nodes.get(i).kill();
        }
        await().atMost(HANG).until(() -> held.state() == dev.relock.LeaseState.LOST);
        assertThat(lost).anySatisfy(event -> assertThat(event.lockName()).isEqualTo("renewed"));
        assertThatThrownBy(held::close).isInstanceOf(dev.relock.LeaseLostException.class);
        for (int i = 0; i < 3; i++) {
            nodes.get(i).restart();
        }
        assertThat(writer.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        writer.unlock();
    }

    /** How many nodes hold a live mark of a waiting writer for {@code name}. */
    private long nodesMarkingAWaitingWriter(String name) {
        return nodes.stream().filter(node -> !"0".equals(node.execute("HLEN", "relock:{" + name + "}:expiry")))
                .count();
    }

    @Test
    void aWaitingWriterKeepsNewReadersOutSoReadersCannotStarveIt() throws Exception {
        RelockLock firstReader = newClient().readWriteLock("prefer").readLock();
        RelockClient writerClient = newClient();
        RelockLock writer = writerClient.readWriteLock("prefer").writeLock();
        RelockLock newReader = newClient().readWriteLock("prefer").readLock();
        firstReader.lock();
        CompletableFuture<Long> waitingWriter = inNewThread("writer", () -> {
            try (LockHandle held = writer.tryAcquire(HANG).orElseThrow()) {
                assertThat(newReader.tryLock()).as("a reader during the write").isFalse();
                return held.fencingToken();
            }
        });
        await().atMost(HANG).until(() -> nodesMarkingAWaitingWriter("prefer") >= 3);
        assertThat(writerClient.inspect("prefer").waiters()).isEqualTo(1);
        assertThat(newReader.tryLock(100, TimeUnit.MILLISECONDS)).as("a new reader queues behind the writer").isFalse();
        firstReader.unlock();
        assertThat(resultOf(waitingWriter)).isPositive();
        assertThat(newReader.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        newReader.unlock();
        assertThat(nodesMarkingAWaitingWriter("prefer")).isZero();
    }

    @Test
    void aWriterThatStopsWaitingLetsReadersInAndADowngradePassesAWaitingWriter() throws Exception {
        RelockLock firstReader = newClient().readWriteLock("gives-up").readLock();
        RelockLock writer = newClient().readWriteLock("gives-up").writeLock();
        RelockLock newReader = newClient().readWriteLock("gives-up").readLock();
        firstReader.lock();
        assertThat(writer.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        await().atMost(HANG).until(() -> nodesMarkingAWaitingWriter("gives-up") == 0);
        assertThat(newReader.tryLock()).as("no writer waits any more").isTrue();
        newReader.unlock();
        firstReader.unlock();

        // the write holder takes the read lock while another writer waits for it
        RelockReadWriteLock mine = newClient().readWriteLock("gives-up");
        mine.writeLock().lock();
        CompletableFuture<Boolean> otherWriter = inNewThread("other-writer", () -> {
            boolean got = writer.tryLock(HANG.toMillis(), TimeUnit.MILLISECONDS);
            writer.unlock();
            return got;
        });
        await().atMost(HANG).until(() -> nodesMarkingAWaitingWriter("gives-up") >= 3);
        assertThat(mine.readLock().tryLock()).as("a downgrade does not wait for a writer that waits for it").isTrue();
        mine.writeLock().unlock();
        mine.readLock().unlock();
        assertThat(resultOf(otherWriter)).isTrue();
    }

    @Test
    void forceUnlockOpensAReadHeldLock() throws Exception {
        RelockClient client = newClient(b -> b.defaultLease(Duration.ofMillis(900)));
        RelockLock read = client.readWriteLock("forced").readLock();
        Optional<LockHandle> held = read.tryAcquire(Duration.ZERO);
        assertThat(held).isPresent();
        assertThat(newClient().readWriteLock("forced").writeLock().forceUnlock()).isTrue();
        assertThat(client.inspect("forced").kind()).isEqualTo(LockKind.FREE);
        await().atMost(HANG).until(() -> held.get().state() == dev.relock.LeaseState.LOST);
    }
}
