package dev.relock.internal.lease;

import dev.relock.LeaseState;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.HoldTable;
import dev.relock.internal.engine.Ticker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog, one per client on every engine: a single thread ({@link KeeperScheduler}) that keeps
 * every renewed hold's lease alive and tells a holder its lease is lost by the hold's deadline. What
 * a renewal is (one script call on one Redis, or a vote of N Redlock nodes) and what a hold's
 * deadline is are the engine's {@link Renewal}; the schedule is this class's.
 *
 * <p>Every lease/3 it walks the client's {@link HoldTable} and hands the renewals due to the engine
 * in batches of at most {@value #BATCH} holds of one {@linkplain Renewal#batchOf group} (a Cluster
 * slot, since one script may touch one slot only; 0 elsewhere, so holds fill batches in table order).
 * When a connection of the client comes back (Lettuce reconnected) it runs a pass at once, not at the
 * next one, so a short outage does not cost the holds ({@link #renewSoon}).
 *
 * <p>A new renewed hold normally has about three periods of validity left when it joins the table, so the next
 * pass, at most a period away, leaves its renewal two periods to be confirmed. One whose acquisition took most of
 * its validity (a slow reply on a loaded machine, a Redlock vote that waited for slow nodes) has less: the
 * next pass may come after its deadline. {@link #watch} renews such a hold at once, when less than two periods
 * of its validity are left, on the keeper thread ({@link #renewJoinedLate}); once confirmed, its validity is
 * counted from that renewal's send, and the passes keep it as any other.
 *
 * <p>Deadlines. A pass arms a one-shot check ({@link DeadlineAlarm}) for the earliest deadline that
 * falls before the pass after it would look, and {@link #watch} arms one for a new hold whose deadline
 * comes before the next pass (a short explicit lease, or a hold that joined late); the check reports every
 * hold past its deadline ({@link Renewal#deadlinePassed}). Passes, checks and the engine's handling of
 * renewal replies run on the keeper thread only, so a reply read before a deadline is counted before that
 * deadline's check.
 *
 * <p>Public because both engines, each in a package of its own, start one and implement its {@link Renewal}.
 */
public final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** The most holds one renewal call carries. */
    public static final int BATCH = 500;

    /** What an engine does in a pass. Every method runs on the keeper thread, but {@link #deadlineOf}: any thread. */
    public interface Renewal {

        /** The group of a due hold: holds of one group may share a call (the Cluster slot; 0 where any may). */
        int batchOf(Hold hold);

        /** When {@code hold} is reported lost unless a renewal extends it first, on the keeper's clock. */
        long deadlineOf(Hold hold);

        /**
         * {@code hold}, held and not being released, is past its deadline: report it lost, and say why, unless a
         * lease extension confirmed on another thread since the keeper looked has moved the deadline
         * ({@link Hold#loseAtDeadline} decides the two atomically).
         */
        void deadlinePassed(Hold hold);

        /**
         * Sends the renewal of {@code batch} (1 to {@value #BATCH} holds of one group) without waiting for its
         * replies (the engine may briefly wait for a lock that orders its sends); they are handled on
         * {@code keeperThread}, which is the keeper's.
         */
        void send(List<Hold> batch, Executor keeperThread);

        /** After each periodic pass (the client's identity record is written again then). */
        default void passEnded() {
        }
    }

    private final HoldTable holds;
    private final Renewal renewal;
    private final KeeperScheduler thread;
    private final long periodNanos;
    // the renewal pass a reconnect asks for
    private final CoalescedRun reconnectPass;
    // renewed holds that joined the table with less than two periods of validity left (watch), until the keeper
    // thread renews them; any thread adds, the keeper thread takes
    private final Queue<Hold> joinedLate = new ConcurrentLinkedQueue<>();
    // the renewal of those holds that watch asks for
    private final CoalescedRun lateRenewal;
    // the one-shot deadline check between passes
    private final DeadlineAlarm alarm;
    // when the next periodic pass starts at the earliest; keeper thread only
    private long nextPassAt;

    /** Starts the schedule: a pass every {@code periodMillis}, the first that long from now. */
    LeaseKeeper(HoldTable holds, Renewal renewal, KeeperScheduler thread, long periodMillis) {
        this.holds = holds;
        this.renewal = renewal;
        this.thread = thread;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        this.alarm = new DeadlineAlarm(thread, this::checkDeadlines);
        this.reconnectPass = new CoalescedRun(thread, this::renewAll);
        this.lateRenewal = new CoalescedRun(thread, this::renewJoinedLate);
        this.nextPassAt = thread.nanoTime() + periodNanos;
        thread.schedule(this::periodicPass, periodNanos);
    }

    /**
     * The keeper of a client: on its own thread {@code <role>-<client id prefix>}, its deadlines read on
     * {@code ticker}, the client's ({@code EngineClient.ticker()}).
     */
    public static LeaseKeeper start(String role, String clientId, HoldTable holds, Renewal renewal,
            long periodMillis, Ticker ticker) {
        return new LeaseKeeper(holds, renewal, new KeeperThread(role, clientId, ticker), periodMillis);
    }

    /**
     * A hold joined the table: renews it at once if it is renewed and less than two periods of its validity are
     * left (see the class notes), and arms a check for its deadline if no pass would look in time. Any thread.
     */
    public void watch(Hold hold) {
        long deadline = renewal.deadlineOf(hold);
        long left = deadline - thread.nanoTime();
        if (hold.renewed() && left - 2 * periodNanos < 0) {
            joinedLate.add(hold);
            lateRenewal.ask();
        }
        if (left - periodNanos < 0) {
            alarm.arm(deadline);
        }
    }

    /** A connection came back: renew every hold now, on the keeper thread. Any thread (Lettuce's I/O threads). */
    public void renewSoon() {
        reconnectPass.ask();
    }

    /** A pass, then the next one a period after it ends (a fixed delay). Keeper thread only. */
    private void periodicPass() {
        renewAll();
        try {
            renewal.passEnded();
        } catch (RuntimeException e) {
            log.error("relock lease keeper: what follows a pass failed", e);
        }
        try {
            thread.schedule(this::periodicPass, periodNanos);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** One pass over the table. Keeper thread only. */
    private void renewAll() {
        try {
            Batches batches = new Batches();
            OptionalLong earliest = sweep(thread.nanoTime(), hold -> {
                if (hold.renewed()) {
                    batches.add(hold);
                }
            });
            batches.sendAll();
            nextPassAt = thread.nanoTime() + periodNanos;
            earliest.ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            // never let one bad pass end the schedule
            log.error("relock lease keeper pass failed", e);
        }
    }

    /**
     * Renews the holds that joined late ({@link #watch}) and are still held, not being released and not past their
     * deadline (that check is the alarm's, which watch armed). Keeper thread only.
     */
    private void renewJoinedLate() {
        try {
            Batches batches = new Batches();
            long now = thread.nanoTime();
            for (Hold hold = joinedLate.poll(); hold != null; hold = joinedLate.poll()) {
                if (hold.state() == LeaseState.HELD && !hold.releasing() && now - renewal.deadlineOf(hold) < 0) {
                    batches.add(hold);
                }
            }
            batches.sendAll();
        } catch (RuntimeException e) {
            log.error("relock lease keeper: renewing holds that joined late failed", e);
        }
    }

    /** The renewals of one run of the keeper, in batches of at most {@value #BATCH} holds of one group. */
    private final class Batches {

        private final Map<Integer, List<Hold>> open = new HashMap<>();

        /** Adds {@code hold} to its group's batch, and sends that batch once it is full. */
        void add(Hold hold) {
            int group = renewal.batchOf(hold);
            List<Hold> batch = open.computeIfAbsent(group, unused -> new ArrayList<>());
            batch.add(hold);
            if (batch.size() == BATCH) {
                // the engine keeps the list it was given
                renewal.send(open.remove(group), thread);
            }
        }

        /** Sends the batches not full yet. */
        void sendAll() {
            open.values().forEach(batch -> renewal.send(batch, thread));
            open.clear();
        }
    }

    /** The one-shot check: reports every hold past its deadline; sends nothing. Keeper thread only. */
    private void checkDeadlines() {
        try {
            sweep(thread.nanoTime(), hold -> { }).ifPresent(this::armIfBeforeNextPass);
        } catch (RuntimeException e) {
            log.error("relock lease keeper deadline check failed", e);
        }
    }

    /**
     * Reports every hold held and not being released whose deadline has passed by {@code now}, gives
     * each other one to {@code live}, and returns the earliest deadline among those. Keeper thread only.
     */
    private OptionalLong sweep(long now, Consumer<Hold> live) {
        long earliest = 0;
        boolean any = false;
        for (Hold hold : holds.all()) {
            if (hold.state() != LeaseState.HELD || hold.releasing()) {
                continue;
            }
            long deadline = renewal.deadlineOf(hold);
            if (now - deadline >= 0) {
                renewal.deadlinePassed(hold);
                continue;
            }
            if (!any || deadline - earliest < 0) {
                earliest = deadline;
                any = true;
            }
            live.accept(hold);
        }
        return any ? OptionalLong.of(earliest) : OptionalLong.empty();
    }

    /** Arms a check for {@code deadline} unless the next pass comes before it. Keeper thread only. */
    private void armIfBeforeNextPass(long deadline) {
        if (deadline - nextPassAt < 0) {
            alarm.arm(deadline);
        }
    }

    @Override
    public void close() {
        thread.shutdown();
    }
}
