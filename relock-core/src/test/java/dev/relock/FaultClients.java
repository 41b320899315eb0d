package dev.relock;

import java.time.Duration;

/** The clients the fault tests use: a renewed default lease, a short command timeout, a lease-lost listener. */
final class FaultClients {

    private FaultClients() {
    }

    /** A client on {@code uri} whose holds are renewed every {@code lease}/3 and which tells {@code listener}. */
    static RelockClient renewing(String uri, Duration lease, Duration commandTimeout, LeaseLostListener listener) {
        return RelockClient.builder()
                .redisUri(uri)
                .defaultLease(lease)
                .commandTimeout(commandTimeout)
                .leaseLostListener(listener)
                .build();
    }
}
