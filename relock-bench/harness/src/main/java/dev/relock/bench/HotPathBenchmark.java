package dev.relock.bench;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.SingleServerScripts;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Client-side hot paths, one thread, against the private server whose URI the harness passes in
 * {@code -Drelock.bench.redis} (a server of its own otherwise). Run with {@code -prof gc}: the
 * allocation per operation is the figure that matters; the round trip dominates the time.
 *
 * <ul>
 *   <li>{@code relockLockUnlock}: {@code lock(); unlock();} through the public API.</li>
 *   <li>{@code relockScriptsOnBareLettuce}: the same two scripts with the same keys and arguments
 *       from a bare Lettuce connection: script dispatch without relock's client code.</li>
 *   <li>{@code relockScriptsOnLettuceWithRelocksOptions}: the same from a Lettuce client configured as
 *       relock configures its own (per-command timeouts on, reject while disconnected): what those
 *       options cost by themselves.</li>
 *   <li>{@code floorSetNxCompareAndDelete}: the floor's SET NX PX and compare-and-delete.</li>
 *   <li>{@code relockReentry}: lock+unlock of a lock the thread already holds.</li>
 *   <li>{@code relockLockView}: {@code client.lock(name)}, no I/O: key building and checks.</li>
 *   <li>{@code relockHandOffScriptOnBareLettuce}: release.lua handing the lock to a successor of the same
 *       client, which is how S3's threads pass one lock among themselves, from one thread of bare Lettuce
 *       (each successor releases to the next): the round trip every such hand-off costs, with no thread to
 *       wake, the floor of relock's protocol in S3.</li>
 * </ul>
 */
@State(Scope.Thread)
public class HotPathBenchmark {

    /** The system property naming the Redis to use. */
    public static final String REDIS_PROPERTY = "relock.bench.redis";

    private RedisServer ownServer;
    private RelockClient relock;
    private RelockLock lock;
    private RelockLock outer;
    private RedisClient lettuce;
    private StatefulRedisConnection<String, String> connection;
    private RedisCommands<String, String> commands;
    private RedisClient lettuceWithOptions;
    private StatefulRedisConnection<String, String> connectionWithOptions;
    private RedisCommands<String, String> commandsWithOptions;
    private String compareAndDelete;
    private final SetArgs nxPx = SetArgs.Builder.nx().px(30_000);
    private final String token = UUID.randomUUID().toString();
    private String[] acquireKeys;
    private String acquireSha;
    private String releaseSha;
    private String[] releaseKeys;
    private String owner;
    private String[] handOffKeys;
    // the successor that holds the hand-off lock now, and its fencing token; the next hand-off's attempt id
    private long handOffHolder;
    private String handOffToken;

    @Setup
    public void setUp() {
        String uri = System.getProperty(REDIS_PROPERTY);
        if (uri == null) {
            ownServer = RedisServer.start();
            uri = ownServer.uri();
        }
        relock = RelockClient.builder().redisUri(uri).keyPrefix("jmh").build();
        lock = relock.lock("jmh:pair");
        outer = relock.lock("jmh:reentry");
        outer.lock();
        lettuce = RedisClient.create(uri);
        connection = lettuce.connect(StringCodec.UTF8);
        commands = connection.sync();
        compareAndDelete = commands.scriptLoad(FloorSubject.COMPARE_AND_DELETE);
        acquireSha = commands.scriptLoad(SingleServerScripts.ACQUIRE.body());
        releaseSha = commands.scriptLoad(SingleServerScripts.RELEASE.body());
        lettuceWithOptions = RedisClient.create(uri);
        lettuceWithOptions.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(3)))
                .build());
        connectionWithOptions = lettuceWithOptions.connect(StringCodec.UTF8);
        commandsWithOptions = connectionWithOptions.sync();
        // every lock script takes the same five keys, in one order (see LuaScript)
        acquireKeys = LockKeys.of("jmh-bare", "jmh:scripts").all();
        releaseKeys = acquireKeys;
        owner = UUID.randomUUID().toString().replace("-", "") + ":1";
        handOffKeys = LockKeys.of("jmh-handoff", "jmh:handoff").all();
        List<Long> first = commands.evalsha(acquireSha, ScriptOutputType.MULTI, handOffKeys,
                handOffOwner(0), "30000", "0", "0", "1000", "jmh-handoff:wake:");
        if (first.get(0) != 1L) {
            throw new IllegalStateException("hand-off lock not acquired: " + first);
        }
        handOffToken = Long.toString(first.get(1));
    }

    private String handOffOwner(long n) {
        return owner.substring(0, owner.length() - 1) + n;
    }

    @TearDown
    public void tearDown() {
        commands.evalsha(releaseSha, ScriptOutputType.INTEGER, handOffKeys, handOffOwner(handOffHolder), "all", "1000",
                "jmh-handoff:wake:", handOffToken);
        outer.unlock();
        relock.close();
        connection.close();
        lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        connectionWithOptions.close();
        lettuceWithOptions.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        if (ownServer != null) {
            ownServer.close();
        }
    }

    @Benchmark
    public void relockLockUnlock() {
        lock.lock();
        lock.unlock();
    }

    @Benchmark
    public Long relockScriptsOnBareLettuce() {
        return scripts(commands);
    }

    @Benchmark
    public Long relockScriptsOnLettuceWithRelocksOptions() {
        return scripts(commandsWithOptions);
    }

    private Long scripts(RedisCommands<String, String> commands) {
        List<Long> reply = commands.evalsha(acquireSha, ScriptOutputType.MULTI, acquireKeys,
                owner, "30000", "0", "0", "1000", "jmh-bare:wake:");
        if (reply.get(0) != 1L) {
            throw new IllegalStateException("not acquired: " + reply);
        }
        return commands.evalsha(releaseSha, ScriptOutputType.INTEGER, releaseKeys,
                owner, "all", "1000", "jmh-bare:wake:", Long.toString(reply.get(1)));
    }

    @Benchmark
    public Long floorSetNxCompareAndDelete() {
        if (!"OK".equals(commands.set("jmh-floor", token, nxPx))) {
            throw new IllegalStateException("floor key taken");
        }
        return commands.evalsha(compareAndDelete, ScriptOutputType.INTEGER, new String[] {"jmh-floor"}, token);
    }

    @Benchmark
    public void relockReentry() {
        outer.lock();
        outer.unlock();
    }

    @Benchmark
    public String relockHandOffScriptOnBareLettuce() {
        // ARGV[6..9]: the grant in the reply; the successor, its lease, the hand-over's id (see release.lua)
        long next = handOffHolder + 1;
        String reply = commands.evalsha(releaseSha, ScriptOutputType.VALUE, handOffKeys, handOffOwner(handOffHolder),
                "all", "1000", "jmh-handoff:wake:", handOffToken, "1", handOffOwner(next), "30000",
                Long.toString(next));
        String[] grant = reply.split(" ");
        if (grant.length != 4 || !grant[1].equals(handOffOwner(next))) {
            throw new IllegalStateException("not handed off: " + reply);
        }
        handOffHolder = next;
        handOffToken = grant[2];
        return reply;
    }

    @Benchmark
    public RelockLock relockLockView() {
        return relock.lock("jmh:view");
    }
}
