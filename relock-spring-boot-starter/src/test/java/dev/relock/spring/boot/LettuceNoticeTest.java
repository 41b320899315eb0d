package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Issue 39: a Boot 3.5 application (Lettuce 6.6, which sends commands in flight again after a reconnect) logged a
 * WARN about lost leases at every start, and again at every connect attempt while Redis was down. Now relock says
 * it at INFO, once per JVM (another test of this JVM may have been told first, hence "at most once"), and never at
 * WARN; on Boot 4 (Lettuce 7.5) not at all.
 */
@Tag("redis")
@ExtendWith(OutputCaptureExtension.class)
class LettuceNoticeTest extends RelockContextTestBase {

    private static final String NOTICE = "sends a command again after a reconnect";

    @Test
    void startsAndReconnectAttemptsSayItAtMostOnceAndNeverAtWarn(CapturedOutput output) {
        for (int i = 0; i < 2; i++) {
            runner.run(context -> assertThat(context.getBean(RelockClient.class).ping()).isNotNull());
        }
        try (RedisServer down = RedisServer.start()) {
            down.stop();
            runner.withPropertyValues("spring.data.redis.port=" + down.port(), "relock.command-timeout=300ms")
                    .run(context -> {
                        RelockLock lock = context.getBean(RelockClient.class).lock("while-down");
                        for (int attempt = 0; attempt < 3; attempt++) { // each a connect attempt of its own
                            assertThatThrownBy(lock::tryLock).isInstanceOf(RedisUnavailableException.class);
                        }
                    });
        }

        String version = RedisClient.class.getPackage().getImplementationVersion();
        assertThat(output.getAll().lines().filter(line -> line.contains(NOTICE)))
                .as("lines on Lettuce %s", version)
                .hasSizeLessThanOrEqualTo(version != null && version.matches("6\\.[0-6]\\..*") ? 1 : 0)
                .allSatisfy(line -> assertThat(line).contains("INFO").doesNotContain("WARN"));
    }
}
