package dev.relock.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The writes of one client's identity record ({@link ClientRegistry}), in the order they reach Redis: whole writes
 * (register.lua, at start-up and after each lease keeper pass), additions of the threads of owners that began to hold
 * since (name-holders.lua), and the delete at close, after which nothing is written. The engine says how each is sent
 * (to which connection or nodes); this class decides when, and what.
 *
 * <p>Design notes.
 * <ul>
 *   <li>Order: every write is handed to Lettuce under {@link #lock}, from a thread that is not a Netty I/O thread
 *       (the keeper thread, the client's event executors, the closing thread), so the record's writes reach Redis in
 *       the order they took the lock, and none after the delete. The lock is held only while a send hands its commands
 *       over, never while a reply is awaited.</li>
 *   <li>What the record names: {@link #named} holds the owners whose thread it names since its last whole write,
 *       those that write named and those added since, at most {@link ClientRegistry#MAX_OWNERS}. Only the thread
 *       that writes the record whole (the keeper thread, or the constructing one at start-up) empties it, and only
 *       under the lock; additions (the timer thread) add to it under the lock; acquiring threads read it. So an
 *       owner is written at most once between two whole writes, however often it acquires. Neither kind of write
 *       ever creates the record without a time to live: a whole write sets it, an addition writes only to a record
 *       that exists (and keeps its time to live).</li>
 *   <li>When: a hold handed out ({@link #nameHolder}) whose owner is not named joins {@link #unnamed}; an addition
 *       runs on the timer, {@link #NAMING_DELAY_NANOS} after the hold that scheduled it (and at least
 *       {@link #ADDITION_SPACING_NANOS} after the last), and names the owners of those holds that still hold then. So a thread locking in a loop costs at most one addition per
 *       whole write, and many short holds of handles (an owner id each) at most one per spacing, never one per
 *       acquisition. No addition waits in the caller's acquisition.</li>
 *   <li>Why an owner handed out is never left unnamed until the next whole write: {@link #nameHolder} runs after the
 *       hold is in the client's table with its thread name. If it finds the owner in {@link #named}, a whole write
 *       that empties the set later reads the table after that and names the owner again; if it does not, the hold
 *       waits in {@link #unnamed} for an addition, which names it unless a whole write did meanwhile.</li>
 * </ul>
 *
 * <p>Public because both engines, each in a package of its own, write records.
 */
public final class RecordWrites {

    /** The least time between two additions: many short holds of new owners cost one addition per spacing at most. */
    static final long ADDITION_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * How long after a hold is handed out its addition is due at the earliest: a hold given up sooner is never added
     * (the whole writes name what holds at each pass), so short holds, the most, cost nothing, and the hold an
     * operator looks at, a long one, shows its thread within about this time rather than at the next pass.
     */
    static final long NAMING_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final EngineClient client;
    private final ScheduledExecutorService timer;
    private final Consumer<String[]> sendWhole;
    private final Consumer<String[]> sendAddition;
    private final Object lock = new Object();
    // guarded by lock
    private boolean deleted;
    // the owners (full owner ids) whose thread the record names since its last whole write. Changed under lock
    // only; read without it by nameHolder, whose skip is safe as the class notes say
    private final Set<String> named = ConcurrentHashMap.newKeySet();
    // holds handed out whose owner the record did not name when they were, the latest per owner: any thread puts, the
    // addition takes (under lock)
    private final Map<String, Hold> unnamed = new ConcurrentHashMap<>();
    // an addition is scheduled and has not begun to take unnamed holds yet
    private final AtomicBoolean additionDue = new AtomicBoolean();
    // when the last addition ran, by the client's ticker; written under lock, by the timer
    private volatile long lastAdditionAt;

    /**
     * The record writes of {@code client}; {@code sendWhole} hands register.lua's arguments to Lettuce, {@code
     * sendAddition} name-holders.lua's, neither waiting for a reply; additions run on {@code timer}, which is no Netty
     * I/O thread.
     */
    public RecordWrites(EngineClient client, ScheduledExecutorService timer, Consumer<String[]> sendWhole,
            Consumer<String[]> sendAddition) {
        this.client = client;
        this.timer = timer;
        this.sendWhole = sendWhole;
        this.sendAddition = sendAddition;
        this.lastAdditionAt = client.ticker().nanoTime() - ADDITION_SPACING_NANOS;
    }

    /** Writes the record whole from the client's table, unless it was deleted. At start-up and after keeper passes. */
    public void writeWhole() {
        synchronized (lock) {
            if (deleted) {
                return;
            }
            Map<String, String> threads = ClientRegistry.threadsOfHolders(client);
            named.clear();
            named.addAll(threads.keySet());
            sendWhole.accept(ClientRegistry.registerArgs(client, threads));
        }
    }

    /**
     * {@code hold} was handed out with its thread name, and is in the client's table: the record names its owner's
     * thread soon, if it does not yet (see the class notes). Any thread; sends nothing itself, and costs a set lookup
     * when the owner is named already.
     */
    public void nameHolder(Hold hold) {
        if (hold.threadName().isEmpty() || named.contains(hold.owner)) {
            return;
        }
        unnamed.put(hold.owner, hold);
        if (additionDue.compareAndSet(false, true)) {
            long spaced = lastAdditionAt + ADDITION_SPACING_NANOS - client.ticker().nanoTime();
            long wait = Math.max(NAMING_DELAY_NANOS, spaced);
            try {
                timer.schedule(this::addUnnamed, wait, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // the client's executors shut down: it is closed, and its record deleted
                unnamed.clear();
            }
        }
    }

    /** One addition: the owners of the unnamed holds that still hold, not named meanwhile. Timer thread. */
    private void addUnnamed() {
        // first: a hold handed out from now on schedules the next addition, or is taken by this one
        additionDue.set(false);
        List<String> fields = new ArrayList<>();
        synchronized (lock) {
            lastAdditionAt = client.ticker().nanoTime();
            int suffix = client.clientId().length() + 1;
            for (Map.Entry<String, Hold> entry : unnamed.entrySet()) {
                Hold hold = entry.getValue();
                // a newer hold of the owner, put since, stays for the next addition
                unnamed.remove(entry.getKey(), hold);
                if (!deleted && ClientRegistry.namesThreadOf(hold, suffix) && named.size() < ClientRegistry.MAX_OWNERS
                        && named.add(hold.owner)) {
                    fields.add("t:" + hold.owner.substring(suffix));
                    fields.add(hold.threadName());
                }
            }
            if (!fields.isEmpty()) {
                sendAddition.accept(fields.toArray(String[]::new));
            }
        }
    }

    /** Runs {@code send}, which hands the delete of the record to Lettuce; no write is sent after it. */
    public void delete(Runnable send) {
        synchronized (lock) {
            deleted = true;
            unnamed.clear();
            send.run();
        }
    }
}
