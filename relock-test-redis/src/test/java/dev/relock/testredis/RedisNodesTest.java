package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;

import java.util.HashSet;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("redis")
class RedisNodesTest {

    @AfterEach
    void everyServerWasClosed() {
        assertThat(ProcessRegistry.instance().openProcesses()).isEmpty();
    }

    @Test
    void startsIndependentMastersOnDistinctPorts() {
        try (RedisNodes nodes = RedisNodes.start(3)) {
            assertThat(nodes.size()).isEqualTo(3);
            assertThat(new HashSet<>(nodes.nodes().stream().map(RedisServer::port).toList())).hasSize(3);
            assertThat(nodes.uris()).containsExactly(
                    nodes.node(0).uri(), nodes.node(1).uri(), nodes.node(2).uri());

            nodes.node(0).execute("SET", "k", "only-on-0");

            assertThat(nodes.node(1).execute("GET", "k")).isNull();
            assertThat(nodes.node(0).execute("INFO", "replication")).contains("role:master", "connected_slaves:0");
            assertThatThrownBy(() -> nodes.node(3)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void appendOnlyNodesKeepDataAcrossKillButNotAcrossRestartWithoutData() {
        try (RedisNodes nodes = RedisNodes.builder(2).appendOnly(true).start()) {
            RedisServer node = nodes.node(1);
            node.execute("SET", "k", "v");
            assertThat(node.execute("CONFIG", "GET", "appendfsync")).isEqualTo("[appendfsync, always]");

            node.kill();
            node.restart();
            assertThat(node.execute("GET", "k")).isEqualTo("v");

            node.restartWithoutData();
            assertThat(node.execute("GET", "k")).isNull();
            assertThat(node.execute("CONFIG", "GET", "appendonly")).isEqualTo("[appendonly, yes]");
        }
    }

    @Test
    void configAppliesToEveryNodeAndMaxmemoryRefusesWrites() {
        try (RedisNodes nodes = RedisNodes.builder(2)
                .config("maxmemory", "1mb").config("maxmemory-policy", "noeviction").start()) {
            for (RedisServer node : nodes.nodes()) {
                assertThat(node.execute("CONFIG", "GET", "maxmemory-policy")).isEqualTo("[maxmemory-policy, noeviction]");
            }
            String big = "x".repeat(512 * 1024);
            assertThatThrownBy(() -> {
                for (int i = 0; i < 8; i++) {
                    nodes.node(0).execute("SET", "big" + i, big);
                }
            }).isInstanceOf(RedisCommandExecutionException.class).hasMessageContaining("OOM");
        }
    }

    @Test
    void configRewrittenByTheServerSurvivesRestart() {
        try (RedisServer server = RedisServer.start()) {
            server.execute("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
            server.execute("CONFIG", "REWRITE");

            server.restart();

            assertThat(server.execute("CONFIG", "GET", "maxmemory-policy")).isEqualTo("[maxmemory-policy, allkeys-lru]");
        }
    }

    @Test
    void debugSleepWorksOnEveryVersion() {
        try (RedisNodes nodes = RedisNodes.start(1)) {
            assertThat(nodes.node(0).execute("DEBUG", "SLEEP", "0")).isEqualTo("OK");
        }
    }

    @Test
    void badCountIsRefused() {
        assertThatThrownBy(() -> RedisNodes.builder(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count");
    }
}
