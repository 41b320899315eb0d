package dev.relock.internal.redlock;

import dev.relock.LockInfo;
import dev.relock.RedisUnavailableException;
import dev.relock.internal.engine.InspectReply;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.script.SharedScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What an operator sees of the locks on the nodes: one lock as a majority holds it ({@link #inspect}) and the locks
 * held on a majority whose names match a glob ({@link #list}). Read-only; each waits in the calling thread, at most
 * the command timeout per node and page. Thread-safe.
 */
final class OperatorViews {

    private final NodeSet nodes;
    private final String keyPrefix;

    OperatorViews(NodeSet nodes, String keyPrefix) {
        this.nodes = nodes;
        this.keyPrefix = keyPrefix;
    }

    /**
     * What a majority of the nodes hold for the lock ({@link MajorityLockInfo}). Waits for every node, at most the
     * command timeout.
     *
     * @throws RedisUnavailableException if fewer than a majority of the nodes answered
     */
    LockInfo inspect(String name) {
        LockKeys keys = LockKeys.of(keyPrefix, name);
        Poll<List<Object>> poll = nodes.sendToAll(SharedScripts.INSPECT, ScriptOutputType.MULTI, keys.all(),
                reply -> true);
        poll.awaitAll(nodes.timeoutNanos());
        List<List<Object>> answers = poll.answers();
        if (answers.size() < nodes.majority()) {
            throw nodes.unavailable("inspect", name, poll);
        }
        return MajorityLockInfo.of(name, answers.stream().map(InspectReply::decode).toList(), nodes.majority());
    }

    /**
     * The locks held on a majority whose names match {@code nameGlob}: every node is walked with
     * SCAN for lock hashes (one after another, each page within the command timeout), and each
     * name found on any node is inspected on all of them ({@link #inspect}). A lock held on a
     * majority is on at least one node of every majority, so a majority of walks finds it.
     * Semaphores do not exist on Redlock. Like SCAN, it may miss a lock taken during the walk.
     *
     * @throws RedisUnavailableException if fewer than a majority of the nodes could be walked
     */
    List<LockInfo> list(String nameGlob) {
        List<LockInfo> held = new ArrayList<>();
        for (String name : namesOnAnyNode(nameGlob)) {
            LockInfo info = inspect(name);
            if (info.isHeld()) {
                held.add(info);
            }
        }
        return held;
    }

    /** The names of the lock hashes that match {@code nameGlob} on any node, if a majority could be walked. */
    private Set<String> namesOnAnyNode(String nameGlob) {
        // LockKeys escapes the glob like a name (its *, ? and [] stay globs); the lock hashes end at
        // the tag's '}', so the fence and readers keys do not match
        String match = LockKeys.lockKeyPattern(keyPrefix, nameGlob);
        Set<String> names = new TreeSet<>();
        int walked = 0;
        List<String> failures = new ArrayList<>();
        for (RedlockNode node : nodes.all()) {
            try {
                for (String key : node.scan(match)) {
                    String name = LockKeys.nameOf(keyPrefix, key);
                    if (name != null) {
                        names.add(name);
                    }
                }
                walked++;
            } catch (RuntimeException e) {
                failures.add(node.describe(e));
            }
        }
        if (walked < nodes.majority()) {
            throw new RedisUnavailableException("list: " + walked + " of " + nodes.size()
                    + " Redlock nodes could be walked, a majority needs " + nodes.majority() + ": "
                    + String.join("; ", failures), null);
        }
        return names;
    }
}
