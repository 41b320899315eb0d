package dev.relock.spring.internal;

import dev.relock.HolderIdentity;
import dev.relock.LockInfo;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.internal.metrics.CountedCall;
import dev.relock.spring.LockNotAcquiredException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;

/**
 * Runs a {@code @DistributedLock} method while holding its lock: evaluates the name, then, for a
 * method with a plain result, takes the lock in the calling thread, proceeds, and releases it in the
 * same thread when the method returns or throws. A method returning a CompletionStage, a Mono or a
 * Flux gets a result of that kind at once, whose lock is held by a handle until the work ends
 * ({@link LockedStage}, {@link LockedPublisher}). Stateless apart from the shared method registry;
 * used by any number of threads.
 */
final class DistributedLockInterceptor implements MethodInterceptor {

    private final LockedMethods lockedMethods;
    private final Supplier<RelockClient> client;

    DistributedLockInterceptor(LockedMethods lockedMethods, Supplier<RelockClient> client) {
        this.lockedMethods = lockedMethods;
        this.client = client;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target == null ? null : AopUtils.getTargetClass(target);
        Optional<LockedMethod> found = lockedMethods.find(invocation.getMethod(), targetClass);
        if (found.isEmpty()) {
            return invocation.proceed();
        }
        LockedMethod locked = found.get();
        Object[] args = invocation.getArguments();
        String lockName = locked.lockName(target, args, lockedMethods.beanFactory());
        RelockLock lock = locked.lock(client.get(), lockName);
        switch (locked.result()) {
            case STAGE:
                return LockedStage.call(locked, lock, lockName, invocation, target, args);
            case MONO:
            case FLUX:
                return LockedPublisher.call(locked, lock, lockName, invocation, target, args);
            case VALUE:
            default:
                return callHoldingThreadLock(invocation, locked, lock, lockName, target, args,
                        () -> heldBy(client.get(), lockName));
        }
    }

    /**
     * " (held by billing on host-17 (pid 4242), thread worker-3)" for a blocking caller's exception: one inspect, on
     * the failure path only (never for asynchronous results, whose callers may sit on an event loop); "" when it
     * cannot be found out.
     */
    private static String heldBy(RelockClient client, String lockName) {
        try {
            LockInfo info = client.inspect(lockName);
            List<String> holders = new ArrayList<>();
            info.holders().keySet().forEach(owner -> {
                HolderIdentity named = info.identities().get(owner);
                holders.add(named == null ? owner : named.describe());
            });
            return holders.isEmpty() ? "" : " (held by " + String.join("; ", holders) + ")";
        } catch (RuntimeException e) {
            return "";
        }
    }

    private static Object callHoldingThreadLock(MethodInvocation invocation, LockedMethod locked, RelockLock lock,
            String lockName, Object target, Object[] args, Supplier<String> heldBy) throws Throwable {
        boolean acquired;
        CountedCall call = locked.startCall();
        try {
            acquired = tryLockWithinWait(locked, CountedLock.of(lock, call), lockName);
        } catch (InterruptedException e) {
            if (locked.declaresInterruptedException()) {
                throw e;
            }
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(lockName, locked.method(), "was not acquired: interrupted while waiting", e);
        } finally {
            call.end();
        }
        if (!acquired) {
            return locked.notAcquired(lockName, target, args, heldBy);
        }
        Throwable failure = null;
        try {
            return invocation.proceed();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            release(lock, failure);
        }
    }

    /**
     * Tries to take {@code lock} within the method's wait, trying again after a pause while Redis cannot be reached
     * ({@link LockWait}); the pause is slept in the calling thread, which an interrupt ends.
     *
     * @throws dev.relock.spring.RedisUnavailableForLockException if the last try could not reach Redis either
     */
    private static boolean tryLockWithinWait(LockedMethod locked, RelockLock lock, String lockName)
            throws InterruptedException {
        LockWait wait = locked.startWait();
        while (true) {
            try {
                return locked.tryLock(lock, wait.remaining());
            } catch (RedisUnavailableException e) {
                long pause = wait.pauseNanosAfterUnreachable();
                if (pause < 0) {
                    throw locked.unreachable(lockName, e);
                }
                TimeUnit.NANOSECONDS.sleep(pause);
            }
        }
    }

    /**
     * Releases the hold taken for this call. If the method threw, a failure to release (such as a
     * lost lease) is added to its exception; otherwise it is thrown, since the work then ran
     * without the exclusion the caller asked for.
     */
    private static void release(RelockLock lock, Throwable methodFailure) {
        try {
            lock.unlock();
        } catch (RuntimeException e) {
            if (methodFailure == null) {
                throw e;
            }
            methodFailure.addSuppressed(e);
        }
    }
}
