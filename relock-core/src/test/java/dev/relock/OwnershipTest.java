package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On one Redis a re-entry, and the release of a hold that is not the owner's last, is a round trip that
 * finds a lock forced open (docs/guarantees.md: "A re-entry proves the lease is still there"); Redlock counts re-entries
 * in the client only and notices the loss at the lease keeper's next look or the last release. The rest of
 * ownership and forceUnlock, on every topology, is in contract/LockContract.
 */
@Tag("redis")
class OwnershipTest extends OneServerTestBase {

    @Test
    void eachHoldOfALostReentrantLockMustBeUnlocked() {
        RelockLock held = newClient().lock("lost-twice");
        held.lock();
        held.lock();
        assertThat(newClient().lock("lost-twice").forceUnlock()).isTrue();

        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isEqualTo(1);
        assertThat(held.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(held::lock).as("no re-entry into a lost hold").isInstanceOf(LeaseLostException.class)
                .hasMessageEndingWith("; unlock() the earlier holds first");
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isZero();
        assertThatThrownBy(held::unlock).isExactlyInstanceOf(IllegalMonitorStateException.class);
        // afterwards the thread may take the lock afresh
        assertThat(held.tryLock()).isTrue();
        held.unlock();
    }

    @Test
    void aReEntryThatFindsTheLockForcedOpenThrowsAndTheEarlierHoldMustBeUnlocked() {
        // the default 30 s lease: no renewal comes before the re-entry. The re-entry finds the loss in Redis, unless
        // the message force-unlock.lua sends the holder's client was there first
        RelockLock held = newClient().lock("forced-then-reentered");
        held.lock();
        assertThat(newClient().lock("forced-then-reentered").forceUnlock()).isTrue();

        assertThatThrownBy(held::lock).isInstanceOf(LeaseLostException.class)
                .satisfies(lost -> assertThat(lost.getMessage())
                        .containsAnyOf("no longer had it at re-entry", "an operator forced it open"))
                .hasMessageEndingWith("; unlock() the earlier holds first");
        assertThat(held.getHoldCount()).isEqualTo(1);
        assertThatThrownBy(held::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(held.getHoldCount()).isZero();
    }
}
