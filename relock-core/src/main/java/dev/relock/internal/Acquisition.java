package dev.relock.internal;

import dev.relock.RedisUnavailableException;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fresh acquisition by one owner: attempts, the wait between them, and the clean-up when the
 * wait ends without success. Used once, by the thread that acquires.
 *
 * <p>The owner joins the queue in Redis and parks on a {@link Waiter}; it is woken by a message
 * naming it when its turn comes, or wakes by itself when a holder's lease would run out or its own
 * wait ends. It never polls at a fixed rate.
 *
 * <p>Ambiguity: an attempt whose reply times out may still be applied by Redis. It is then
 * followed, on the same connection and so in order, by the mode's withdraw script, which undoes
 * a fresh acquisition and leaves the queue; nothing ownerless lingers until its lease runs out.
 */
final class Acquisition {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
    // what a waiter without a deadline tells the script it will wait: its queue entry then lives
    // as long as the retry hint, which it refreshes
    private static final long WAIT_FOREVER_MILLIS = TimeUnit.DAYS.toMillis(1);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final LettuceRelockClient client;
    private final String name;
    private final LockKeys keys;
    private final LockMode mode;
    private final String owner;
    private final long leaseMillis;
    private final boolean renewed;
    private final String[] extraArgs;
    private final LongFunction<RuntimeException> refusal;

    /**
     * @param extraArgs arguments after the six every acquire script takes
     * @param refusal the exception for a negative reply code (the script's reason to refuse),
     *     given the code
     */
    Acquisition(LettuceRelockClient client, String name, LockKeys keys, LockMode mode, String owner,
            long leaseMillis, boolean renewed, String[] extraArgs, LongFunction<RuntimeException> refusal) {
        this.client = client;
        this.name = name;
        this.keys = keys;
        this.mode = mode;
        this.owner = owner;
        this.leaseMillis = leaseMillis;
        this.renewed = renewed;
        this.extraArgs = extraArgs;
        this.refusal = refusal;
    }

    /**
     * Acquires, waiting as asked.
     *
     * @param waitNanos how long to wait; zero or less tries once without queueing
     * @param forever wait without a deadline, retrying Redis failures with back-off
     * @return the hold, registered with the client, or null if the wait ended first
     */
    Hold run(long waitNanos, boolean forever, boolean interruptible) throws InterruptedException {
        LockEvents.Wait observed = client.events().waitStarted(mode, name);
        try {
            Hold hold = waitFor(waitNanos, forever, interruptible);
            if (hold == null) {
                observed.timedOut();
            } else {
                observed.acquired(hold);
            }
            return hold;
        } catch (InterruptedException | RuntimeException | Error e) {
            observed.failed(e);
            throw e;
        }
    }

    private Hold waitFor(long waitNanos, boolean forever, boolean interruptible) throws InterruptedException {
        long start = System.nanoTime();
        if (!forever && waitNanos <= 0) {
            Attempt attempt = attempt(0);
            return attempt.acquired() ? register(attempt) : null;
        }
        // capped so the deadline arithmetic cannot overflow; 146 years is forever enough
        long deadline = start + Math.min(waitNanos, Long.MAX_VALUE / 2);
        Waiter waiter = client.waitingRoom().enter(owner, keys, mode);
        boolean interrupted = false;
        long backoff = 0;
        try {
            while (true) {
                waiter.reset();
                // after reset(): a close() from now on leaves its wake-up in the waiter (and
                // withdraws it from the queue)
                client.ensureOpen();
                long now = System.nanoTime();
                long parkUntil;
                try {
                    long waitMillis = forever ? WAIT_FOREVER_MILLIS : Math.max(1, ceilMillis(deadline - now));
                    Attempt attempt = attempt(waitMillis);
                    if (attempt.acquired()) {
                        return register(attempt);
                    }
                    backoff = 0;
                    // +1 ms: wake just after the holder's lease has run out in Redis
                    parkUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(attempt.retryMillis() + 1);
                } catch (RedisUnavailableException e) {
                    if (!forever) {
                        throw e;
                    }
                    backoff = backoff == 0 ? FIRST_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                    log.debug("{} '{}': Redis unavailable, trying again in {} ms: {}",
                            mode.description, name, TimeUnit.NANOSECONDS.toMillis(backoff), e.getMessage());
                    parkUntil = System.nanoTime() + backoff;
                }
                if (!forever) {
                    if (System.nanoTime() - deadline >= 0) {
                        withdraw(false);
                        return null;
                    }
                    parkUntil = deadline - parkUntil < 0 ? deadline : parkUntil;
                }
                try {
                    waiter.await(parkUntil);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        withdraw(false);
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            client.waitingRoom().leave(owner, waiter);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private record Attempt(boolean acquired, long token, long retryMillis, long sentNanos) {}

    private Attempt attempt(long waitMillis) {
        String[] args = new String[6 + extraArgs.length];
        args[0] = owner;
        args[1] = Long.toString(leaseMillis);
        args[2] = "0";
        args[3] = Long.toString(waitMillis);
        args[4] = client.graceMillis();
        args[5] = client.wakeChannelPrefix();
        System.arraycopy(extraArgs, 0, args, 6, extraArgs.length);
        long sent = System.nanoTime();
        CompletableFuture<List<Long>> reply = client.calls().run(mode.acquire, ScriptOutputType.MULTI, keys.all(), args);
        List<Long> result;
        try {
            result = client.calls().await(reply, "acquire", name);
        } catch (RedisUnavailableException e) {
            // the attempt may still be applied; undo it in order on the same connection
            withdraw(true);
            throw e;
        }
        long code = result.get(0);
        if (code < 0) {
            throw refusal.apply(code);
        }
        return code == 1
                ? new Attempt(true, result.get(1), 0, sent)
                : new Attempt(false, 0, result.get(1), sent);
    }

    private Hold register(Attempt attempt) {
        Hold hold = new Hold(name, keys, mode, owner, attempt.token(), leaseMillis, renewed, attempt.sentNanos());
        client.holds().add(hold);
        if (client.isClosed()) {
            // close() may have released the table before this hold joined it
            client.holds().remove(hold);
            client.calls().runInOrder(mode.release, ScriptOutputType.INTEGER, keys.all(),
                    owner, "all", client.graceMillis(), client.wakeChannelPrefix());
            client.ensureOpen();
        }
        log.debug("{} '{}' acquired by {} with fencing token {}", mode.description, name, owner, attempt.token());
        return hold;
    }

    /** Leaves the queue (and undoes a fresh hold whose reply was lost), without waiting for the reply. */
    private void withdraw(boolean undoFreshHold) {
        if (client.isClosed()) {
            // close() withdraws the waiters itself, before it closes the connection
            return;
        }
        client.calls().<Long>runInOrder(mode.withdraw, ScriptOutputType.INTEGER, keys.all(),
                        owner, mode.kind, undoFreshHold ? "1" : "0", client.graceMillis(), client.wakeChannelPrefix())
                .whenComplete((undone, error) -> {
                    if (error != null) {
                        log.debug("{} '{}': withdrawing {} failed; its queue entry expires by itself: {}",
                                mode.description, name, owner, error.toString());
                    }
                });
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }
}
