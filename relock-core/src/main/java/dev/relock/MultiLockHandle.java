package dev.relock;

import java.util.List;
import java.util.Map;

/** The holds of one {@link RelockMultiLock} acquisition; closing it releases them all, once. */
public interface MultiLockHandle extends AutoCloseable {

    /** One handle per lock, in acquisition order. */
    List<LockHandle> handles();

    /** Lock name -> fencing token of this acquisition. */
    Map<String, Long> fencingTokens();

    /** Whether every hold is still valid. */
    default boolean isValid() {
        return handles().stream().allMatch(LockHandle::isValid);
    }

    /**
     * Releases every lock, in reverse order. Every lock is released even if one fails; the first
     * failure is thrown afterwards.
     */
    @Override
    void close();
}
