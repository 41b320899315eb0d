package dev.relock.internal.redlock;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.internal.engine.InspectReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a majority of the nodes hold for one lock, from the nodes' inspect.lua answers ({@link InspectReply}): the
 * owner that writes on a majority (or else the readers that each read on a majority), the holder's fencing token, and
 * the lease within which a majority still holds it; waiters are the writers that wait (their marks on the node that
 * has most). A hold left on a minority of nodes counts as free. Stateless.
 */
final class MajorityLockInfo {

    private MajorityLockInfo() {
    }

    /** The lock {@code name} as {@code answers}, at least {@code majority} of them, show it. */
    static LockInfo of(String name, List<InspectReply> answers, int majority) {
        // the waiting writers' marks (see acquire.lua), as many as the node with the most has
        int waiters = 0;
        for (InspectReply answer : answers) {
            waiters = Math.max(waiters, answer.waiters());
        }
        LockInfo writer = writerOf(name, answers, majority, waiters);
        if (writer != null) {
            return writer;
        }
        LockInfo readers = readersOf(name, answers, majority, waiters);
        return readers != null ? readers : new LockInfo(name, LockKind.FREE, Map.of(), 0, Duration.ZERO, waiters, 0);
    }

    /** The writer that holds on a majority, or null. */
    private static LockInfo writerOf(String name, List<InspectReply> answers, int majority, int waiters) {
        Map<String, List<InspectReply>> byWriter = new HashMap<>();
        for (InspectReply answer : answers) {
            if (answer.hasWriter()) {
                byWriter.computeIfAbsent(answer.writer(), w -> new ArrayList<>()).add(answer);
            }
        }
        for (Map.Entry<String, List<InspectReply>> entry : byWriter.entrySet()) {
            List<InspectReply> held = entry.getValue();
            if (held.size() >= majority) {
                List<Long> tokens = new ArrayList<>();
                List<Duration> leases = new ArrayList<>();
                for (InspectReply answer : held) {
                    tokens.add(answer.writerToken());
                    leases.add(InspectReply.leaseOf(answer.pttlMillis()));
                }
                return new LockInfo(name, LockKind.EXCLUSIVE, Map.of(entry.getKey(), 1),
                        majorityToken(tokens, majority), majorityLease(leases, majority), waiters, 0);
            }
        }
        return null;
    }

    /** The readers that each read on a majority, with the largest of their tokens, or null if none does. */
    private static LockInfo readersOf(String name, List<InspectReply> answers, int majority, int waiters) {
        // each reader's token on each node that has it
        Map<String, List<Long>> tokensByReader = new HashMap<>();
        for (InspectReply answer : answers) {
            for (InspectReply.Reader reader : answer.readers()) {
                tokensByReader.computeIfAbsent(reader.owner(), owner -> new ArrayList<>()).add(reader.token());
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
        List<Duration> leases = new ArrayList<>();
        for (InspectReply answer : answers) {
            if (answer.readers().stream().anyMatch(reader -> tokensByReader.containsKey(reader.owner()))) {
                leases.add(InspectReply.leaseOf(answer.pttlMillis()));
            }
        }
        Map<String, Integer> holders = new HashMap<>();
        tokensByReader.keySet().forEach(reader -> holders.put(reader, 1));
        return new LockInfo(name, LockKind.SHARED, holders, token, majorityLease(leases, majority), waiters, 0);
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

    /** The majority-th longest of the nodes' leases: until then a majority still holds it. */
    private static Duration majorityLease(List<Duration> leases, int majority) {
        leases.sort(null);
        return leases.size() < majority ? Duration.ZERO : leases.get(leases.size() - majority);
    }
}
