package dev.relock.bench;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.RedlockScripts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * A diagnostic, not a product: relock's own Redlock scripts (redlock/acquire.lua, release.lua and fence.lua) sent
 * by EVAL with exactly relock's keys and arguments to every node at once, from bare Lettuce connections (one
 * command and one pub/sub connection per node, one {@link RedisClient}, as relock's client has) with none of
 * relock's client code. Set against relock's Redlock it shows what relock's Java side costs: the floor of relock's
 * Redlock protocol.
 *
 * <p>A waiter does what the protocol asks and nothing more. An attempt is decided at a majority of yes, at a
 * majority that can no longer say yes, or when every node answered. Won: the token is the largest of the
 * majority's, written back (fence.lua) unless a majority gave that very token, and where a node refused, the writer
 * stops waiting there. Lost: what the attempt took on the nodes that did not refuse it is undone, keeping the
 * writer's place; which nodes those are is read from each node's reply once it is in (a node whose reply was still
 * out at the decision may refuse, then grant on release, and a clean-up sent there regardless would undo that
 * grant). The writer then takes the place the nodes agreed on and waits for release announcements: a grant
 * for its latest attempt from a majority of the nodes that refused it wins as that attempt would have; a turn that
 * names it, a turn's end, or a release that names nobody (after a jitter) starts the next attempt; so does the
 * holder's lease end, or a split's random back-off. The copies of one grant that the other nodes announce wake the
 * granted writer only, as in relock. The constants are relock's defaults. There is no timeout,
 * cancel, renewal, re-entry, clock-drift or validity check, and no failure handling: a node that fails a command
 * stops the run.
 */
final class RedlockScriptsSubject implements Subject {

    private static final String PREFIX = "bench-redlock-scripts";
    private static final String CHANNEL = PREFIX + ":redlock:released";
    // relock's defaults: the lease, a waiter's mark (1.5 leases for a wait without deadline), the hand-off grace
    private static final String LEASE = "30000";
    private static final String MARK = "45000";
    private static final String TURN = "1000";
    private static final long TURN_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
    private static final long TOKEN_LEAD_MICROS = TimeUnit.MILLISECONDS.toMicros(50);
    private static final long JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long GRANT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long FIRST_SPLIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_SPLIT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long REPLY_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    @Override
    public String label() {
        return "relock's Redlock scripts on bare Lettuce (diagnostic)";
    }

    @Override
    public String family() {
        return "diagnostic";
    }

    @Override
    public boolean waits() {
        return true;
    }

    @Override
    public boolean renews() {
        return false;
    }

    /** @param redisUri the independent servers, comma-separated */
    @Override
    public Client connect(String redisUri, Duration lease) {
        return new NodesClient(redisUri.split(","));
    }

    /** A release announcement (release.lua) from one node: what follows the lock key. */
    private record Announcement(int node, String lockKey, String turn) {
    }

    private static final class NodesClient implements Client {
        private final RedisClient redis = RedisClient.create();
        private final List<StatefulRedisConnection<String, String>> nodes = new ArrayList<>();
        private final List<StatefulRedisPubSubConnection<String, String>> announcements = new ArrayList<>();
        private final int majority;
        private final String clientId = UUID.randomUUID().toString().replace("-", "");
        // the owner whose thread is in lock() now -> its lock
        private final Map<String, ScriptLock> waiting = new ConcurrentHashMap<>();
        private final AtomicLong attemptIds = new AtomicLong();
        // lock key -> the grant its nodes announced last: pub/sub threads
        private final Map<String, String> lastGrants = new ConcurrentHashMap<>();
        private long owners;

