/**
 * The engine for Redlock: N independent masters, every command sent to all at once and its replies counted
 * by majority ({@link dev.relock.internal.redlock.Poll}); validity with clock drift, fencing tokens agreed by
 * a majority, writers' turns on every node, release signals, and what a renewal is by vote.
 * {@link dev.relock.internal.redlock.RedlockEngine} is a facade over one collaborator per job and holds the design
 * notes. Only its factories and {@link dev.relock.internal.redlock.ClockDrift} are used from outside.
 */
package dev.relock.internal.redlock;
