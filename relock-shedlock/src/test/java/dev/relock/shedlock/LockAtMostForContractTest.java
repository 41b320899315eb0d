package dev.relock.shedlock;

import org.junit.jupiter.api.Tag;

/** ShedLock's contract with {@link RelockLockProvider.Lease#LOCK_AT_MOST_FOR}: all of it applies. */
@Tag("redis")
class LockAtMostForContractTest extends ShedLockContractTestBase {

    @Override
    RelockLockProvider provider() {
        return new RelockLockProvider(client, "shedlock", RelockLockProvider.Lease.LOCK_AT_MOST_FOR);
    }
}
