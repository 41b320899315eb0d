package dev.relock.shedlock;

/** ShedLock's contract with {@link RelockLockProvider.Lease#LOCK_AT_MOST_FOR}: all of it applies. */
class LockAtMostForContractTest extends ShedLockContractTestBase {

    @Override
    RelockLockProvider provider() {
        return new RelockLockProvider(client, "shedlock", RelockLockProvider.Lease.LOCK_AT_MOST_FOR);
    }
}
