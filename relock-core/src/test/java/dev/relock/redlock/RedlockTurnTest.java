package dev.relock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Turns on Redlock over five servers: a release keeps the lock for the writer that has waited longest (on every
 * node alike, ordered by when its wait began), so waiting writers take the lock in arrival order and the releaser
 * cannot take it straight back; a turn nobody takes ends after the handoff grace; and under contention between
 * clients the turns keep mutual exclusion and lose no lease.
 */
@Tag("redis")
class RedlockTurnTest extends RedlockTestBase {

    @Override
    int nodeCount() {
        return 5;
    }

    @Test
    void aReleaseKeepsTheLockForTheWaitingWriterNotTheReleaser() throws Exception {
        RelockLock holder = newClient().lock("turn");
        RelockClient waiterClient = newClient();
        holder.lock();
        CompletableFuture<LockHandle> waiting = waiterClient.lock("turn").acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> queuedOnEveryNode("turn") == 1);

        holder.unlock();
        assertThat(holder.tryLock()).as("the releaser may not take the waiter's turn").isFalse();
        LockHandle taken = resultOf(waiting);
        assertThat(nodes.stream().map(node -> holderOn(node, "turn"))
                .filter(owner -> owner != null && owner.startsWith(waiterClient.clientId())).count())
                .as("nodes the waiter holds").isGreaterThanOrEqualTo(3);
        taken.close();
        assertThat(holder.tryLock()).as("nobody waits any more").isTrue();
        holder.unlock();
    }

    @Test
    void waitingWritersTakeTheLockInTheOrderTheirWaitsBegan() throws Exception {
        RelockLock holder = newClient().lock("order");
        holder.lock();
        List<String> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waits = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String waiter = "waiter-" + i;
            RelockLock lock = newClient().lock("order");
            waits.add(inNewThread(waiter, () -> {
                lock.lock();
                order.add(waiter);
                lock.unlock();
                return null;
            }));
            int queued = i + 1;
            // the next wait begins only once this one has its place on every node
            await().atMost(HANG).until(() -> queuedOnEveryNode("order") == queued);
        }
        holder.unlock();
        for (CompletableFuture<Void> wait : waits) {
            resultOf(wait);
        }
        assertThat(order).containsExactly("waiter-0", "waiter-1", "waiter-2", "waiter-3");
    }

    @Test
    void aTurnNobodyTakesEndsAfterTheHandoffGrace() throws Exception {
        Duration grace = Duration.ofMillis(300);
        RelockLock holder = newClient(b -> b.handoffGrace(grace)).lock("lapsed");
        holder.lock();
        // a writer that queued and then went away without a word (its process died): its place and mark stay
        for (RedisServer node : nodes) {
            node.execute("ZADD", "relock:{lapsed}:queue", "1", "gone:1");
            node.execute("HSET", "relock:{lapsed}:expiry", "gone:1", "99999999999999");
        }
        RelockLock waiter = newClient(b -> b.handoffGrace(grace)).lock("lapsed");
        CompletableFuture<LockHandle> waiting = waiter.acquireAsync().toCompletableFuture();
        await().atMost(HANG).until(() -> queuedOnEveryNode("lapsed") == 2);

        long released = System.nanoTime();
        holder.unlock();
        // unlock() returns on a majority's replies: the release to the other nodes may still be on its way
        assertThat(nodes.stream().filter(node -> "gone:1".equals(node.execute("HGET", "relock:{lapsed}:expiry",
                "~g|next"))).count()).as("nodes that gave the lapsed writer its turn").isGreaterThanOrEqualTo(3);
        resultOf(waiting).close();
        assertThat(millisSince(released)).as("the waiter got in once the lapsed turn was over")
                .isGreaterThanOrEqualTo(grace.toMillis() - 50);
        // the writer that went away lost its place on the majority that let the waiter in (a node whose clock
        // had not yet ended the turn when the attempt reached it refused, and keeps the place until a later attempt)
        assertThat(nodes.stream().filter(node -> node.execute("ZSCORE", "relock:{lapsed}:queue", "gone:1") == null)
                .count()).as("nodes where the lapsed writer lost its place").isGreaterThanOrEqualTo(3);
    }

    @Test
    void clientsContendingThroughTurnsKeepExclusionAndLoseNoLease() throws Exception {
        int clients = 6;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        AtomicInteger tokenRegressions = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            RelockLock lock = newClient().lock("contended");
            workers.add(inNewThread("contender-" + i, () -> {
                int mine = 0;
                while (!stop.get()) {
                    try (LockHandle held = lock.acquire()) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (held.fencingToken() <= lastToken.getAndSet(held.fencingToken())) {
                            tokenRegressions.incrementAndGet();
                        }
                        // a few microseconds inside, so that a second holder would be seen
                        for (int spin = 0; spin < 2_000; spin++) {
                            Thread.onSpinWait();
                        }
                        mine++;
                        acquisitions.incrementAndGet();
                        inside.decrementAndGet();
                    }
                }
                return mine;
            }));
        }
        await().atMost(HANG).until(() -> acquisitions.get() >= 300);
        stop.set(true);
        int least = Integer.MAX_VALUE;
        for (CompletableFuture<Integer> worker : workers) {
            least = Math.min(least, resultOf(worker));
        }
        assertThat(overlaps).hasValue(0);
        assertThat(tokenRegressions).hasValue(0);
        assertThat(lost).isEmpty();
        assertThat(least).as("every client got its turns").isPositive();
    }

    @Test
    void twoWritersSplittingAnEvenNumberOfNodesGetTheLockInTurn() throws Exception {
        // four nodes up, a majority of three: two writers can each take two nodes and block each other
        nodes.get(4).kill();
        AtomicInteger acquisitions = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            RelockLock lock = newClient().lock("split");
            workers.add(inNewThread("splitter-" + i, () -> {
                int mine = 0;
                while (!stop.get()) {
                    lock.lock();
                    mine++;
                    acquisitions.incrementAndGet();
                    lock.unlock();
                }
                return mine;
            }));
        }
        await().atMost(HANG).until(() -> acquisitions.get() >= 100);
        stop.set(true);
        for (CompletableFuture<Integer> worker : workers) {
            assertThat(resultOf(worker)).as("each writer got the lock").isPositive();
        }
        assertThat(lost).isEmpty();
    }

    /** How many writers have a place in the queue of {@code name} on every node (the fewest of any node). */
    /**
     * Two writers that begin waiting at once stand in the same order on every node. A node dates a wait by its own
     * clock when the attempt arrives, which differs from node to node by the network's delays; were two writers
     * ordered differently on different nodes, each node would give its turn to its own first writer and, where a
     * majority needs every node that is up, neither would ever win (with 2 of 5 nodes down, one run in five of
     * RedlockLockTest#lockingGoesOnWhileAMinorityIsDown waited for ever so). So the client makes one place of the
     * nodes' dates and every node takes it: this test waits until each waiter's place is the same on every node.
     */
    @Test
    void writersThatWaitAtOnceHaveOnePlaceOnEveryNode() throws Exception {
        // a short renewed lease: the waiters try again when it would end, and their later attempts bring the place
        RelockLock holder = newClient(b -> b.defaultLease(Duration.ofSeconds(1))).lock("places");
        holder.lock();
        List<RelockClient> waiters = List.of(newClient(), newClient());
        List<CompletableFuture<LockHandle>> waits = new ArrayList<>();
        for (RelockClient waiter : waiters) {
            waits.add(waiter.lock("places").acquireAsync().toCompletableFuture());
        }

        await().atMost(HANG).untilAsserted(() -> {
            for (RelockClient waiter : waiters) {
                List<String> places = nodes.stream().map(node -> placeOn(node, "places", waiter.clientId())).toList();
                assertThat(places).as("the places of " + waiter.clientId() + " on the nodes")
                        .doesNotContainNull().containsOnly(places.get(0));
            }
        });

        holder.unlock();
        // one waiter takes the lock, then the other once the first gave it up (closing a handle twice does nothing)
        CompletableFuture.anyOf(waits.toArray(CompletableFuture[]::new)).get(HANG.toMillis(), TimeUnit.MILLISECONDS);
        waits.stream().filter(CompletableFuture::isDone).findFirst().orElseThrow().join().close();
        for (CompletableFuture<LockHandle> wait : waits) {
            resultOf(wait).close();
        }
    }

    /** The place in the queue of the lock {@code name} on {@code node} of the waiting writer of {@code clientId}. */
    private static String placeOn(RedisServer node, String name, String clientId) {
        String queue = "relock:{" + name + "}:queue";
        String members = node.execute("ZRANGE", queue, "0", "-1");
        for (String member : members.substring(1, members.length() - 1).split(", ")) {
            if (member.startsWith(clientId)) {
                return node.execute("ZSCORE", queue, member);
            }
        }
        return null;
    }

    /**
     * A writer that wins by majority while a minority refused it (there the turn was another writer's)
     * waits no more on that minority: before, its mark (1.5 leases for lock()), its place and soon the
     * turn stayed there, keeping new readers out and counting as a waiter in inspect.
     */
    @Test
    void aWriterThatWonByMajorityLeavesNoWaitingMarkWhereItWasRefused() throws Exception {
        RelockClient client = newClient();
        RedisServer refusing = nodes.get(0);
        // the turn on one node belongs to a writer that never comes: that node refuses everybody else
        refusing.execute("HSET", "relock:{won}:expiry", "~g|next", "absent:1", "~g|until", "99999999999999");
        try (LockHandle held = client.lock("won").acquire()) {
            String owner = client.heldLocks().get(0).owner();
            // the attempt is answered once a majority holds; the fourth node's reply may still be on its way
            await().atMost(HANG).untilAsserted(() -> {
                assertThat(nodesHolding("won")).as("nodes holding").isEqualTo(4);
                assertThat(refusing.execute("HEXISTS", "relock:{won}:expiry", owner)).as("mark").isEqualTo("0");
                assertThat(refusing.execute("ZSCORE", "relock:{won}:queue", owner)).as("place").isNull();
            });
            assertThat(client.inspect("won").waiters()).isZero();
        }
        refusing.execute("DEL", "relock:{won}:expiry");
    }
}
