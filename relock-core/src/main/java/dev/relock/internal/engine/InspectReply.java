package dev.relock.internal.engine;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One server's answer to inspect.lua, decoded (see the script for the layout): the lock's PTTL, the waiting writers'
 * marks, the writer with its hold count and fencing token ("", 0 and 0 when none writes), and each reader whose lease
 * has not ended with its own. The single-server engine reads one as the lock's state ({@link #toLockInfo}); the
 * Redlock engine reads one per node and keeps what a majority of them hold. Immutable.
 *
 * <p>Public because both engines, each in a package of its own, decode inspect.lua's replies with it.
 *
 * @param pttlMillis the lock's PTTL: -2 when nothing holds it, -1 when it has no expiry
 * @param waiters the live marks of waiting writers
 * @param writer the owner id of the writer, "" when none
 * @param writerHolds the writer's hold count, 0 when none
 * @param writerToken the writer's fencing token, 0 when none
 * @param readers the readers, in the reply's order
 */
public record InspectReply(long pttlMillis, int waiters, String writer, int writerHolds, long writerToken,
        List<Reader> readers) {

    /** One reader of the lock: its owner id, its hold count and its fencing token. */
    public record Reader(String owner, int holds, long token) {
    }

    /** Decodes inspect.lua's reply. */
    public static InspectReply decode(List<Object> reply) {
        List<Reader> readers = new ArrayList<>();
        for (int i = 5; i + 2 < reply.size(); i += 3) {
            readers.add(new Reader((String) reply.get(i), ((Long) reply.get(i + 1)).intValue(),
                    (Long) reply.get(i + 2)));
        }
        return new InspectReply((Long) reply.get(0), ((Long) reply.get(1)).intValue(), (String) reply.get(2),
                ((Long) reply.get(3)).intValue(), (Long) reply.get(4), List.copyOf(readers));
    }

    /** Whether a writer holds the lock. */
    public boolean hasWriter() {
        return !writer.isEmpty();
    }

    /**
     * The lock {@code name} as this one server holds it: the writer, or else the readers with the largest of their
     * tokens, or free; the lease left, forever without expiry.
     */
    public LockInfo toLockInfo(String name) {
        Map<String, Integer> holders = new LinkedHashMap<>();
        if (hasWriter()) {
            holders.put(writer, writerHolds);
            return new LockInfo(name, LockKind.EXCLUSIVE, holders, writerToken, leaseOf(pttlMillis), waiters, 0);
        }
        long token = 0;
        for (Reader reader : readers) {
            holders.put(reader.owner(), reader.holds());
            token = Math.max(token, reader.token());
        }
        return holders.isEmpty() ? new LockInfo(name, LockKind.FREE, holders, 0, Duration.ZERO, waiters, 0)
                : new LockInfo(name, LockKind.SHARED, holders, token, leaseOf(pttlMillis), waiters, 0);
    }

    /** The lease a PTTL of {@code pttlMillis} leaves: forever for -1 (no expiry), else that many ms, at least 0. */
    public static Duration leaseOf(long pttlMillis) {
        return pttlMillis == -1 ? ChronoUnit.FOREVER.getDuration() : Duration.ofMillis(Math.max(0, pttlMillis));
    }
}
