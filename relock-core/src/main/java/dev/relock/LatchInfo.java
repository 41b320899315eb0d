package dev.relock;

import java.time.Duration;
import java.util.List;

/**
 * What Redis holds for one {@link RelockCountDownLatch} at one moment, for operators' tools.
 *
 * @param name the latch's name
 * @param count the count left; 0 when it reached zero, was never set, or expired
 * @param set whether Redis has the latch at all (armed, or opened and not yet expired)
 * @param expiresIn how long until Redis deletes it unless it is set or counted down; {@link Duration#ZERO} when
 *     not set
 * @param waitingClients the ids of the clients that have threads waiting for it to open (a client that died while
 *     waiting stays listed until the latch opens or expires)
 */
public record LatchInfo(String name, long count, boolean set, Duration expiresIn, List<String> waitingClients) {

    public LatchInfo {
        waitingClients = List.copyOf(waitingClients);
    }
}
