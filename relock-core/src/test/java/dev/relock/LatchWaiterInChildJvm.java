package dev.relock;

import java.time.Duration;

/**
 * Main class of a child JVM for {@link CountDownLatchAcrossProcessesTest}: connects to the Redis given as the first
 * argument, awaits the count-down latch named by the second for at most the third argument in milliseconds, prints
 * {@code OPENED true} (or {@code OPENED false} when the time ran out) and exits.
 */
final class LatchWaiterInChildJvm {

    private LatchWaiterInChildJvm() {
    }

    public static void main(String[] args) throws Exception {
        try (RelockClient client = RelockClient.builder().redisUri(args[0]).build()) {
            boolean opened = client.countDownLatch(args[1]).await(Duration.ofMillis(Long.parseLong(args[2])));
            System.out.println("OPENED " + opened);
        }
    }
}
