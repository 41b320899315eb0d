package dev.relock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.relock.RelockClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on relock registries: two application
 * instances (two relock clients) compete for one role; exactly one leads at a time, and the other
 * takes over when the leader stops or its relock client closes.
 */
@Tag("redis")
class LeaderElectionTest extends OneRedisPerClass {

    private final List<RelockClient> clients = new CopyOnWriteArrayList<>();
    private final List<LockRegistryLeaderInitiator> initiators = new CopyOnWriteArrayList<>();

    /**
     * Candidates that lead now, by id. Two may overlap for a moment at a hand-over: the initiator
     * unlocks before it revokes, and a leader whose lock is gone learns it at its next heartbeat.
     */
    private final Map<String, Boolean> leading = new ConcurrentHashMap<>();
    private final AtomicInteger grants = new AtomicInteger();

    @AfterEach
    void stopEverything() {
        initiators.forEach(LockRegistryLeaderInitiator::stop);
        initiators.clear();
        clients.forEach(RelockClient::close);
        clients.clear();
        leading.clear();
        grants.set(0);
        redis.flushAll();
    }

    @Test
    void exactlyOneOfTwoInstancesLeadsAndTheOtherTakesOverWhenItStops() {
        LockRegistryLeaderInitiator a = instance("a", RelockClient.builder().redisUri(redis.uri()).build());
        LockRegistryLeaderInitiator b = instance("b", RelockClient.builder().redisUri(redis.uri()).build());
        a.start();
        b.start();

        await().atMost(HANG).until(() -> leading.size() == 1);
        String first = leading.keySet().iterator().next();
        await().during(Duration.ofMillis(500)).atMost(HANG)
                .until(() -> leading.keySet().equals(Set.of(first)) && grants.get() == 1);

        ("a".equals(first) ? a : b).stop();

        String second = "a".equals(first) ? "b" : "a";
        await().atMost(HANG).until(() -> leading.keySet().equals(Set.of(second)));
        assertThat(grants).hasValue(2);
    }

    @Test
    void theOtherInstanceTakesOverAndTheLeaderIsRevokedWhenTheLeadersClientCloses() {
        RelockClient clientA = RelockClient.builder().redisUri(redis.uri()).build();
        LockRegistryLeaderInitiator a = instance("a", clientA);
        a.start();
        await().atMost(HANG).until(() -> leading.containsKey("a"));
        LockRegistryLeaderInitiator b = instance("b", RelockClient.builder().redisUri(redis.uri()).build());
        b.start();

        clientA.close();

        await().atMost(HANG).until(() -> leading.keySet().equals(Set.of("b")));
        assertThat(a.getContext().isLeader()).isFalse();
    }

    private LockRegistryLeaderInitiator instance(String id, RelockClient client) {
        clients.add(client);
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                new RelockLockRegistry(client, "leaders"), new RecordingCandidate(id));
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(50);
        initiator.setApplicationEventPublisher(event -> { });
        initiators.add(initiator);
        return initiator;
    }

    private final class RecordingCandidate extends DefaultCandidate {

        RecordingCandidate(String id) {
            super(id, "scheduler");
        }

        @Override
        public void onGranted(Context ctx) {
            super.onGranted(ctx);
            grants.incrementAndGet();
            leading.put(getId(), true);
        }

        @Override
        public void onRevoked(Context ctx) {
            leading.remove(getId());
            super.onRevoked(ctx);
        }
    }
}
