package dev.relock.testredis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The switch of unit-test runs: with {@value RedisProcess#REFUSE_PROPERTY} set, no server of any topology is even
 * created, and the refusal says why. A unit test itself: it runs in {@code mvn test}, where the build sets the
 * property; it sets its own value to be independent of the run.
 */
class RefusedLaunchTest {

    private static final String WHY = "unit tests start no redis-server";

    private String before;

    @BeforeEach
    void refuseServers() {
        before = System.setProperty(RedisProcess.REFUSE_PROPERTY, WHY);
    }

    @AfterEach
    void restoreTheProperty() {
        if (before == null) {
            System.clearProperty(RedisProcess.REFUSE_PROPERTY);
        } else {
            System.setProperty(RedisProcess.REFUSE_PROPERTY, before);
        }
    }

    @Test
    void everyTopologyIsRefusedWithTheReasonAndNothingIsLeftOpen() {
        assertThatThrownBy(RedisServer::start).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RedisProcess.REFUSE_PROPERTY).hasMessageEndingWith(WHY);
        assertThatThrownBy(() -> RedisNodes.start(3)).hasMessageEndingWith(WHY);
        assertThatThrownBy(RedisSentinelGroup::start).hasMessageEndingWith(WHY);
        assertThatThrownBy(RedisCluster::start).hasMessageEndingWith(WHY);
        assertThat(ProcessRegistry.instance().openProcesses()).isEmpty();
    }
}
