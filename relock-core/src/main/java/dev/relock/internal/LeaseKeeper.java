package dev.relock.internal;

import dev.relock.LeaseState;
import dev.relock.internal.script.LuaScript;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog: one thread per client that keeps every renewed hold's lease alive and notices
 * holds whose lease ended while held.
 *
 * <p>Every lease/3 it walks the client's {@link HoldTable}, sends all renewals due in batches of
 * at most {@value #BATCH} holds per script call (the calls are pipelined on the one connection),
 * one batch per Cluster slot since a script may touch one slot only (standalone and Sentinel
 * Redis: every key counts as slot 0, so holds fill batches in table order), and on
 * its own thread reads the replies: a renewed lease is confirmed; a lock Redis no longer has for
 * the owner is lost. A hold whose lease has certainly ended by the local clock (renewals failing,
 * or an explicit lease that ran out while still held) is lost too. Whoever hears of the loss is
 * told through {@link LettuceRelockClient#reportLost}, on this thread.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    static final int BATCH = 500;

    private final LettuceRelockClient client;
    private final HoldTable holds;
    private final RedisCalls calls;
    private final ScheduledExecutorService thread;

    LeaseKeeper(LettuceRelockClient client, HoldTable holds, RedisCalls calls, long periodMillis) {
        this.client = client;
        this.holds = holds;
        this.calls = calls;
        this.thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread t = new Thread(runnable, "relock-lease-keeper-" + client.clientId().substring(0, 8));
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::renewAll, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** One pass over the table. Runs on the keeper thread only. */
    private void renewAll() {
        try {
            long now = System.nanoTime();
            Map<Integer, List<Hold>> batches = new HashMap<>();
            for (Hold hold : holds.all()) {
                if (hold.state() != LeaseState.HELD || hold.releasing()) {
                    continue;
                }
                if (hold.leaseEndedBy(now)) {
                    client.reportLost(hold, hold.renewed()
                            ? "its lease of " + hold.leaseMillis() + " ms ran out before a renewal got through"
                            : "its explicit lease of " + hold.leaseMillis() + " ms ran out while it was held");
                    continue;
                }
                if (hold.renewed()) {
                    int slot = client.slotOf(hold.keys.lock());
                    List<Hold> batch = batches.computeIfAbsent(slot, unused -> new ArrayList<>());
                    batch.add(hold);
                    if (batch.size() == BATCH) {
                        // the reply handler keeps reading the list sent
                        send(batches.remove(slot));
                    }
                }
            }
            batches.values().forEach(this::send);
        } catch (RuntimeException e) {
            // never let one bad pass end the schedule
            log.error("relock lease keeper pass failed", e);
        }
    }

    private void send(List<Hold> batch) {
        String[] keys = new String[batch.size() * 2];
        String[] args = new String[batch.size() * 3];
        for (int i = 0; i < batch.size(); i++) {
            Hold hold = batch.get(i);
            keys[2 * i] = hold.keys.lock();
            keys[2 * i + 1] = hold.keys.leases();
            args[3 * i] = hold.owner;
            args[3 * i + 1] = Long.toString(hold.leaseMillis());
            args[3 * i + 2] = hold.mode.kind;
        }
        long sent = System.nanoTime();
        calls.<List<Long>>run(LuaScript.RENEW, ScriptOutputType.MULTI, keys, args)
                .whenCompleteAsync((renewed, error) -> {
                    if (error != null) {
                        client.events().renewals(false, batch.size());
                        log.warn("relock client {}: renewal of {} lease(s) failed; retrying in lease/3: {}",
                                client.clientId(), batch.size(),
                                calls.failure(error, "lease renewal", null).getMessage());
                        return;
                    }
                    for (int i = 0; i < batch.size(); i++) {
                        Hold hold = batch.get(i);
                        if (renewed.get(i) == 1L) {
                            client.events().renewals(true, 1);
                            hold.leaseRenewed(sent);
                        } else if (!hold.releasing()) {
                            client.events().renewals(false, 1);
                            client.reportLost(hold, "Redis no longer had it at renewal "
                                    + "(key expired, deleted, flushed or forced open)");
                        }
                    }
                }, thread);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
