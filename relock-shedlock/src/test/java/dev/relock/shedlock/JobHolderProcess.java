package dev.relock.shedlock;

import dev.relock.RelockClient;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * A second JVM for {@link DeadNodeTest}: takes a job's lock with the default provider, prints
 * {@value #LOCKED}, then holds it until it is killed (or its standard input closes).
 * Arguments: redis URI, job name, client default lease in milliseconds.
 */
final class JobHolderProcess {

    static final String LOCKED = "LOCKED";

    private JobHolderProcess() {
    }

    public static void main(String[] args) throws IOException {
        try (RelockClient client = RelockClient.builder().redisUri(args[0])
                .defaultLease(Duration.ofMillis(Long.parseLong(args[2]))).build()) {
            LockConfiguration job = new LockConfiguration(Instant.now(), args[1], Duration.ofMillis(10), Duration.ZERO);
            new RelockLockProvider(client).lock(job).orElseThrow();
            System.out.println(LOCKED);
            System.out.flush();
            while (System.in.read() != -1) {
                // hold the lock while the test keeps our input open
            }
        }
    }
}
