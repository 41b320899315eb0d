package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The single-server multi-lock's own mechanics: one script for free locks (the rest is in contract/MultiLockContract). */
@Tag("redis")
class MultiLockTest extends OneServerTestBase {

    @Test
    void freeLocksAreTakenInOneScriptCall() throws Exception {
        RelockMultiLock three = newClient().multiLock("one-call:1", "one-call:2", "one-call:3");
        three.tryLock(); // loads the script; both paths are then warm
        three.unlock();
        long before = scriptCalls();
        try (MultiLockHandle held = three.acquire()) {
            assertThat(scriptCalls() - before).as("script calls to take 3 free locks").isEqualTo(1);
            assertThat(held.fencingTokens()).hasSize(3);
            assertThat(held.fencingTokens().values()).allMatch(token -> token > 0);
        }
    }
}
