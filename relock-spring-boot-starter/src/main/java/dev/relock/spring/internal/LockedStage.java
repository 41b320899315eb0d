package dev.relock.spring.internal;

import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockLock;
import dev.relock.internal.metrics.CountedCall;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;

/**
 * A call of a {@code @DistributedLock} method that returns a CompletionStage: takes the lock for a handle without
 * blocking the caller, calls the method once it is held, and releases it when the method's stage completes,
 * normally or exceptionally. The caller gets at once a CompletableFuture that completes after the release, with the
 * method's outcome.
 *
 * <p>Threads. The acquisition completes on a Lettuce thread, where nothing may block, and a release blocks for a
 * round trip: so the method is called, and the hold released, on {@link #THREADS}, a pool of daemon threads
 * ("relock-stage-N") shared by every application context of the JVM, whose threads end after 30 s unused. Stateless
 * apart from that pool.
 */
final class LockedStage {

    private static final Logger LOG = LoggerFactory.getLogger(LockedStage.class);

    /** Calls methods and releases holds: at most max(4, 2 × processors) at once, the rest queued. Never shut down. */
    private static final Executor THREADS = threads();

    private LockedStage() {}

    /** The CompletableFuture a call of {@code locked} returns. */
    static CompletableFuture<Object> call(LockedMethod locked, RelockLock lock, String lockName,
            MethodInvocation invocation, Object target, Object[] args) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Optional<LockHandle>> acquisition = new CompletableFuture<>();
        // a caller who cancels while the lock is awaited withdraws the acquisition; once it is done, this does nothing
        result.whenComplete((value, failure) -> acquisition.cancel(false));
        LockWait wait = locked.startWait();
        CountedCall call = locked.startCall();
        // after the last try reported its outcome: core tells it before it completes the try's future
        acquisition.whenComplete((held, failure) -> call.end());
        RelockLock counted = CountedLock.of(lock, call);
        if (LockedMethod.firstTryMayConnect(lock)) {
            // it would connect on the caller's thread, perhaps an event loop, for up to the command timeout
            THREADS.execute(() -> tryWithinWait(locked, counted, lockName, wait, acquisition));
        } else {
            tryWithinWait(locked, counted, lockName, wait, acquisition);
        }
        acquisition.whenCompleteAsync((held, failure) -> {
            call.end(); // counted before the caller sees the outcome (the dependent above may not have run yet)
            if (failure != null) {
                result.completeExceptionally(unwrap(failure));
            } else if (held.isEmpty()) {
                completeNotAcquired(result, locked, lockName, target, args);
            } else {
                run(held.get(), invocation, result);
            }
        }, THREADS);
        return result;
    }

    /**
     * One try to take {@code lock} for {@code acquisition}, within what is left of the {@code wait}: completes
     * {@code acquisition} with its outcome, or, when the try could not reach Redis and the wait is not over, makes
     * the next try after a pause ({@link LockWait}), on {@link #THREADS}; the first runs on the caller's thread,
     * or on {@link #THREADS} too where it may connect the client ({@link LockedMethod#firstTryMayConnect}).
     * A cancel of {@code acquisition} cancels the try under way, which withdraws it, and stops the tries; a handle
     * that comes after it is released.
     */
    private static void tryWithinWait(LockedMethod locked, RelockLock lock, String lockName, LockWait wait,
            CompletableFuture<Optional<LockHandle>> acquisition) {
        if (acquisition.isDone()) {
            // cancelled during the pause
            return;
        }
        CompletableFuture<Optional<LockHandle>> started;
        try {
            started = locked.tryAcquireAsync(lock, wait.remaining()).toCompletableFuture();
        } catch (RuntimeException e) {
            // refused at once: the client is closed or cannot connect, the lease too short for the deployment
            started = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Optional<LockHandle>> thisTry = started;
        acquisition.whenComplete((held, failure) -> thisTry.cancel(false));
        // on THREADS: a handle that comes after a cancel is released there, which blocks for a round trip
        thisTry.whenCompleteAsync((held, failure) -> {
            Throwable error = failure == null ? null : unwrap(failure);
            if (error instanceof RedisUnavailableException unreachable) {
                long pause = wait.pauseNanosAfterUnreachable();
                if (pause < 0) {
                    acquisition.completeExceptionally(locked.unreachable(lockName, unreachable));
                } else {
                    CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS, THREADS)
                            .execute(() -> tryWithinWait(locked, lock, lockName, wait, acquisition));
                }
            } else if (error != null) {
                acquisition.completeExceptionally(error);
            } else if (!acquisition.complete(held)) {
                held.ifPresent(LockedStage::releaseQuietly);
            }
        }, THREADS);
    }

    private static void run(LockHandle held, MethodInvocation invocation, CompletableFuture<Object> result) {
        if (result.isDone()) {
            // the caller cancelled as the lock was acquired: the method does not run
            releaseQuietly(held);
            return;
        }
        CompletionStage<?> stage;
        try {
            // on this class's thread, not the caller's: exposed as AspectJ advices after this one expect
            stage = (CompletionStage<?>) ExposeInvocationInterceptor.INSTANCE.invoke(invocation);
        } catch (Throwable t) {
            finish(result, held, null, t);
            return;
        }
        if (stage == null) {
            finish(result, held, null, null);
            return;
        }
        stage.whenCompleteAsync((value, failure) -> finish(result, held, value, failure), THREADS);
    }

    /**
     * Releases the hold, then completes the result with the method's outcome. As for a method with a plain result,
     * a failed release is added to the method's exception, or, if it had none, fails the result: the work then ran
     * without the exclusion the caller asked for.
     */
    private static void finish(CompletableFuture<Object> result, LockHandle held, Object value, Throwable failure) {
        Throwable error = failure == null ? null : unwrap(failure);
        try {
            held.close();
        } catch (RuntimeException e) {
            if (error == null) {
                error = e;
            } else {
                error.addSuppressed(e);
            }
        }
        if (error == null) {
            result.complete(value);
        } else {
            result.completeExceptionally(error);
        }
    }

    private static void completeNotAcquired(CompletableFuture<Object> result, LockedMethod locked, String lockName,
            Object target, Object[] args) {
        Object instead;
        try {
            instead = locked.notAcquired(lockName, target, args);
        } catch (Throwable t) {
            result.completeExceptionally(t);
            return;
        }
        if (instead == null) {
            result.complete(null);
            return;
        }
        ((CompletionStage<?>) instead).whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            } else {
                result.completeExceptionally(unwrap(failure));
            }
        });
    }

    private static void releaseQuietly(LockHandle held) {
        try {
            held.close();
        } catch (RuntimeException e) {
            LOG.warn("lock '{}' could not be released after its caller cancelled; its lease runs out on its own",
                    held.name(), e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private static Executor threads() {
        int threads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        AtomicInteger count = new AtomicInteger();
        ThreadFactory daemons = task -> {
            Thread thread = new Thread(task, "relock-stage-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemons);
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
