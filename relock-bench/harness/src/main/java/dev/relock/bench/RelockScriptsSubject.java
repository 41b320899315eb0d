package dev.relock.bench;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * A diagnostic, not a product: relock's own scripts (acquire.lua and release.lua, and the read lock's
 * acquire-read.lua and release-read.lua) sent with exactly relock's keys and arguments, from a bare Lettuce
 * connection with none of relock's client code. Set against the floor it shows what the scripts cost; set against
 * relock it shows what relock's Java side costs: the floor of relock's protocol in each scenario.
 *
 * <p>A waiter does what relock's protocol asks and nothing more: its attempt queues it in Redis and offers to take a
 * grant on release (the attempt's id, from a counter of the client); it then parks until its client's pub/sub
 * channel brings a grant for that attempt ('G'), a wake-up ('H', 'S': it tries again), or the retry time the reply
 * gave. A grant is taken only after the attempt's reply is in, as relock takes it. There is no timeout, cancel,
 * renewal, re-entry, fencing check or local hand-off: every hand-off, between the threads of one client too, goes
 * through Redis.
 */
final class RelockScriptsSubject implements Subject {

    private static final String PREFIX = "bench-scripts";
    private static final String ROUTE = PREFIX + ":wake:";
    // what relock's lock() sends as the wait of a waiter without a deadline (ModeScripts)
    private static final String WAIT_FOREVER = Long.toString(TimeUnit.DAYS.toMillis(1));

    @Override
    public String label() {
        return "relock's scripts on bare Lettuce (diagnostic)";
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

    @Override
    public String readWriteLabel() {
        return label();
    }

    @Override
    public Client connect(String redisUri, Duration lease) {
        return new ScriptClient(redisUri);
    }

    /** One client: a command connection, and a pub/sub connection on the client's own wake-up channel. */
    private static final class ScriptClient implements Client {
        private final RedisClient redis;
        private final StatefulRedisConnection<String, String> connection;
        private final StatefulRedisPubSubConnection<String, String> wakeUps;
        private final RedisCommands<String, String> commands;
        private final String clientId = UUID.randomUUID().toString().replace("-", "");
        private final Map<LuaScript, String> shas = new ConcurrentHashMap<>();
        // the owner whose thread waits in lock() now -> its lock (a thread waits for one lock at a time)
        private final Map<String, ScriptLock> waiting = new ConcurrentHashMap<>();
        // attempt ids, unique in the client as relock's are
        private final AtomicLong attempts = new AtomicLong();
        private long owners;

        ScriptClient(String redisUri) {
            redis = RedisClient.create(redisUri);
            connection = redis.connect(StringCodec.UTF8);
            commands = connection.sync();
            for (LuaScript script : List.of(SingleServerScripts.ACQUIRE, SingleServerScripts.RELEASE,
                    SingleServerScripts.ACQUIRE_READ, SingleServerScripts.RELEASE_READ)) {
                shas.put(script, commands.scriptLoad(script.body()));
            }
            wakeUps = redis.connectPubSub(StringCodec.UTF8);
            wakeUps.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    wake(message);
                }
            });
            wakeUps.sync().subscribe(ROUTE + clientId);
        }

        /** A wake-up message (see queue.lua): 'G' grants the lock, 'H' and 'S' ask for an attempt. Pub/sub thread. */
        private void wake(String message) {
            String[] parts = message.split("\n");
            if (parts.length < 3) {
                return;
            }
            ScriptLock lock = waiting.get(parts[2]);
            if (lock == null) {
                return;
            }
            if (parts[0].equals("G") && parts.length >= 5) {
                lock.granted(Long.parseLong(parts[4]), parts[3]);
            } else if (parts[0].equals("H") || parts[0].equals("S")) {
                lock.woken();
            }
        }

        private synchronized String nextOwner() {
            return clientId + ":" + owners++;
        }

        @Override
        public Lock lock(String name) {
            return new ScriptLock(this, SingleServerScripts.ACQUIRE, SingleServerScripts.RELEASE,
                    LockKeys.of(PREFIX, name).all(), nextOwner());
        }

        @Override
        public ReadWriteLock readWriteLock(String name) {
            // one owner for both halves, as one thread of relock's client is one owner
            String owner = nextOwner();
            String[] keys = LockKeys.of(PREFIX, name).all();
            Lock read = new ScriptLock(this, SingleServerScripts.ACQUIRE_READ, SingleServerScripts.RELEASE_READ, keys,
                    owner);
            Lock write = new ScriptLock(this, SingleServerScripts.ACQUIRE, SingleServerScripts.RELEASE, keys, owner);
            return new ReadWriteLock() {
                @Override
                public Lock readLock() {
                    return read;
                }

                @Override
                public Lock writeLock() {
                    return write;
                }
            };
        }

        @Override
        public void close() {
            wakeUps.close();
            connection.close();
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static final class ScriptLock implements ScenarioLock {
        private final ScriptClient client;
        private final String acquire;
        private final String release;
        // every lock script takes the same five keys, in one order (see LuaScript)
        private final String[] keys;
        private final String owner;
        // the fencing token of the hold taken last, which its release names; the thread that locks only
        private String token;
        // the thread parked in lock(), and what the pub/sub thread told it: a grant (for attempt grantFor) or a
        // wake-up
        private volatile Thread parked;
        private volatile long grantFor;
        private volatile String grantToken;
        private volatile boolean woken;

        ScriptLock(ScriptClient client, LuaScript acquire, LuaScript release, String[] keys, String owner) {
            this.client = client;
            this.acquire = client.shas.get(acquire);
            this.release = client.shas.get(release);
            this.keys = keys;
            this.owner = owner;
        }

        void granted(long attempt, String token) {
            grantToken = token;
            grantFor = attempt;
            LockSupport.unpark(parked);
        }

        void woken() {
            woken = true;
            LockSupport.unpark(parked);
        }

        @Override
        public void lock() {
            parked = Thread.currentThread();
            client.waiting.put(owner, this);
            try {
                while (true) {
                    long attempt = client.attempts.incrementAndGet();
                    List<Long> reply = client.commands.evalsha(acquire, ScriptOutputType.MULTI, keys,
                            owner, "30000", "0", WAIT_FOREVER, "1000", ROUTE, Long.toString(attempt));
                    if (reply.get(0) == 1L) {
                        token = Long.toString(reply.get(1));
                        return;
                    }
                    if (reply.get(0) != 0L) {
                        throw new IllegalStateException("acquire refused: " + reply);
                    }
                    // +1 ms: just after the holder's lease has run out, as relock tries
                    long retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(reply.get(1) + 1);
                    while (true) {
                        if (grantFor == attempt) {
                            token = grantToken;
                            return;
                        }
                        if (woken) {
                            woken = false;
                            break;
                        }
                        long left = retryAt - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        LockSupport.parkNanos(this, left);
                    }
                }
            } finally {
                client.waiting.remove(owner, this);
                woken = false;
            }
        }

        @Override
        public void unlock() {
            Long left = client.commands.evalsha(release, ScriptOutputType.INTEGER, keys,
                    owner, "all", "1000", ROUTE, token);
            if (left == null || left != 0L) {
                throw new IllegalMonitorStateException("not held: " + keys[0]);
            }
        }
    }
}
