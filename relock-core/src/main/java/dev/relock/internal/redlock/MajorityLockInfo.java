package dev.relock.internal.redlock;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a majority of the nodes hold for one lock, from the nodes' inspect.lua answers (pttl, waiters, writer, holds,
 * token, then readers as triples): the owner that writes on a majority (or else the readers that each read on a
 * majority), the holder's fencing token, and the lease within which a majority still holds it; waiters are the
 * writers that wait (their marks on the node that has most). A hold left on a minority of nodes counts as free.
 * Stateless.
 */
final class MajorityLockInfo {

    private MajorityLockInfo() {
    }

    /** The lock {@code name} as {@code answers}, at least {@code majority} of them, show it. */
    static LockInfo of(String name, List<List<Object>> answers, int majority) {
        // the waiting writers' marks (see acquire.lua), as many as the node with the most has
        int waiters = 0;
        for (List<Object> answer : answers) {
            waiters = Math.max(waiters, ((Long) answer.get(1)).intValue());
        }
        LockInfo writer = writerOf(name, answers, majority, waiters);
        if (writer != null) {
            return writer;
        }
        LockInfo readers = readersOf(name, answers, majority, waiters);
        return readers != null ? readers : new LockInfo(name, LockKind.FREE, Map.of(), 0, Duration.ZERO, waiters, 0);
    }

    /** The writer that holds on a majority, or null. */
    private static LockInfo writerOf(String name, List<List<Object>> answers, int majority, int waiters) {
        Map<String, List<List<Object>>> byWriter = new HashMap<>();
        for (List<Object> answer : answers) {
            String writer = (String) answer.get(2);
            if (!writer.isEmpty()) {
                byWriter.computeIfAbsent(writer, w -> new ArrayList<>()).add(answer);
            }
        }
        for (Map.Entry<String, List<List<Object>>> entry : byWriter.entrySet()) {
            List<List<Object>> held = entry.getValue();
            if (held.size() >= majority) {
                List<Long> tokens = new ArrayList<>();
                List<Long> leases = new ArrayList<>();
                for (List<Object> answer : held) {
                    tokens.add((Long) answer.get(4));
                    leases.add(leaseOf(answer));
                }
                return new LockInfo(name, LockKind.EXCLUSIVE, Map.of(entry.getKey(), 1),
                        majorityToken(tokens, majority), majorityLease(leases, majority), waiters, 0);
            }
        }
        return null;
    }

    /** The readers that each read on a majority, with the largest of their tokens, or null if none does. */
    private static LockInfo readersOf(String name, List<List<Object>> answers, int majority, int waiters) {
        // each reader's token on each node that has it
        Map<String, List<Long>> tokensByReader = new HashMap<>();
        for (List<Object> answer : answers) {
            for (int i = 5; i + 2 < answer.size(); i += 3) {
                tokensByReader.computeIfAbsent((String) answer.get(i), reader -> new ArrayList<>())
                        .add((Long) answer.get(i + 2));
            }
        }
        tokensByReader.values().removeIf(tokens -> tokens.size() < majority);
        if (tokensByReader.isEmpty()) {
            return null;
        }
        long token = 0;
        for (List<Long> tokens : tokensByReader.values()) {
            token = Math.max(token, majorityToken(tokens, majority));
        }
        List<Long> leases = new ArrayList<>();
        for (List<Object> answer : answers) {
            boolean reads = false;
            for (int i = 5; i + 2 < answer.size(); i += 3) {
                if (tokensByReader.containsKey((String) answer.get(i))) {
                    reads = true;
                }
            }
            if (reads) {
                leases.add(leaseOf(answer));
            }
        }
        Map<String, Integer> holders = new HashMap<>();
        tokensByReader.keySet().forEach(reader -> holders.put(reader, 1));
        return new LockInfo(name, LockKind.SHARED, holders, token, majorityLease(leases, majority), waiters, 0);
    }

    /** A node's PTTL of the lock, MAX_VALUE without expiry. */
    private static long leaseOf(List<Object> answer) {
        long pttl = (Long) answer.get(0);
        return pttl == -1 ? Long.MAX_VALUE : pttl;
    }

    /**
     * One hold's fencing token from the tokens its nodes keep for it (at least a majority of them): the majority-th
     * largest. The holder settled on the largest token of the majority that granted it first, and wrote it back to
     * every node unless that majority gave exactly that token; a node that granted after it settled may keep a larger
     * one, but such nodes are a minority, so they never reach the majority-th place. The largest would report theirs.
     */
    private static long majorityToken(List<Long> tokens, int majority) {
        tokens.sort(Collections.reverseOrder());
        return tokens.get(majority - 1);
    }

    /**
     * The majority-th longest of the nodes' leases (ms, MAX_VALUE without expiry): until then a majority still holds
     * it.
     */
    private static Duration majorityLease(List<Long> leases, int majority) {
        leases.sort(null);
        long lease = leases.size() < majority ? 0 : leases.get(leases.size() - majority);
        return lease == Long.MAX_VALUE ? ChronoUnit.FOREVER.getDuration() : Duration.ofMillis(Math.max(0, lease));
    }
}
