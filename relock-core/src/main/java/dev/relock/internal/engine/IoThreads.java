package dev.relock.internal.engine;

import dev.relock.internal.redis.RedisCalls;
import io.netty.channel.EventLoop;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * The rule that keeps the commands on one connection in the order relock sends them: <b>no command is handed to
 * Lettuce on a Netty I/O thread</b>.
 *
 * <p>Why. Lettuce writes a command from a thread that is not its connection's event loop by queueing a task on
 * that loop, and from the event loop itself at once. So a command sent on the loop (in a reply callback, a pub/sub
 * message, a user's callback) overtakes every command other threads queued on that loop before it and that the
 * loop has not run yet: a release could reach Redis after the same owner's next attempt, a withdraw before the
 * attempt it undoes. Sent only from other threads, every command joins its loop's queue when it is sent, and the
 * queue keeps that order.
 *
 * <p>How. Events of the acquisition state machines that arrive on an I/O thread are handled elsewhere: by the thread
 * blocked waiting for that acquisition, or on the client's event executors ({@link SteppedAcquisition#step}); the
 * other paths that send and may be called anywhere
 * (releases, clean-ups of lost holds) go through {@link #offIo}. The event executors are not I/O threads.
 *
 * <p>Two senders stay on the I/O threads, where order does not matter: the EVAL that follows a NOSCRIPT
 * reply ({@code RedisCalls.run}: the same script again, and going out early only keeps it nearer its place),
 * and {@code ShardWakeChannels}' subscriptions decided in pub/sub listeners (an early SSUBSCRIBE that a
 * SUNSUBSCRIBE then ends is answered by a {@code sunsubscribe} push, on which the channel subscribes again).
 * Those senders hold locks that tasks on the event executors also take, so {@link #offIo}, which waits for an
 * executor, must not be used there.
 *
 * <p>Public because both engines, each in a package of its own, send through it.
 */
public final class IoThreads {

    private IoThreads() {
    }

    /** Whether the calling thread is a Netty I/O thread (an event loop of some channel). */
    public static boolean isCurrent() {
        return ThreadExecutorMap.currentExecutor() instanceof EventLoop;
    }

    /**
     * Runs {@code send} in the calling thread, or, on a Netty I/O thread, on {@code executor} while the calling
     * thread waits for it: either way its commands have been handed to Lettuce when this returns, so whatever the
     * caller sends afterwards follows them. {@code send} must only hand commands over, never wait for a reply, and
     * must not need a lock the caller holds; nor may the caller hold a lock that a task on {@code executor} waits
     * for (that task's thread might be the one picked to run {@code send}). An executor that shuts down (the
     * client closes) leaves it to the calling thread.
     */
    public static <T> T offIo(Executor executor, Supplier<T> send) {
        if (!isCurrent()) {
            return send.get();
        }
        CompletableFuture<T> sent;
        try {
            sent = CompletableFuture.supplyAsync(send, executor);
        } catch (RejectedExecutionException e) {
            return send.get();
        }
        try {
            return sent.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    /** As {@link #offIo(Executor, Supplier)}, for a send with no result. */
    public static void offIo(Executor executor, Runnable send) {
        offIo(executor, () -> {
            send.run();
            return null;
        });
    }
}
