package dev.relock.spring.internal;

import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockLock;
import dev.relock.internal.metrics.CountedCall;
import dev.relock.reactor.ReactiveLocks;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * A call of a {@code @DistributedLock} method that returns a Mono, a Flux or a Publisher: the Mono or Flux returned
 * in its place takes the lock when subscribed (relock-reactor, a hold owned by a handle), then calls the method and
 * subscribes what it returns, and releases the lock when that ends: completes, fails or is cancelled. Nothing of the
 * method runs without the lock: not even the code that builds its publisher.
 *
 * <p>Threads. The acquisition completes on a thread of the relock client (a Lettuce event executor), whose timers,
 * replies and hand-overs wait while anything runs there. So the handle is handed to {@code usingWhen} on
 * {@link Schedulers#boundedElastic()}, Reactor's scheduler for work that may block ({@link HandleHandOff}), and the
 * method is called, and its publisher subscribed, there (and so is the fallback of a lock not acquired): a method
 * may block before it returns its publisher (a file read, a JDBC call) without stalling the client. The hop comes
 * before {@code usingWhen}, not inside it (a {@code subscribeOn} of the method's publisher would let a cancel
 * release the lock while the method still runs, and interrupt it), so the lock is held exactly as long as without
 * it: a cancel while the method runs releases it once the method has returned (its publisher is then cancelled),
 * and a cancel before the hop releases it without calling the method. The publisher's signals come from wherever
 * it emits them.
 *
 * <p>Only loaded for such methods ({@link LockedMethod.Result#MONO}, {@link LockedMethod.Result#FLUX}), so an
 * application without Reactor never loads it. Stateless; each subscription keeps its own state.
 */
final class LockedPublisher {

    private LockedPublisher() {}

    /** The Mono or Flux a call of {@code locked} returns. */
    static Object call(LockedMethod locked, RelockLock lock, String lockName, MethodInvocation invocation,
            Object target, Object[] args) {
        if (locked.result() == LockedMethod.Result.MONO) {
            return Mono.defer(() -> {
                AtomicBoolean acquired = new AtomicBoolean();
                return ReactiveLocks.holding(acquisition(locked, lock, lockName, acquired),
                                held -> Mono.from(proceed(invocation)))
                        .switchIfEmpty(Mono.defer(() -> acquired.get() ? Mono.empty()
                                : Mono.from(notAcquired(locked, lockName, target, args))));
            });
        }
        return Flux.defer(() -> {
            AtomicBoolean acquired = new AtomicBoolean();
            return ReactiveLocks.holdingMany(acquisition(locked, lock, lockName, acquired),
                            held -> proceed(invocation))
                    .switchIfEmpty(Flux.defer(() -> acquired.get() ? Flux.empty()
                            : notAcquired(locked, lockName, target, args)));
        });
    }

    /** What a skipped call of a method of this {@code result} returns. */
    static Object empty(LockedMethod.Result result) {
        return result == LockedMethod.Result.MONO ? Mono.empty() : Flux.empty();
    }

    /**
     * The acquisition, noting in {@code acquired} that it acquired, its handle signalled where the method may be
     * called ({@link HandleHandOff}, right before {@code usingWhen}). Its first try is made on the subscriber's
     * thread, unless it may connect the client ({@link LockedMethod#firstTryMayConnect}): it is then made on
     * {@link Schedulers#boundedElastic()}, as the later tries are, so that a subscriber on an event loop is not
     * blocked for the command timeout while Redis is down. Each subscription's tries count as one acquisition
     * ({@link CountedLock}), ended when they are.
     */
    private static Mono<LockHandle> acquisition(LockedMethod locked, RelockLock lock, String lockName,
            AtomicBoolean acquired) {
        Mono<LockHandle> tries = Mono.defer(() -> {
            CountedCall call = locked.startCall();
            return tryWithinWait(locked, CountedLock.of(lock, call), lockName, locked.startWait())
                    // ended before the outcome goes on (doFinally would run after the subscriber saw it): whoever
                    // sees the failure sees it counted
                    .doOnTerminate(call::end).doOnCancel(call::end);
        });
        if (LockedMethod.firstTryMayConnect(lock)) {
            tries = tries.subscribeOn(Schedulers.boundedElastic());
        }
        return HandleHandOff.onBoundedElastic(tries.doOnNext(held -> acquired.set(true)));
    }

    /**
     * Tries to take {@code lock} within the {@code wait}, trying again after a pause while Redis cannot be reached
     * ({@link LockWait}); the last failure becomes the lock's
     * {@link dev.relock.spring.RedisUnavailableForLockException}. The tries after the first are subscribed on
     * {@link Schedulers#boundedElastic()}, as a client that never connected blocks while it connects; so is the
     * first where {@link #acquisition} says so.
     */
    private static Mono<LockHandle> tryWithinWait(LockedMethod locked, RelockLock lock, String lockName,
            LockWait wait) {
        Mono<LockHandle> oneTry = Mono.defer(() -> locked.lease() == null
                ? ReactiveLocks.tryAcquire(lock, wait.remaining())
                : ReactiveLocks.tryAcquire(lock, wait.remaining(), locked.lease()));
        return oneTry.retryWhen(Retry.from(failures -> failures.concatMap(failure -> {
            long pause = failure.failure() instanceof RedisUnavailableException
                    ? wait.pauseNanosAfterUnreachable() : -1;
            return pause < 0 ? Mono.error(failure.failure())
                    : Mono.delay(Duration.ofNanos(pause), Schedulers.boundedElastic());
        }))).onErrorMap(RedisUnavailableException.class, e -> locked.unreachable(lockName, e));
    }

    /**
     * Calls the method (on through the advisors after this one) and returns its publisher; once per subscription,
     * each on a clone of the invocation, since a proxy's invocation proceeds only once through the chain. It runs
     * on a thread of {@link Schedulers#boundedElastic()}, so the invocation is exposed there, as AspectJ advices
     * after this one expect ({@link ExposeInvocationInterceptor}).
     */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> proceed(MethodInvocation invocation) {
        try {
            MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied
                    ? proxied.invocableClone() : invocation;
            Publisher<Object> returned = (Publisher<Object>) ExposeInvocationInterceptor.INSTANCE.invoke(call);
            return returned == null ? Mono.empty() : returned;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }

    /** The error, empty result or fallback publisher of a call whose lock was not acquired. */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> notAcquired(LockedMethod locked, String lockName, Object target,
            Object[] args) {
        try {
            Publisher<Object> returned = (Publisher<Object>) locked.notAcquired(lockName, target, args);
            return returned == null ? Mono.empty() : returned;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }
}
