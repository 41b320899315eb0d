package dev.relock.bench;

import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A diagnostic for issue 41's question, what an uncontended lock+unlock pair must touch in Redis: relock's
 * acquire.lua and release.lua as shipped, then protocols that each leave out a part of what they do, down to the
 * floor, every one as a pair of script calls (the floor: a command and a script) from one thread on one bare Lettuce
 * connection. Each row says which of relock's guarantees its protocol gives up, so the table reads as the price of
 * each guarantee in Redis's time. The variants other than relock's are fast paths only, written for this measurement
 * (they never meet a waiter): a lower bound on what a whole protocol built on them would cost.
 *
 * <p>Measured in turns: every variant runs for one turn in each round, in a rotating order, and a figure is the
 * median of its turns, so a drift of the machine's speed shows as a spread, not as a difference between variants.
 * Redis's time is INFO commandstats' (the time inside the commands and scripts, the calls they make included) and
 * INFO cpu's (the whole server process: reading, parsing and replying too).
 */
final class ProtocolCosts {

    private static final String PREFIX = "bench-protocol";
    private static final String LEASE = "30000";

    /** One way to take and give back an uncontended lock. */
    interface Protocol {
        /** Takes the lock for {@code owner}; returns what its release needs (a token), or throws if refused. */
        String acquire(RedisCommands<String, String> redis, String[] keys, String owner);

        void release(RedisCommands<String, String> redis, String[] keys, String owner, String taken);

        /** Waits for whatever the protocol left in flight; called at the end of a turn, before its readings. */
        default void settle() {
        }
    }

    /** A row: its id, what the variant is, what of relock's guarantees it gives up, and how it is sent. */
    record Variant(String id, String name, String givesUp, Protocol protocol) {
    }

    /** A variant's figures: medians over its turns, and the spread of its Redis CPU. */
    record Cost(Variant variant, double commandMicrosPerPair, double cpuMicrosPerPair, double cpuMin, double cpuMax,
            double callsPerPair, double pairsPerSecond, int turns, String error) {
        boolean ok() {
            return error == null;
        }
    }

    private final Duration turn;
    private final int rounds;

    ProtocolCosts(boolean quick) {
        this.turn = Duration.ofMillis(quick ? 100 : 500);
        this.rounds = quick ? 2 : 12;
    }

    /** relock's scripts first, then each lighter protocol in the order the report lists them. */
    static List<Variant> variants() {
        return List.of(
                new Variant("relock", "relock as shipped: acquire.lua (EXISTS lock, queue, readers; TIME; SET fence … GET PX;"
                        + " HSET; PEXPIRE), release.lua (EXISTS queue, readers; HMGET; DEL)", "nothing",
                        new RelockScripts()),
                new Variant("unawaited", "relock as shipped, the release's reply not awaited: the next acquire is"
                        + " sent behind it on the same connection and the release's answer read when that one's"
                        + " comes", "unlock() telling its caller, before it returns, that the lease was lost (it"
                        + " would learn it at its next call); Redis does the same work",
                        new UnawaitedRelease()),
                new Variant("fast", "relock's fast paths alone, as a variant: the same calls, with only the owner"
                        + " and lease (and token) as arguments and no helpers defined", "nothing (it is no protocol: a"
                        + " lock held, waited for or read would need the rest of relock's scripts)",
                        new Scripted(RELOCK_FAST_ACQUIRE, RELOCK_FAST_RELEASE)),
                new Variant("marked", "the lock key alone says whether anybody waits: acquire checks EXISTS lock only,"
                        + " release reads a 'waiters may exist' field beside the holder (HMGET; DEL)",
                        "first come, first served once a holder's lease ran out while others waited (their queue is"
                        + " left, the lock key gone: a newcomer goes first), unless the queue kept the lock key alive,"
                        + " which takes the holder's lease out of the key's expiry in every script",
                        new Scripted(MARKED_ACQUIRE, MARKED_RELEASE)),
                new Variant("counted", "as shipped, the token from INCR on the fence key, from the server's clock only when"
                        + " INCR answers 1 (the key was lost)",
                        "rising tokens after a failover to a replica whose counter is behind (not lost): it counts on"
                        + " from its stale value, below tokens already handed out",
                        new Scripted(COUNTED_ACQUIRE, RELOCK_FAST_RELEASE)),
                new Variant("unfenced", "as shipped, without a fencing token (no TIME, no fence key)", "fencing tokens",
                        new Scripted(UNFENCED_ACQUIRE, RELOCK_FAST_RELEASE)),
                new Variant("string", "one string key holding owner, count and token (TIME; SET fence … GET PX; SET lock NX PX),"
                        + " released by GET; DEL",
                        "the queue and readers checks (first come, first served; read-write), unless every other"
                        + " script learnt to turn the string into the hash when a second party comes",
                        new Scripted(STRING_ACQUIRE, STRING_RELEASE)),
                new Variant("plain", "Spring Integration 6.5-like: GET; SET PX, released by GET; UNLINK (written here from"
                        + " the commands it runs)", "fencing tokens, first come, first served, read-write",
                        new Scripted(PLAIN_ACQUIRE, PLAIN_RELEASE)),
                new Variant("floor", "the floor: SET NX PX (a command), compare-and-delete (a script)",
                        "fencing tokens, first come, first served, read-write, re-entry", new Floor()));
    }

