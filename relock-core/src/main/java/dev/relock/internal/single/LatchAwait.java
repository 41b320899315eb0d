package dev.relock.internal.single;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One wait for a count-down latch, blocking no thread: {@link RedisCountDownLatch#awaitAsync} is its result, and the
 * blocking awaits wait for that result in their thread.
 *
 * <p>It reads the latch (latch.lua 'wait', which lists this client as waiting while the count is above zero), then
 * waits for one of: the wake-up of the round it saw armed ({@link #opened}: opened, no round trip); a reason to read
 * again ({@link #wake}: another round's wake-up, a resubscription, the client's close); the latch's expiry as last
 * read (a timer, so a wake-up lost otherwise costs no more than that); its deadline; a stop. A read whose reply fails
 * ends the wait if it was the first (the caller hears of Redis trouble at once) or the deadline has passed, and is
 * tried again with back-off otherwise.
 *
 * <p>State: {@link #round} is written under the lock and read by the pub/sub thread in {@link #opened}; the flags
 * {@link #openedSeen} and {@link #recheck} are set by the pub/sub thread and read under the lock; the rest is guarded by
 * the lock. The deadline is only decided between reads: a read in flight is always answered first.
 */
final class LatchAwait extends SerialWait<Boolean> implements LatchWaits.Waiter {

    // a timer at the latch's expiry fires a little after it, when Redis has deleted the key
    private static final long EXPIRY_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final SingleServerEngine engine;
    private final RedisCountDownLatch latch;
    private final String key;
    // when the wait began, by the client's ticker
    private final long start;
    private final long waitNanos;
    private final boolean forever;
    // the round the first read found armed; written once, under the lock
    private volatile String round;
    // a wake-up for that round came: the latch opened
    private volatile boolean openedSeen;
    // something may have changed: read the latch again
    private volatile boolean recheck;
    // guarded by lock
    private boolean reading;
    private boolean listening;
    private long retryNanos;
    private ScheduledFuture<?> nextRead;
    private ScheduledFuture<?> deadline;
    private String outcome = "failed";

    private LatchAwait(SingleServerEngine engine, RedisCountDownLatch latch, String key, long waitNanos,
            boolean forever) {
        super(engine);
        this.engine = engine;
        this.start = nanoTime();
        this.latch = latch;
        this.key = key;
        this.waitNanos = waitNanos;
        this.forever = forever;
    }

    /**
     * Starts a wait for {@code latch}: until it opens, or {@code waitNanos} passed unless {@code forever}.
     *
     * @throws IllegalStateException if the client is closed
     */
    static LatchAwait start(SingleServerEngine engine, RedisCountDownLatch latch, String key, long waitNanos,
            boolean forever) {
        engine.core.ensureOpen();
        LatchAwait wait = new LatchAwait(engine, latch, key, waitNanos, forever);
        wait.begin(wait::first);
        return wait;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public void opened(String openedRound) {
        if (openedRound.equals(round)) {
            openedSeen = true;
            step(this::look);
        } else {
            wake();
        }
    }

    @Override
    public void wake() {
        recheck = true;
        step(this::look);
    }

    /** Enters the client's waits before the first read is sent, so a wake-up that follows it finds this wait. */
    private void first() {
        engine.latchWaits().enter(this);
        if (!forever) {
            deadline = schedule(this::deadlinePassed, start + Math.min(Math.max(0, waitNanos), Long.MAX_VALUE / 2));
        }
        read();
    }

    private void read() {
        if (engine.core.isClosed()) {
            end(null, engine.core.closedException());
            return;
        }
        reading = true;
        recheck = false;
        nextRead = cancel(nextRead);
        long sent = nanoTime();
        onReply(latch.readAsync("wait"), (reply, error) -> answered(reply, error, sent));
    }

    private void answered(List<Object> reply, Throwable error, long sent) {
        reading = false;
        if (error != null) {
            if (engine.core.isClosed()) {
                end(null, engine.core.closedException());
                return;
            }
            // the first read tells the caller at once; later ones are tried again until the wait ends
            if (round == null || deadlinePassed(nanoTime())) {
                end(null, error);
                return;
            }
            retryNanos = RetryBackoff.after(retryNanos);
            readAt(nanoTime() + retryNanos);
            look();
            return;
        }
        retryNanos = 0;
        long count = (Long) reply.get(0);
        String readRound = (String) reply.get(1);
        long pttl = (Long) reply.get(2);
        if (round == null) {
            if (count == 0) {
                finish("opened", true);
                return;
            }
            round = readRound;
        } else if (!readRound.equals(round)) {
            if (!Arrays.asList(((String) reply.get(3)).split(" ")).contains(round)) {
                outcome = "expired";
                end(null, new IllegalStateException("count-down latch '" + latch.name() + "': the round this wait"
                        + " was for is gone without a trace of its opening: it expired before reaching zero"
                        + " (nobody set it or counted it down for its idle expiry) or was deleted; or, while"
                        + " this wait could not read it, it opened and then expired, or 16 later rounds"
                        + " opened. Never taken for an opening"));
                return;
            }
            // the round waited for opened, and another was armed since
            finish("opened", true);
            return;
        } else if (count == 0) {
            finish("opened", true);
            return;
        }
        if (deadlinePassed(nanoTime())) {
            finish("timeout", false);
            return;
        }
        if (!listening) {
            listening = true;
            if (engine.routes().listenForWakeUps(key, this, sent)) {
                read(); // the shard channel was confirmed after the read: a wake-up may have been missed
                return;
            }
        }
        // pttl -1: a key someone made persistent has no expiry to wake at
        if (pttl > 0) {
            readAt(nanoTime() + TimeUnit.MILLISECONDS.toNanos(pttl) + EXPIRY_MARGIN_NANOS);
        }
        look();
    }

    /** What the wait does between reads, on any event: end when told, read again when there is a reason. */
    private void look() {
        if (openedSeen) {
            finish("opened", true);
        } else if (engine.core.isClosed()) {
            end(null, engine.core.closedException());
        } else if (recheck && !reading) {
            read();
        }
    }

    private void readAt(long atNanos) {
        nextRead = cancel(nextRead);
        nextRead = schedule(() -> {
            nextRead = null;
            if (!reading) {
                read();
            }
        }, atNanos);
    }

    private void deadlinePassed() {
        deadline = null;
        if (openedSeen) {
            finish("opened", true);
        } else if (!reading) {
            finish("timeout", false);
        }
    }

    private boolean deadlinePassed(long now) {
        return !forever && now - start - waitNanos >= 0;
    }

    private void finish(String how, boolean opened) {
        outcome = how;
        end(opened, null);
    }

    @Override
    protected void stopped(String why) {
        outcome = why;
        end(null, stoppedBy(why, "the wait for count-down latch '" + latch.name() + "'"));
    }

    @Override
    protected void cleanUp() {
        nextRead = cancel(nextRead);
        deadline = cancel(deadline);
        engine.latchWaits().leave(this);
        if (listening) {
            engine.routes().stopListeningForWakeUps(key, this);
        }
        engine.events().latchWaitEnded(latch.name(), nanoTime() - start, outcome);
    }

    @Override
    protected String describe() {
        return "the wait for count-down latch '" + latch.name() + "'";
    }
}
