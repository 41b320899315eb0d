package dev.relock;

import java.time.Duration;

/**
 * Main class of the child JVM in {@link ProcessKillFaultTest}: connects to the Redis given as the first argument with
 * a 1 s renewed lease, acquires the lock named by the second, prints {@code ACQUIRED <fencing token>} and then holds
 * it until its standard input ends (so it also goes away with the test JVM). It is meant to be SIGKILLed while holding.
 */
final class LockHolderInChildJvm {

    static final Duration LEASE = Duration.ofSeconds(1);

    private LockHolderInChildJvm() {
    }

    public static void main(String[] args) throws Exception {
        RelockClient client = RelockClient.builder()
                .redisUri(args[0])
                .defaultLease(LEASE)
                .commandTimeout(Duration.ofSeconds(2))
                .build();
        LockHandle held = client.lock(args[1]).acquire();
        System.out.println("ACQUIRED " + held.fencingToken());
        System.out.flush();
        while (System.in.read() >= 0) {
            // hold the lock until killed or until the test JVM closes our input
        }
        held.close();
        client.close();
    }
}