    /** Measures every variant on {@code server}, one thread, one connection. */
    List<Cost> measure(RedisServer server) {
        List<Variant> variants = variants();
        List<List<double[]>> turns = new ArrayList<>();
        String[] errors = new String[variants.size()];
        for (int i = 0; i < variants.size(); i++) {
            turns.add(new ArrayList<>());
        }
        ServerStats stats = new ServerStats(server);
        RedisClient client = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8)) {
            RedisCommands<String, String> redis = connection.sync();
            String[] keys = LockKeys.of(PREFIX, "pair").all();
            String owner = "8f3c2b1e4d5a4e6f9a0b1c2d3e4f5a6b:1"; // a client id and a thread's number, as relock's
            for (int round = -1; round < rounds; round++) { // round -1 warms up, unrecorded
                for (int k = 0; k < variants.size(); k++) {
                    int i = Math.floorMod(k + round, variants.size());
                    if (errors[i] != null) {
                        continue;
                    }
                    try {
                        double[] figures = turn(variants.get(i).protocol(), redis, keys, owner, stats);
                        if (round >= 0) {
                            turns.get(i).add(figures);
                        }
                    } catch (RuntimeException e) {
                        errors[i] = Bench.describe(e);
                    }
                    server.flushAll();
                }
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        List<Cost> costs = new ArrayList<>();
        for (int i = 0; i < variants.size(); i++) {
            List<double[]> mine = turns.get(i);
            List<Double> cpu = mine.stream().map(t -> t[1]).toList();
            costs.add(new Cost(variants.get(i), median(mine, 0), median(mine, 1),
                    cpu.isEmpty() ? Double.NaN : Stats.min(cpu), cpu.isEmpty() ? Double.NaN : Stats.max(cpu),
                    median(mine, 2), median(mine, 3), mine.size(), errors[i]));
        }
        return costs;
    }

    /** One turn: {commandstats µs per pair, INFO cpu µs per pair, calls per pair, pairs per second}. */
    private double[] turn(Protocol protocol, RedisCommands<String, String> redis, String[] keys, String owner,
            ServerStats stats) {
        long[] before = stats.commandTotals();
        double cpuBefore = stats.cpuSeconds();
        long start = System.nanoTime();
        long end = start + turn.toNanos();
        long pairs = 0;
        long now;
        do {
            String taken = protocol.acquire(redis, keys, owner);
            protocol.release(redis, keys, owner, taken);
            pairs++;
        } while ((now = System.nanoTime()) < end);
        protocol.settle();
        double cpuAfter = stats.cpuSeconds();
        long[] after = stats.commandTotals();
        long calls = after[0] - before[0];
        long micros = after[1] - before[1];
        return new double[] {(double) micros / pairs, (cpuAfter - cpuBefore) * 1e6 / pairs, (double) calls / pairs,
                pairs / ((now - start) / 1e9)};
    }

    private static double median(List<double[]> turns, int figure) {
        return turns.isEmpty() ? Double.NaN : Stats.median(turns.stream().map(t -> t[figure]).toList());
    }

    // ---- the protocols ---------------------------------------------------------------------

    /** relock's own scripts with relock's keys and arguments, as {@link RelockScriptsSubject} sends them. */
    private static final class RelockScripts implements Protocol {
        private String acquireSha;
        private String releaseSha;

        @Override
        public String acquire(RedisCommands<String, String> redis, String[] keys, String owner) {
            if (acquireSha == null) {
                acquireSha = redis.scriptLoad(SingleServerScripts.ACQUIRE.body());
                releaseSha = redis.scriptLoad(SingleServerScripts.RELEASE.body());
            }
            return token(redis.evalsha(acquireSha, ScriptOutputType.MULTI, keys, acquireArguments(owner)));
        }

        @Override
        public void release(RedisCommands<String, String> redis, String[] keys, String owner, String taken) {
            released(redis.evalsha(releaseSha, ScriptOutputType.INTEGER, keys, releaseArguments(owner, taken)));
        }

        /** What relock's lock() sends to acquire.lua for a fresh acquisition that may take a grant (attempt 1). */
        static String[] acquireArguments(String owner) {
            return new String[] {owner, LEASE, "0", "86400000", "1000", PREFIX + ":wake:", "1"};
        }

        /** What relock's unlock() sends to release.lua to give up the owner's hold with that token. */
        static String[] releaseArguments(String owner, String token) {
            return new String[] {owner, "all", "1000", PREFIX + ":wake:", token};
        }

        /** acquire.lua's reply to an uncontended acquisition: the fencing token. */
        static String token(List<Long> reply) {
            if (reply.get(0) != 1L) {
                throw new IllegalStateException("relock's acquire.lua refused an uncontended lock: " + reply);
            }
            return Long.toString(reply.get(1));
        }

        /** Checks release.lua's reply: no hold left. */
        static void released(Long left) {
            if (left == null || left != 0L) {
                throw new IllegalStateException("relock's release.lua did not release: " + left);
            }
        }
    }

    /**
     * relock's scripts, a release not waited for: a thread's next acquisition goes out behind it on the one connection,
     * which Redis runs in order, and the release's reply is checked after that acquisition's.
     */
    private static final class UnawaitedRelease implements Protocol {
        private final RelockScripts scripts = new RelockScripts();
        // the release sent last, its reply not read yet; the one thread of the turn only
        private RedisFuture<Long> pending;

        @Override
        public String acquire(RedisCommands<String, String> redis, String[] keys, String owner) {
            if (pending == null) {
                return scripts.acquire(redis, keys, owner);
            }
            RedisFuture<List<Long>> acquired = redis.getStatefulConnection().async().evalsha(scripts.acquireSha,
                    ScriptOutputType.MULTI, keys, RelockScripts.acquireArguments(owner));
            settle();
            return RelockScripts.token(await(acquired));
        }

        @Override
        public void release(RedisCommands<String, String> redis, String[] keys, String owner, String taken) {
            pending = redis.getStatefulConnection().async().evalsha(scripts.releaseSha, ScriptOutputType.INTEGER,
                    keys, RelockScripts.releaseArguments(owner, taken));
        }

        @Override
        public void settle() {
            if (pending != null) {
                Long left = await(pending);
                pending = null;
                RelockScripts.released(left);
            }
        }

        private static <T> T await(RedisFuture<T> future) {
            try {
                return future.get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException("a script call failed: " + e, e);
            }
        }
    }

    /**
     * A variant as two scripts: acquire gets ARGV owner, lease and answers the token (any text) or false; release
     * gets ARGV owner and that token and answers 1 when it released.
     */
    private static final class Scripted implements Protocol {
        private final String acquireBody;
        private final String releaseBody;
        private String acquireSha;
        private String releaseSha;

        Scripted(String acquireBody, String releaseBody) {
            this.acquireBody = acquireBody;
            this.releaseBody = releaseBody;
        }

        @Override
        public String acquire(RedisCommands<String, String> redis, String[] keys, String owner) {
            if (acquireSha == null) {
                acquireSha = redis.scriptLoad(acquireBody);
                releaseSha = redis.scriptLoad(releaseBody);
            }
            String token = redis.evalsha(acquireSha, ScriptOutputType.VALUE, keys, owner, LEASE);
            if (token == null) {
                throw new IllegalStateException("a variant's acquire refused an uncontended lock");
            }
            return token;
        }

        @Override
        public void release(RedisCommands<String, String> redis, String[] keys, String owner, String taken) {
            Long released = redis.evalsha(releaseSha, ScriptOutputType.INTEGER, keys, owner, taken);
            if (released == null || released != 1L) {
                throw new IllegalStateException("a variant's release did not release");
            }
        }
    }

    /** SET NX PX, and a script that deletes the key if it still holds the owner. */
    private static final class Floor implements Protocol {
        private String releaseSha;

        @Override
        public String acquire(RedisCommands<String, String> redis, String[] keys, String owner) {
            if (releaseSha == null) {
                releaseSha = redis.scriptLoad(COMPARE_AND_DELETE);
            }
            if (!"OK".equals(redis.set(keys[0], owner, SetArgs.Builder.nx().px(Long.parseLong(LEASE))))) {
                throw new IllegalStateException("SET NX refused an uncontended lock");
            }
            return owner;
        }

        @Override
        public void release(RedisCommands<String, String> redis, String[] keys, String owner, String taken) {
            Long released = redis.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {keys[0]}, owner);
            if (released == null || released != 1L) {
                throw new IllegalStateException("compare-and-delete did not release");
            }
        }
    }

    // Every script takes relock's five keys (lock, fence, queue, expiry, readers) whether it reads them or not, so
    // that the rows differ in what the scripts do, not in what they are sent; the floor's script takes the lock's.

    /** A clock token as relock's token.lua makes it: max(last + 1, server time in µs). */
    private static final String CLOCK_TOKEN = """
            local function clock_token(fence)
              local t = redis.call('TIME')
              local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
              local text = string.format('%d', floor)
              local last = tonumber(redis.call('SET', fence, text, 'PX', 86400000, 'GET') or '0')
              if last < floor then return text end
              text = string.format('%d', last + 1)
              redis.call('SET', fence, text, 'PX', 86400000)
              return text
            end
            """;

    private static final String MARKED_ACQUIRE = CLOCK_TOKEN + """
            if redis.call('EXISTS', KEYS[1]) == 1 then return false end
            local token = clock_token(KEYS[2])
            redis.call('HSET', KEYS[1], '~writer', ARGV[1], ARGV[1], 1, '~token', token)
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return token
            """;

    private static final String MARKED_RELEASE = """
            local held = redis.call('HMGET', KEYS[1], '~writer', '~token', '~waiters')
            if held[1] ~= ARGV[1] or held[2] ~= ARGV[2] or held[3] then return 0 end
            redis.call('DEL', KEYS[1])
            return 1
            """;

    private static final String RELOCK_FAST_ACQUIRE = CLOCK_TOKEN + """
            if redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[5]) == 1 then return false end
            local token = clock_token(KEYS[2])
            redis.call('HSET', KEYS[1], '~writer', ARGV[1], ARGV[1], 1, '~token', token)
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return token
            """;

    private static final String COUNTED_ACQUIRE = """
            if redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[5]) == 1 then return false end
            local token = redis.call('INCR', KEYS[2])
            if token == 1 then
              local t = redis.call('TIME')
              token = tonumber(t[1]) * 1000000 + tonumber(t[2])
              redis.call('SET', KEYS[2], string.format('%d', token), 'PX', 86400000)
            end
            local text = string.format('%d', token)
            redis.call('HSET', KEYS[1], '~writer', ARGV[1], ARGV[1], 1, '~token', text)
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return text
            """;

    private static final String UNFENCED_ACQUIRE = """
            if redis.call('EXISTS', KEYS[1], KEYS[3], KEYS[5]) == 1 then return false end
            redis.call('HSET', KEYS[1], '~writer', ARGV[1], ARGV[1], 1, '~token', '0')
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return '0'
            """;

    /** release.lua's fast path: nobody waits or reads, the owner holds with that token, the key goes. */
    private static final String RELOCK_FAST_RELEASE = """
            if redis.call('EXISTS', KEYS[3], KEYS[5]) ~= 0 then return 0 end
            local held = redis.call('HMGET', KEYS[1], '~writer', '~token')
            if held[1] ~= ARGV[1] or held[2] ~= ARGV[2] then return 0 end
            redis.call('DEL', KEYS[1])
            return 1
            """;

    private static final String STRING_ACQUIRE = CLOCK_TOKEN + """
            local token = clock_token(KEYS[2])
            if not redis.call('SET', KEYS[1], ARGV[1] .. ' 1 ' .. token, 'NX', 'PX', ARGV[2]) then return false end
            return token
            """;

    private static final String STRING_RELEASE = """
            if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ' 1 ' .. ARGV[2] then return 0 end
            redis.call('DEL', KEYS[1])
            return 1
            """;

    private static final String PLAIN_ACQUIRE = """
            local holder = redis.call('GET', KEYS[1])
            if holder and holder ~= ARGV[1] then return false end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return '0'
            """;

    private static final String PLAIN_RELEASE = """
            if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
            redis.call('UNLINK', KEYS[1])
            return 1
            """;

    private static final String COMPARE_AND_DELETE = """
            if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
            redis.call('DEL', KEYS[1])
            return 1
            """;
}
