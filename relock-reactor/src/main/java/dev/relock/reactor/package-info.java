/**
 * relock for Project Reactor: {@link dev.relock.reactor.ReactiveLocks} turns relock-core's handle-owned
 * asynchronous acquisitions into lazy, cancellable {@code Mono}s, and runs a {@code Mono} or {@code Flux} while a
 * lock (or a semaphore's permits) is held, releasing it however the publisher ends. Owns no state of its own: every
 * hold is relock-core's, through its public API.
 */
package dev.relock.reactor;