        NodesClient(String[] uris) {
            majority = uris.length / 2 + 1;
            for (int i = 0; i < uris.length; i++) {
                RedisURI uri = RedisURI.create(uris[i]);
                nodes.add(redis.connect(StringCodec.UTF8, uri));
                StatefulRedisPubSubConnection<String, String> pubSub = redis.connectPubSub(StringCodec.UTF8, uri);
                int node = i;
                pubSub.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        announced(node, message);
                    }
                });
                pubSub.sync().subscribe(CHANNEL);
                announcements.add(pubSub);
            }
        }

        /**
         * Hands a node's announcement to every waiting lock of that key (a lock key ends with '}'), except that the
         * copies of a grant from the other nodes go to the granted writer only, as in relock. Pub/sub thread.
         */
        private void announced(int node, String message) {
            int end = message.lastIndexOf('}') + 1;
            Announcement announcement = new Announcement(node, message.substring(0, end), message.substring(end));
            String turn = announcement.turn();
            int space = turn.indexOf(' ');
            boolean copy = space > 0 && turn.indexOf(' ', space + 1) > 0
                    && message.equals(lastGrants.put(announcement.lockKey(), message));
            for (ScriptLock lock : waiting.values()) {
                if (lock.lockKey.equals(announcement.lockKey()) && (!copy || turn.startsWith(lock.owner + " "))) {
                    lock.inbox.add(announcement);
                    LockSupport.unpark(lock.parked);
                }
            }
        }

        /** Sends {@code script} to every node at once by EVAL; its replies by node. */
        <T> List<CompletableFuture<T>> toAll(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
            List<CompletableFuture<T>> replies = new ArrayList<>(nodes.size());
            for (StatefulRedisConnection<String, String> node : nodes) {
                replies.add(node.async().<T>eval(script.body(), type, keys, args).toCompletableFuture());
            }
            return replies;
        }

        /**
         * Sends release.lua with {@code args} to node {@code node} by EVAL once {@code reply}, that node's answer to
         * an attempt, is in, so that it follows the attempt there; only if the answer then passes {@code wanted}.
         */
        void afterReply(CompletableFuture<List<Object>> reply, int node,
                Predicate<CompletableFuture<List<Object>>> wanted, String[] keys, String... args) {
            if (reply.isDone()) {
                if (wanted.test(reply)) {
                    nodes.get(node).async().eval(RedlockScripts.RELEASE.body(), ScriptOutputType.INTEGER, keys, args);
                }
            } else {
                reply.whenComplete((answer, error) -> afterReply(reply, node, wanted, keys, args));
            }
        }

        /**
         * Parks the calling thread until a majority of {@code replies} passed {@code isYes}, a majority can no longer,
         * or every one is in; returns how many passed.
         */
        <T> int awaitVotes(List<CompletableFuture<T>> replies, Predicate<T> isYes) {
            Thread me = Thread.currentThread();
            for (CompletableFuture<T> reply : replies) {
                reply.whenComplete((answer, error) -> LockSupport.unpark(me));
            }
            long until = System.nanoTime() + REPLY_WAIT_NANOS;
            while (true) {
                int yes = 0;
                int in = 0;
                for (CompletableFuture<T> reply : replies) {
                    if (reply.isDone()) {
                        in++;
                        if (isYes.test(reply.join())) {
                            yes++;
                        }
                    }
                }
                if (yes >= majority || in - yes > replies.size() - majority || in == replies.size()) {
                    return yes;
                }
                if (System.nanoTime() - until > 0) {
                    throw new IllegalStateException("Redlock nodes did not answer: " + replies);
                }
                LockSupport.parkNanos(this, until - System.nanoTime());
            }
        }

        private synchronized String nextOwner() {
            return clientId + ":" + owners++;
        }

        @Override
        public Lock lock(String name) {
            return new ScriptLock(this, LockKeys.of(PREFIX, name), nextOwner());
        }

        @Override
        public void close() {
            announcements.forEach(StatefulRedisPubSubConnection::close);
            nodes.forEach(StatefulRedisConnection::close);
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** One owner's write lock; lock() and unlock() in the owner's thread. */
    private static final class ScriptLock implements ScenarioLock {
        private final NodesClient client;
        private final String lockKey;
        // the lock's five keys, in the order every script takes them (see LuaScript)
        private final String[] scriptKeys;
        private final String owner;
        // announcements for this lock's key while the owner's thread is in lock(): pub/sub threads add
        private final ConcurrentLinkedQueue<Announcement> inbox = new ConcurrentLinkedQueue<>();
        private volatile Thread parked;
        // the attempt that took the hold, which the release names, while it is held; written by the owner's thread
        private volatile String heldAttempt;

        ScriptLock(NodesClient client, LockKeys keys, String owner) {
            this.client = client;
            this.lockKey = keys.lock();
            this.scriptKeys = keys.all();
            this.owner = owner;
        }

        @Override
        public void lock() {
            parked = Thread.currentThread();
            inbox.clear();
            client.waiting.put(owner, this);
            try {
                acquire();
            } finally {
                client.waiting.remove(owner, this);
            }
        }

        private void acquire() {
            long began = System.nanoTime();
            String place = "";
            int splits = 0;
            int nodes = client.nodes.size();
            while (true) {
                String attempt = Long.toString(client.attemptIds.incrementAndGet());
                String waited = Long.toString((System.nanoTime() - began) / 1_000);
                List<CompletableFuture<List<Object>>> replies = client.toAll(RedlockScripts.ACQUIRE,
                        ScriptOutputType.MULTI, scriptKeys, owner, LEASE, MARK, waited, attempt, proposal(), place);
                int yes = client.awaitVotes(replies, reply -> (Long) reply.get(0) == 1L);
                if (yes >= client.majority) {
                    long[] tokens = new long[nodes];
                    for (int i = 0; i < nodes; i++) {
                        tokens[i] = answers(replies.get(i), 1L) ? (Long) replies.get(i).join().get(1) : 0;
                    }
                    settle(tokens, attempt);
                    // where a node did not take it, the writer stops waiting there; where the answer is late, only
                    // while this hold lasts (its release ends the wait everywhere, and the next wait must stay)
                    String won = attempt;
                    for (int i = 0; i < nodes; i++) {
                        client.afterReply(replies.get(i), i, reply -> !answers(reply, 1L) && won == heldAttempt,
                                scriptKeys, owner, CHANNEL,
                                "0", "1", TURN, "-", "0", "0", "", "0");
                    }
                    return;
                }
                if (place.isEmpty()) {
                    place = agreedPlace(replies);
                }
                boolean heldElsewhere = holderOfMajority(replies);
                // undo it where it took the lock (or may have), keeping the writer's wait there
                waited = Long.toString((System.nanoTime() - began) / 1_000);
                for (int i = 0; i < nodes; i++) {
                    client.afterReply(replies.get(i), i, reply -> !answers(reply, 0L), scriptKeys, owner, CHANNEL,
                            "0", "0", TURN, attempt, waited, MARK, place, heldElsewhere ? "1" : "0");
                }
                long at;
                boolean splitting = false;
                if (heldElsewhere) {
                    splits = 0;
                    at = System.nanoTime() + retryNanos(replies, yes);
                } else {
                    long cap = Math.min(MAX_SPLIT_NANOS, FIRST_SPLIT_NANOS << Math.min(splits++, 5));
                    at = System.nanoTime() + ThreadLocalRandom.current().nextLong(cap);
                    splitting = true;
                }
                if (awaitGrants(replies, attempt, at, splitting)) {
                    return;
                }
            }
        }

        /**
         * Waits for what the announcements say until an attempt is due at {@code at} or later; true when a majority
         * of the nodes that refused {@code attempt} granted it on release (the hold is then taken).
         */
        private boolean awaitGrants(List<CompletableFuture<List<Object>>> replies, String attempt, long at,
                boolean splitting) {
            int nodes = client.nodes.size();
            long[] tokens = new long[nodes];
            int grants = 0;
            boolean listening = true;
            String grantTo = owner + " ";
            List<Announcement> early = new ArrayList<>();
            while (true) {
                Announcement announcement = inbox.poll();
                if (announcement == null) {
                    // grants that came before their node's refusal, now that it may be in
                    for (int i = 0; i < early.size() && announcement == null; i++) {
                        if (replies.get(early.get(i).node()).isDone()) {
                            announcement = early.remove(i);
                        }
                    }
                }
                if (announcement != null) {
                    String turn = announcement.turn();
                    if (turn.startsWith(grantTo)) {
                        if (!turn.endsWith(" " + attempt)) {
                            continue;
                        }
                        int node = announcement.node();
                        if (!replies.get(node).isDone()) {
                            early.add(announcement);
                            continue;
                        }
                        if (!answers(replies.get(node), 0L) || tokens[node] != 0) {
                            continue;
                        }
                        tokens[node] = Long.parseLong(turn, grantTo.length(), turn.lastIndexOf(' '), 10);
                        if (++grants >= client.majority) {
                            settle(tokens, attempt);
                            return true;
                        }
                        if (grants == 1) {
                            // the rest are waited for this long, then an attempt takes what was granted
                            at = System.nanoTime() + Math.min(GRANT_WAIT_NANOS, TURN_NANOS);
                            listening = false;
                        }
                    } else if (turn.equals(owner)) {
                        return false;
                    } else if (!listening || splitting
                            || (!turn.isEmpty() && at - System.nanoTime() <= TURN_NANOS + JITTER_NANOS)) {
                        continue;
                    } else if (!turn.isEmpty()) {
                        // another writer's turn or grant: its release, or the turn's end
                        at = System.nanoTime() + TURN_NANOS + ThreadLocalRandom.current().nextLong(JITTER_NANOS);
                    } else {
                        // nobody's turn: spread the attempts of everybody who heard it
                        at = System.nanoTime() + ThreadLocalRandom.current().nextLong(JITTER_NANOS);
                        listening = false;
                    }
                    continue;
                }
                long left = at - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                LockSupport.parkNanos(this, left);
            }
        }

        /**
         * Takes the hold by {@code attempt} with the largest of {@code tokens}, written back unless a majority gave
         * it.
         */
        private void settle(long[] tokens, String attempt) {
            long token = 0;
            int agreeing = 0;
            for (long given : tokens) {
                if (given != 0) {
                    agreeing = given == token ? agreeing + 1 : given > token ? 1 : agreeing;
                    token = Math.max(token, given);
                }
            }
            if (agreeing < client.majority) {
                client.awaitVotes(client.<Long>toAll(RedlockScripts.FENCE, ScriptOutputType.INTEGER, scriptKeys,
                        owner, Long.toString(token), attempt), written -> true);
            }
            heldAttempt = attempt;
        }

        private static String proposal() {
            Instant now = Instant.now();
            return Long.toString(now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000 + TOKEN_LEAD_MICROS);
        }

        private static boolean answers(CompletableFuture<List<Object>> reply, long code) {
            return reply.isDone() && !reply.isCompletedExceptionally() && (Long) reply.join().get(0) == code;
        }

        /** The median of the places the refusing nodes gave, or "" (see RedlockAcquisition). */
        private static String agreedPlace(List<CompletableFuture<List<Object>>> replies) {
            List<Long> places = new ArrayList<>();
            for (CompletableFuture<List<Object>> reply : replies) {
                if (answers(reply, 0L) && !((String) reply.join().get(3)).isEmpty()) {
                    places.add((long) Double.parseDouble((String) reply.join().get(3)));
                }
            }
            places.sort(null);
            return places.isEmpty() ? "" : Long.toString(places.get(places.size() / 2));
        }

        /** Whether the refusing nodes name one holder on a majority of all nodes. */
        private boolean holderOfMajority(List<CompletableFuture<List<Object>>> replies) {
            Map<String, Integer> byHolder = new HashMap<>();
            for (CompletableFuture<List<Object>> reply : replies) {
                if (answers(reply, 0L)
                        && byHolder.merge((String) reply.join().get(2), 1, Integer::sum) >= client.majority) {
                    return true;
                }
            }
            return false;
        }

        /** When enough of the refusing nodes' leases ran out for a majority to be free, plus 1 ms. */
        private long retryNanos(List<CompletableFuture<List<Object>>> replies, int yes) {
            List<Long> leases = new ArrayList<>();
            for (CompletableFuture<List<Object>> reply : replies) {
                if (answers(reply, 0L)) {
                    long pttl = (Long) reply.join().get(1);
                    leases.add(pttl < 0 ? Long.MAX_VALUE : pttl);
                }
            }
            leases.sort(null);
            int mustFree = client.majority - yes;
            long millis = mustFree <= 0 || mustFree > leases.size() ? 0 : leases.get(mustFree - 1);
            return TimeUnit.MILLISECONDS.toNanos(Math.min(millis, Long.parseLong(LEASE)) + 1);
        }

        @Override
        public void unlock() {
            List<CompletableFuture<Long>> replies = client.toAll(RedlockScripts.RELEASE, ScriptOutputType.INTEGER,
                    scriptKeys, owner, CHANNEL, "0", "1", TURN, heldAttempt);
            heldAttempt = null;
            if (client.awaitVotes(replies, done -> done == 1L) < client.majority) {
                throw new IllegalMonitorStateException("not held on a majority: " + lockKey);
            }
        }
    }
}
