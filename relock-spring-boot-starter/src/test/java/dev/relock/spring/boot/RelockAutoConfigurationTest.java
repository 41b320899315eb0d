package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.LeaseLost;
import dev.relock.LeaseLostException;
import dev.relock.LeaseLostListener;
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import dev.relock.RelockSettings;
import dev.relock.ReplicationGuard;
import dev.relock.ReplicationShortfallException;
import dev.relock.internal.engine.RedisConnections;
import dev.relock.spring.internal.DistributedLockAdvisor;
import dev.relock.testredis.RedisCluster;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configured client: where it connects ({@code spring.data.redis.*} or an application's
 * Lettuce client), what {@code relock.*} sets, when it backs off, and that it closes with the context.
 * One fixture Redis with a password for the class; each test starts light contexts without web or
 * application beans.
 */
@Tag("redis")
class RelockAutoConfigurationTest extends RelockContextTestBase {

    private static final String PASSWORD = "s3cret:@/ pass";

    @Override
    protected RedisServer startRedisServer() {
        return RedisServer.builder().password(PASSWORD).start();
    }

    @Test
    void connectsWithTheSpringDataRedisPasswordAndDatabase() {
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "spring.data.redis.database=3",
                "relock.key-prefix=app").run(context -> {
                    RelockClient client = context.getBean(RelockClient.class);
                    try (LockHandle held = client.lock("report").acquire()) {
                        assertThat(keysIn(3, "app:*")).contains("app:{report}");
                        assertThat(keysIn(0, "app:*")).isEmpty();
                    }
                });
    }

    @Test
    void theClientIsNamedAfterTheApplicationAndItsLabelInItsIdentityAndInClientList() {
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "spring.application.name=billing",
                "relock.client-label=blue").run(context -> {
                    RelockClient client = context.getBean(RelockClient.class);
                    assertThat(client.identity().application()).isEqualTo("billing");
                    assertThat(client.identity().label()).isEqualTo("blue");
                    try (LockHandle held = client.lock("named").acquire()) {
                        assertThat(redis.execute("CLIENT", "LIST"))
                                .contains(" name=" + client.identity().connectionName() + " ");
                    }
                    assertThat(client.identity().connectionName()).startsWith("relock:billing:").endsWith(":blue");
                });
    }

    @Test
    void connectsWithTheSpringDataRedisUrl() {
        runner.withPropertyValues("spring.data.redis.url=redis://:" + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8).replace("+", "%20")
                + "@" + redis.host() + ":" + redis.port() + "/2", "spring.data.redis.port=1").run(context -> {
                    try (LockHandle held = context.getBean(RelockClient.class).lock("url").acquire()) {
                        assertThat(keysIn(2, "relock:*")).contains("relock:{url}");
                    }
                });
    }

    @Test
    void aWrongPasswordFailsEveryCallNamingTheReasonButNotTheStartUp() {
        runner.withPropertyValues("spring.data.redis.password=wrong", "relock.command-timeout=2s").run(context -> {
            assertThat(context).hasNotFailed();
            RelockLock lock = context.getBean(RelockClient.class).lock("guarded");
            assertThatThrownBy(lock::tryLock).isInstanceOf(RelockException.class)
                    .hasMessageContaining(redis.host() + ":" + redis.port()).hasMessageContaining("WRONGPASS");
        });
    }

    @Test
    void relockPropertiesConfigureTheClient() {
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.key-prefix=billing",
                "relock.default-lease=12s", "relock.command-timeout=1500ms", "relock.handoff-grace=250ms",
                "spring.data.redis.timeout=9s").run(context -> assertThat(context.getBean(RelockClient.class).settings())
                        .isEqualTo(new RelockSettings("billing", Duration.ofSeconds(12), Duration.ofMillis(1500),
                                Duration.ofMillis(250))));
    }

    @Test
    void theSpringDataRedisTimeoutIsTheCommandTimeoutUnlessRelockSetsOne() {
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "spring.data.redis.timeout=4s")
                .run(context -> assertThat(context.getBean(RelockClient.class).settings().commandTimeout())
                        .isEqualTo(Duration.ofSeconds(4)));
    }

    @Test
    void anApplicationsLettuceClientIsUsedAndLeftOpen() {
        RedisClient lettuce = RedisClient.create(redis.uriWithPassword() + "/5");
        try {
            runner.withPropertyValues("spring.data.redis.port=1")
                    .withBean(RedisClient.class, () -> lettuce, definition -> definition.setDestroyMethodName(""))
                    .run(context -> {
                        try (LockHandle held = context.getBean(RelockClient.class).lock("lettuce").acquire()) {
                            assertThat(keysIn(5, "relock:*")).contains("relock:{lettuce}");
                        }
                    });
            try (StatefulRedisConnection<String, String> stillUsable = lettuce.connect()) {
                assertThat(stillUsable.sync().ping()).isEqualTo("PONG");
            }
        } finally {
            lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void anApplicationsRelockClientWins() {
        try (RelockClient own = RelockClient.builder().redisUri(redis.uriWithPassword()).keyPrefix("own").build()) {
            runner.withPropertyValues("spring.data.redis.port=1")
                    .withBean(RelockClient.class, () -> own, definition -> definition.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasSingleBean(RelockClient.class);
                        assertThat(context.getBean(RelockClient.class)).isSameAs(own);
                        assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
                    });
        }
    }

    @Test
    void theClientIsClosedWithTheContext() {
        RelockClient[] client = new RelockClient[1];
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD)
                .run(context -> client[0] = context.getBean(RelockClient.class));
        assertThatThrownBy(() -> client[0].lock("after-close")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void clusterNodesConnectToTheRedisCluster() {
        try (RedisCluster cluster = RedisCluster.builder().masters(3).start()) {
            String nodes = String.join(",", cluster.uris().stream()
                    .map(uri -> uri.substring("redis://".length())).toList());
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(RelockAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.cluster.nodes=" + nodes)
                    .run(context -> {
                        RelockClient client = context.getBean(RelockClient.class);
                        // names whose keys live on different masters
                        for (String name : List.of("cluster:a", "cluster:b", "cluster:c", "cluster:d")) {
                            try (LockHandle held = client.lock(name).acquire()) {
                                assertThat(client.inspect(name).isHeld()).isTrue();
                            }
                        }
                    });
        }
    }

    /**
     * On Boot 3.5's Lettuce (6.6) the guard is refused, and the start-up says why: that Lettuce sends a WAIT that was in
     * flight at a dropped connection again after the reconnect (core's LettuceLinesTest shows it). Boot 4's 7.5 takes it.
     */
    @Test
    void replicationGuardPropertiesConfigureTheGuard() {
        if (RedisConnections.lettuceSendsInFlightCommandsAgain()) {
            runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.replication-guard.enabled=true")
                    .run(context -> assertThat(context).getFailure().rootCause()
                            .hasMessageContaining("replicationGuard(...) needs Lettuce 6.7 or newer"));
            return;
        }
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.replication-guard.enabled=true",
                        "relock.replication-guard.timeout=100ms", "relock.replication-guard.on-shortfall=fail")
                .run(context -> {
                    RelockClient client = context.getBean(RelockClient.class);
                    assertThat(client.settings().replicationGuard())
                            .isEqualTo(new ReplicationGuard(1, Duration.ofMillis(100), ReplicationGuard.OnShortfall.FAIL));
                    // the fixture server has no replica: a fresh acquisition cannot be confirmed
                    assertThatThrownBy(() -> client.lock("guarded").tryLock())
                            .isInstanceOf(ReplicationShortfallException.class);
                });
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD).run(context ->
                assertThat(context.getBean(RelockClient.class).settings().replicationGuard()).isNull());
    }

    @Test
    void anFsyncedGuardIsRefusedByAServerWithoutWaitaof() {
        // the fixture's servers are 7.0 or 6.2; WAITAOF came with 7.2
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.replication-guard.enabled=true",
                        "relock.replication-guard.fsynced=true")
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(
                        RedisConnections.lettuceSendsInFlightCommandsAgain() ? "needs Lettuce 6.7" : "WAITAOF"));
    }

    @Test
    void relockEnabledFalseConfiguresNothing() {
        runner.withPropertyValues("relock.enabled=false", "spring.data.redis.port=1").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(RelockClient.class);
            assertThat(context).doesNotHaveBean(DistributedLockAdvisor.class);
        });
    }

    @Test
    void customizersAdjustTheBuilderAfterTheProperties() {
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.key-prefix=overridden")
                .withBean(RelockClientBuilderCustomizer.class, () -> builder -> builder.keyPrefix("customized"))
                .run(context -> assertThat(context.getBean(RelockClient.class).settings().keyPrefix())
                        .isEqualTo("customized"));
    }

    @Test
    void leaseLostListenerBeansAreToldOfLostLeases() {
        List<LeaseLost> lost = new CopyOnWriteArrayList<>();
        runner.withPropertyValues("spring.data.redis.password=" + PASSWORD, "relock.default-lease=300ms")
                .withBean(LeaseLostListener.class, () -> lost::add)
                .run(context -> {
                    RelockLock lock = context.getBean(RelockClient.class).lock("taken-away");
                    lock.lock();
                    assertThat(lock.forceUnlock()).isTrue();
                    Awaitility.await().atMost(Duration.ofSeconds(10))
                            .untilAsserted(() -> assertThat(lost).extracting(LeaseLost::lockName).containsExactly("taken-away"));
                    assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
                });
    }

    private List<String> keysIn(int database, String pattern) {
        RedisClient admin = RedisClient.create(redis.uriWithPassword() + "/" + database);
        try (StatefulRedisConnection<String, String> connection = admin.connect()) {
            return connection.sync().keys(pattern);
        } finally {
            admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
