/**
 * relock for Project Reactor: {@link dev.relock.reactor.ReactiveRelockLock},
 * {@link dev.relock.reactor.ReactiveRelockReadWriteLock} and {@link dev.relock.reactor.ReactiveRelockSemaphore}, views
 * of relock-core's objects, and the static {@link dev.relock.reactor.ReactiveLocks} under them, turn relock-core's
 * handle-owned asynchronous acquisitions, and its latch and condition waits, into lazy, cancellable {@code Mono}s, and
 * run a {@code Mono} or {@code Flux} while a lock (or a semaphore's permits) is held, releasing it however the
 * publisher ends. Owns no state of its own: every hold is relock-core's, through its public API.
 */
package dev.relock.reactor;
