/**
 * The one lease keeper of every client ({@link dev.relock.internal.lease.LeaseKeeper}): a single thread that
 * renews due holds in batches and reports each hold lost at its deadline, with the thread and its clock
 * behind {@link dev.relock.internal.lease.KeeperScheduler} so deadline logic is tested on a hand-driven
 * clock. What a renewal is (one script call, or a vote of N nodes) is the engine's
 * {@link dev.relock.internal.lease.LeaseKeeper.Renewal}.
 */
package dev.relock.internal.lease;
