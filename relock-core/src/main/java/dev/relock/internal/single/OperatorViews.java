package dev.relock.internal.single;

import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.internal.engine.InspectReply;
import dev.relock.internal.engine.LockKeys;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.SharedScripts;
import dev.relock.internal.script.SingleServerScripts;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What an operator sees of the locks and semaphores under the client's key prefix: one lock or semaphore
 * ({@code inspect}, one script that reads its keys at one instant) and every held lock and every semaphore
 * ({@code list}, a SCAN, then one inspection per key found), decoded into {@link LockInfo}.
 *
 * <p>Reads only; any thread, blocking in it within the command timeout.
 */
final class OperatorViews {

    private final RedisCalls calls;
    private final String keyPrefix;

    OperatorViews(RedisCalls calls, String keyPrefix) {
        this.calls = calls;
        this.keyPrefix = keyPrefix;
    }

    LockInfo inspect(String name) {
        return calls.await(inspectAsync(name), "inspect", name);
    }

    LockInfo inspectSemaphore(String name) {
        return calls.await(inspectSemaphoreAsync(name), "inspect", name);
    }

    List<LockInfo> list(String nameGlob) {
        // the glob applies to names, so it is escaped like a name (its *, ? and [] stay globs);
        // the trailing * also finds the semaphores' "...}:sem" keys
        ScanArgs match = ScanArgs.Builder
                .matches(LockKeys.lockKeyPattern(keyPrefix, nameGlob) + "*")
                .limit(1000);
        List<CompletableFuture<LockInfo>> found = new ArrayList<>();
        KeyScanCursor<String> page = null;
        do {
            ScanCursor cursor = page == null ? ScanCursor.INITIAL : page;
            page = calls.await(calls.commands().scan(cursor, match), "list", null);
            for (String key : page.getKeys()) {
                CompletableFuture<LockInfo> info = inspectKeyAsync(key);
                if (info != null) {
                    found.add(info);
                }
            }
        } while (!page.isFinished());
        List<LockInfo> locks = new ArrayList<>();
        for (CompletableFuture<LockInfo> info : found) {
            LockInfo lock = calls.await(info, "list", null);
            if (lock != null && (lock.isHeld() || lock.kind() == LockKind.SEMAPHORE)) {
                locks.add(lock);
            }
        }
        locks.sort(Comparator.comparing(LockInfo::name)
                .thenComparing(info -> info.kind() == LockKind.SEMAPHORE));
        return locks;
    }

    /** The inspection of the lock or semaphore {@code key} belongs to, null on failure; null for a key of neither. */
    private CompletableFuture<LockInfo> inspectKeyAsync(String key) {
        String lockName = LockKeys.nameOf(keyPrefix, key);
        String semaphoreName = key.endsWith("}:sem")
                ? LockKeys.nameOf(keyPrefix, key.substring(0, key.length() - ":sem".length()))
                : null;
        // a key of another type that happens to match is skipped
        if (lockName != null) {
            return inspectAsync(lockName).exceptionally(error -> null);
        }
        if (semaphoreName != null) {
            return inspectSemaphoreAsync(semaphoreName).exceptionally(error -> null);
        }
        return null;
    }

    private CompletableFuture<LockInfo> inspectSemaphoreAsync(String name) {
        LockKeys keys = LockKeys.ofSemaphore(keyPrefix, name);
        return calls.<List<Object>>run(SingleServerScripts.PERMITS_INSPECT, ScriptOutputType.MULTI, keys.all())
                .thenApply(reply -> {
                    // see permits-inspect.lua for the layout
                    Map<String, Integer> holders = new LinkedHashMap<>();
                    for (int i = 3; i + 1 < reply.size(); i += 2) {
                        holders.put((String) reply.get(i), ((Long) reply.get(i + 1)).intValue());
                    }
                    return new LockInfo(name, LockKind.SEMAPHORE, holders, 0,
                            Duration.ofMillis((Long) reply.get(2)), ((Long) reply.get(1)).intValue(),
                            ((Long) reply.get(0)).intValue());
                });
    }

    private CompletableFuture<LockInfo> inspectAsync(String name) {
        LockKeys keys = LockKeys.of(keyPrefix, name);
        return calls.<List<Object>>run(SharedScripts.INSPECT, ScriptOutputType.MULTI, keys.all())
                .thenApply(reply -> InspectReply.decode(reply).toLockInfo(name));
    }
}
