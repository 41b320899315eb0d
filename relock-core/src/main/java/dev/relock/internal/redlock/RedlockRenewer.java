package dev.relock.internal.redlock;

import dev.relock.LeaseState;
import dev.relock.internal.Hold;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease keeper of a Redlock client: one thread that keeps every renewed hold's lease alive on
 * a majority of nodes and notices holds whose lease ended while held.
 *
 * <p>Every lease/3 it sends all renewals due in batches of {@value #BATCH} holds, one renew.lua
 * call per node per batch, to every node at once, and counts each hold's replies across the
 * nodes: a majority of 1s extends the hold's validity from the send time, and the nodes that had
 * lost the key get it back (restore.lua); so many refusals that a majority can no longer confirm
 * it means the lease is lost now; otherwise (nodes unreachable) the
 * hold keeps its validity and is lost when that ends. Explicit leases are not renewed and are
 * lost when their validity ends while still held.
 *
 * <p>Why not {@code dev.relock.internal.LeaseKeeper}: it renews over one connection and reads one
 * reply per hold; a Redlock renewal is a vote of N nodes per hold.
 */
final class RedlockRenewer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedlockRenewer.class);
    static final int BATCH = 500;

    private final RedlockClient client;
    private final ScheduledExecutorService thread;

    RedlockRenewer(RedlockClient client, long periodMillis) {
        this.client = client;
        this.thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread t = new Thread(runnable, "relock-redlock-renewer-" + client.clientId().substring(0, 8));
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::renewAll, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** One pass over the client's holds. Renewer thread only. */
    private void renewAll() {
        try {
            long now = System.nanoTime();
            List<Hold> batch = new ArrayList<>();
            for (Hold hold : client.holds().all()) {
                if (hold.state() != LeaseState.HELD || hold.releasing()) {
                    continue;
                }
                if (hold.leaseEndedBy(now)) {
                    client.reportLost(hold, hold.renewed()
                            ? "no majority of nodes confirmed a renewal before its lease of " + hold.leaseMillis()
                                    + " ms (minus clock drift) ran out"
                            : "its explicit lease of " + hold.leaseMillis() + " ms (minus clock drift) ran out"
                                    + " while it was held");
                    continue;
                }
                if (hold.renewed()) {
                    batch.add(hold);
                    if (batch.size() == BATCH) {
                        send(batch);
                        batch = new ArrayList<>();
                    }
                }
            }
            if (!batch.isEmpty()) {
                send(batch);
            }
        } catch (RuntimeException e) {
            // never let one bad pass end the schedule
            log.error("relock Redlock renewer pass failed", e);
        }
    }

    private void send(List<Hold> due) {
        List<Hold> batch = new ArrayList<>(due.size());
        List<CompletableFuture<List<Long>>> replies;
        long sent;
        client.dispatch().lock();
        try {
            for (Hold hold : due) {
                // checked again under the lock: a release sent before this batch must not be overtaken
                if (!hold.releasing()) {
                    batch.add(hold);
                }
            }
            if (batch.isEmpty()) {
                return;
            }
            String[] keys = new String[batch.size()];
            String[] args = new String[batch.size() * 2];
            for (int i = 0; i < batch.size(); i++) {
                Hold hold = batch.get(i);
                keys[i] = hold.keys.lock();
                args[2 * i] = hold.owner;
                args[2 * i + 1] = Long.toString(hold.leaseMillis());
            }
            sent = System.nanoTime();
            replies = client.sendToEachInOrder(RedlockClient.RENEW, ScriptOutputType.MULTI, keys, args);
        } finally {
            client.dispatch().unlock();
        }
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            int index = i;
            List<CompletableFuture<Long>> votes = new ArrayList<>(replies.size());
            replies.forEach(reply -> votes.add(reply.thenApply(codes -> codes.get(index))));
            Poll<Long> poll = client.poll(votes, code -> code == 1L);
            poll.decided().thenRunAsync(() -> settle(hold, poll, sent), thread);
        }
    }

    /** Renewer thread. */
    private void settle(Hold hold, Poll<Long> poll, long sent) {
        if (poll.won()) {
            hold.leaseRenewed(sent - client.drift().nanosFor(hold.leaseMillis()));
            for (int node = 0; node < client.nodeCount(); node++) {
                Long code = poll.answer(node);
                if (code != null && code == 0L) {
                    client.restore(hold, node);
                }
            }
        } else if (hold.releasing()) {
            return;
        } else if (poll.no() > client.nodeCount() - client.majority()) {
            client.reportLost(hold, "a majority of the nodes no longer had it at renewal (key expired, lost in a"
                    + " restart, deleted or forced open)");
        } else {
            log.warn("relock Redlock client {}: renewal of lock '{}' reached no majority; retrying in lease/3: {}",
                    client.clientId(), hold.lockName, String.join("; ", poll.failures()));
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
