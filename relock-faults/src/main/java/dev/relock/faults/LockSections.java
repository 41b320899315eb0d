package dev.relock.faults;

import dev.relock.LeaseLostException;
import dev.relock.MultiLockHandle;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.fencing.JdbcFence;
import dev.relock.fencing.StaleFencingTokenException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The lock workloads' loops, one per worker thread until the run ends: critical sections of the exclusive lock, of a
 * read-write lock's halves, or of a multi-lock, each step logged ({@link EventKind}).
 *
 * <p>An exclusive section (a lock, a write lock) reads a counter on the resource Redis, works {@link #WORK_MILLIS},
 * writes it back one higher (unfenced), then makes two fenced writes: the register beside the counter (relock's
 * {@code RedisFence}, which refuses a token older than the last that wrote) and a row in a SQL table
 * ({@link JdbcFence}). A holder that was frozen in its work loses an update of the counter and has its fenced writes
 * refused, so the report shows what fencing saved. A read section reads the counter and works as long. A multi-lock
 * section makes a fenced write to each member's register. No fault touches the resources.
 */
final class LockSections {

    /** How long a section works between reading the counter and writing it and the register. */
    static final long WORK_MILLIS = 1;
    /** The members a multi-lock section takes two of. */
    static final List<String> MEMBERS = List.of("campaign-a", "campaign-b", "campaign-c");

    private static final JdbcFence TABLE = JdbcFence.forTable(Resources.TABLE, "id", "fencing_token");

    private LockSections() {
    }

    /** Sections of the exclusive lock {@value FaultWorker#LOCK}. */
    static void exclusive(WorkerThread t) throws InterruptedException {
        RelockLock lock = t.client().lock(FaultWorker.LOCK);
        while (t.running()) {
            section(t, lock, Claim.exclusive(FaultWorker.LOCK));
        }
    }

    /** Sections of the read-write lock {@value FaultWorker#LOCK}: one in three writes, the others read. */
    static void readWrite(WorkerThread t) throws InterruptedException {
        RelockReadWriteLock lock = t.client().readWriteLock(FaultWorker.LOCK);
        while (t.running()) {
            if (t.random().nextInt(3) == 0) {
                section(t, lock.writeLock(), Claim.exclusive(FaultWorker.LOCK));
            } else {
                section(t, lock.readLock(), Claim.read(FaultWorker.LOCK));
            }
        }
    }

    /** Sections of a multi-lock of two of the {@link #MEMBERS}, a pair chosen at random each time. */
    static void multiLock(WorkerThread t) throws InterruptedException {
        while (t.running()) {
            int skipped = t.random().nextInt(MEMBERS.size());
            List<String> pair = MEMBERS.stream().filter(name -> !name.equals(MEMBERS.get(skipped))).toList();
            multiLockSection(t, t.client().multiLock(pair.toArray(String[]::new)));
        }
    }

    /** One attempt: wait (bounded by the run's end), and if acquired, work as the claim allows and release. */
    private static void section(WorkerThread t, RelockLock lock, Claim claim) throws InterruptedException {
        OptionalLong taken = t.lockFor(lock, claim);
        if (taken.isEmpty()) {
            return;
        }
        long token = taken.getAsLong();
        try {
            if (claim.mode() == Claim.Mode.READ) {
                t.resource().get(FaultWorker.COUNTER);
                Thread.sleep(WORK_MILLIS); // the section's work
            } else {
                writeCounterAndFences(t, token);
            }
        } catch (RuntimeException | SQLException e) {
            t.log(EventKind.ERROR, token, "resource: " + WorkerThread.describe(e));
        }
        t.release(token, lock::unlock);
    }

    private static void writeCounterAndFences(WorkerThread t, long token) throws InterruptedException, SQLException {
        String read = t.resource().get(FaultWorker.COUNTER);
        long value = read == null ? 0 : Long.parseLong(read);
        Thread.sleep(WORK_MILLIS); // the section's work, between reading and writing what it protects
        t.resource().set(FaultWorker.COUNTER, Long.toString(value + 1));
        // written: a kill before this line wrote nothing, or a value nobody reads twice
        t.log(EventKind.COUNTER, token, Long.toString(value));
        fencedWrite(t, FaultWorker.REGISTER, token);
        t.log(EventKind.SQL_SENT, token, "");
        try {
            TABLE.update(t.sql(), Resources.ROW, token, "writer = ?", t.id());
            t.log(EventKind.SQL_OK, token, "");
        } catch (StaleFencingTokenException e) {
            t.log(EventKind.SQL_REFUSED, token, "");
        }
    }

    private static void fencedWrite(WorkerThread t, String register, long token) {
        t.log(EventKind.WRITE_SENT, token, register);
        boolean written = t.fence().trySet(register, t.id() + ":" + token, token);
        t.log(written ? EventKind.WRITE_OK : EventKind.WRITE_REFUSED, token, "");
    }

    private static void multiLockSection(WorkerThread t, RelockMultiLock lock) throws InterruptedException {
        t.log(EventKind.REQUEST, 0, lock.names().get(0));
        MultiLockHandle held;
        try {
            Optional<MultiLockHandle> acquired = lock.tryAcquire(Duration.ofNanos(t.nanosLeft()));
            if (acquired.isEmpty()) {
                t.log(EventKind.ERROR, 0, "not acquired before the run ended");
                return;
            }
            held = acquired.get();
        } catch (RuntimeException e) {
            t.failed("", e);
            return;
        }
        Map<String, Long> tokens = held.fencingTokens();
        tokens.forEach((name, token) -> t.acquired(name, token, Claim.exclusive(name)));
        try {
            Thread.sleep(WORK_MILLIS); // the section's work
            tokens.forEach((name, token) -> fencedWrite(t, FaultWorker.REGISTER + ":" + name, token));
        } catch (RuntimeException e) {
            t.log(EventKind.ERROR, 0, "resource: " + WorkerThread.describe(e));
        }
        t.log(EventKind.RELEASING, 0, "");
        try {
            held.close();
            t.log(EventKind.RELEASED, 0, "");
        } catch (LeaseLostException e) {
            t.log(EventKind.RELEASE_LOST, 0, WorkerThread.describe(e));
        } catch (RuntimeException e) {
            t.log(EventKind.ERROR, 0, "release: " + WorkerThread.describe(e));
        }
    }
}
