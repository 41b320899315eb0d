package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import dev.relock.testredis.TcpProxy;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link LostReplyFaultTest}'s replays on a Redis Cluster: a caller's {@link RedisClusterClient} on Lettuce's default
 * options sends a command whose reply was lost with its connection again after it reconnected, and the master runs
 * it twice. Every connection to a master goes through that master's {@link TcpProxy} (the client's address resolver
 * maps each master's address to its proxy's), so a test can lose the reply of the master that holds its lock.
 */
@Tag("redis")
class ClusterLostReplyFaultTest {

    private RedisCluster cluster;
    // each master's port -> the proxy in front of it
    private final Map<Integer, TcpProxy> proxies = new HashMap<>();
    // closed after each test, last made first
    private final Deque<AutoCloseable> closing = new ArrayDeque<>();

    @BeforeEach
    void startCluster() {
        cluster = RedisCluster.builder().masters(3).start();
        for (RedisServer master : cluster.masters()) {
            TcpProxy proxy = TcpProxy.to(master);
            proxies.put(master.port(), proxy);
            closing.push(proxy);
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        while (!closing.isEmpty()) {
            closing.pop().close();
        }
        cluster.close();
    }

    /** A relock client on a caller's cluster client with Lettuce's default options, every connection proxied. */
    private RelockClient onCallersClusterClientBehindProxies() {
        MappingSocketAddressResolver throughProxies = MappingSocketAddressResolver.create((HostAndPort address) -> {
            TcpProxy proxy = proxies.get(address.getPort());
            return proxy == null ? address : HostAndPort.of(proxy.host(), proxy.port());
        });
        ClientResources resources = ClientResources.builder().socketAddressResolver(throughProxies).build();
        closing.push(resources::shutdown);
        RedisClusterClient callers = RedisClusterClient.create(resources, RedisURI.create(cluster.seedUri()));
        closing.push(callers::shutdown);
        RelockClient client = RelockClient.builder().redisClusterClient(callers).build();
        closing.push(client);
        return client;
    }

    private RelockClient direct() {
        RelockClient client = RelockClient.builder().redisClusterUris(cluster.seedUri()).build();
        closing.push(client);
        return client;
    }

    /** Issue 12, part 1, on Cluster: a re-sent one-hold release gives up one hold, not two. */
    @Test
    void aReleaseThatACallersClusterClientSendsTwiceGivesUpOneHold() {
        String name = "replayed-cluster-release";
        String key = "relock:{" + name + "}";
        RelockClient client = onCallersClusterClientBehindProxies();
        RelockLock lock = client.lock(name);
        lock.lock();
        lock.lock();
        lock.unlock(); // the release script is cached on the lock's master
        lock.lock();
        RedisServer master = cluster.masterFor(key);
        proxies.get(master.port()).loseNextReplyAndClose();
        lock.unlock(); // run, its reply lost, run again after the reconnect

        assertThat(lock.getHoldCount()).isEqualTo(1);
        String writer = master.execute("HGET", key, "~writer");
        assertThat(writer).as("the writer in Redis").startsWith(client.clientId() + ":");
        assertThat(master.execute("HGET", key, writer)).as("holds in Redis").isEqualTo("1");
        LostReplyFaultTest.assertOthersKeptOutUntilTheLastUnlock(lock, name, direct());
    }

    /** Issue 12, part 1, on Cluster: a re-sent re-entry counts one hold, not two. */
    @Test
    void aReEntryThatACallersClusterClientSendsTwiceCountsOneHold() {
        String name = "replayed-cluster-reentry";
        String key = "relock:{" + name + "}";
        RelockClient client = onCallersClusterClientBehindProxies();
        RelockLock lock = client.lock(name);
        lock.lock();
        lock.lock(); // the acquire script is cached on the lock's master
        lock.unlock();
        RedisServer master = cluster.masterFor(key);
        proxies.get(master.port()).loseNextReplyAndClose();
        lock.lock(); // run, its reply lost, run again after the reconnect

        assertThat(lock.getHoldCount()).isEqualTo(2);
        String writer = master.execute("HGET", key, "~writer");
        assertThat(master.execute("HGET", key, writer)).as("holds in Redis").isEqualTo("2");
        lock.unlock();
        lock.unlock();
        RelockClient other = direct();
        assertThat(other.lock(name).tryLock()).as("free after as many unlock()s as lock()s").isTrue();
        other.lock(name).unlock();
    }
}
