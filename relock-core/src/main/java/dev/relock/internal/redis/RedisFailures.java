package dev.relock.internal.redis;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.PartitionSelectorException;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * What a failed Redis command means: which failures ran nothing and may be sent again ({@link #mayResend}), which
 * say the connection or the slot's server is gone, and the {@link RelockException} a caller sees for each
 * ({@link #toRelockException}), which names the operation, the lock and the server. Lettuce reports a failure as
 * itself or wrapped in a {@link CompletionException} or {@link ExecutionException}; every method here looks through
 * the wrapping. Stateless.
 *
 * <p>Public because both engines, each in a package of its own, read their failures through it.
 */
public final class RedisFailures {

    private RedisFailures() {
    }

    /** {@code error} without the {@link CompletionException}s and {@link ExecutionException}s around it. */
    public static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /**
     * Whether a script that failed with {@code error} ran nothing and may be sent again while its time lasts: its
     * slot is being migrated ({@link #isSlotMigrating}) or has no known master ({@link #isSlotUncovered}).
     */
    public static boolean mayResend(Throwable error) {
        return isSlotMigrating(error) || isSlotUncovered(error);
    }

    /** Whether {@code error} (or a cause) says a connection could not be opened or was lost. */
    public static boolean isConnectionFailure(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisConnectionException || cause instanceof ConnectException) {
                return true;
            }
        }
        return false;
    }

    /** Whether Redis answered MOVED: a Cluster node that does not serve the key's slot ran nothing. */
    public static boolean isMoved(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException
                    && String.valueOf(cause.getMessage()).startsWith("MOVED ")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a Cluster node ran nothing because the script's slot is being migrated: TRYAGAIN (some of its keys
     * are on the node, some not, or none on the importing node) or ASK where no redirection is followed. Lasts
     * until the migration ends; {@link RedisCalls#run} has already sent it again for a command timeout.
     */
    public static boolean isSlotMigrating(Throwable error) {
        Throwable cause = unwrap(error);
        String message = String.valueOf(cause.getMessage());
        return cause instanceof RedisCommandExecutionException
                && (message.startsWith("TRYAGAIN") || message.startsWith("ASK "));
    }

    /**
     * Whether Lettuce sent nothing because its view of the Cluster names no master for the command's slot: a topology
     * read amid a failover, from a node that had not yet heard of the promotion. Where its uncovered-slot refresh
     * trigger is on (relock's own Cluster clients turn every adaptive trigger on), Lettuce asks for a fresh topology
     * when it meets one, so a later try finds the master; elsewhere only a periodic refresh may.
     */
    public static boolean isSlotUncovered(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PartitionSelectorException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a command failed with {@code error} because its connection can run nothing more for
     * it: answered MOVED or ASK (the slot is served elsewhere), or refused or cut off by Lettuce
     * because the connection is closed or down. Not a timeout: the connection may still run it.
     */
    public static boolean connectionGone(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof RedisCommandExecutionException) {
            String message = String.valueOf(cause.getMessage());
            return message.startsWith("MOVED ") || message.startsWith("ASK ");
        }
        String message = String.valueOf(cause.getMessage());
        return cause instanceof RedisException && !(cause instanceof RedisCommandTimeoutException)
                // Lettuce: "Connection closed", "Connection disconnected", "Currently not connected…"
                && (message.contains("closed") || message.contains("connected"));
    }

    /**
     * The exception a caller sees for a command that failed with {@code error}: {@link RedisUnavailableException}
     * where the command may not have run, or may have run unseen, and the server may answer later (a timeout, a slot
     * in migration, a connection lost, refused or closed); a plain {@link RelockException} where Redis refused it
     * (WRONGTYPE, a script error) or the failure is not Redis's. A {@link RelockException} stays as it is.
     *
     * @param operation what the caller did ("acquire", "release", ...)
     * @param lockName the lock it was for, or null
     * @param address the server, as messages name it
     * @param timeoutNanos the command timeout
     */
    public static RelockException toRelockException(Throwable error, String operation, String lockName,
            String address, long timeoutNanos) {
        Throwable cause = unwrap(error);
        String what = what(operation, lockName);
        if (cause instanceof RelockException relock) {
            return relock;
        }
        if (cause instanceof RedisCommandTimeoutException) {
            return timedOut(operation, lockName, address, timeoutNanos, cause);
        }
        if (isSlotMigrating(cause)) {
            // not run, and not for long: the lock is out of reach as when Redis does not answer
            return new RedisUnavailableException(what + ": its Cluster slot is being migrated and Redis at " + address
                    + " ran nothing for " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: " + cause.getMessage(),
                    cause);
        }
        if (cause instanceof RedisCommandExecutionException) {
            String message = String.valueOf(cause.getMessage());
            if (message.contains("WRONGTYPE")) {
                return new RelockException(what + ": a key of lock '" + lockName + "' at Redis " + address
                        + " holds a value of another type (WRONGTYPE); relock left it untouched", cause);
            }
            return new RelockException(what + ": Redis at " + address + " refused the command: " + message, cause);
        }
        if (cause instanceof RedisConnectionException || cause instanceof RedisException) {
            return new RedisUnavailableException(
                    what + ": Redis at " + address + " is unreachable: " + cause.getMessage(), cause);
        }
        if (cause instanceof CancellationException) {
            // Lettuce cancels what is unanswered when its connection is closed (or reset): as after a timeout, the
            // command may or may not have run
            return new RedisUnavailableException(what + ": the connection to Redis at " + address
                    + " was closed with the command unanswered", cause);
        }
        if (cause instanceof IOException) {
            // Lettuce fails the commands in flight with the socket's own error when a connection is reset
            // ("Connection reset"): the command may or may not have run, as after a timeout
            return new RedisUnavailableException(
                    what + ": the connection to Redis at " + address + " failed: " + cause, cause);
        }
        return new RelockException(what + " failed: " + cause, cause);
    }

    /** The exception for a command that Redis at {@code address} did not answer within the command timeout. */
    static RedisUnavailableException timedOut(String operation, String lockName, String address, long timeoutNanos,
            Throwable cause) {
        return new RedisUnavailableException(what(operation, lockName) + ": Redis at " + address
                + " did not answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", cause);
    }

    /** How messages name what failed: the operation, and the lock it was for. */
    static String what(String operation, String lockName) {
        return lockName == null ? operation : operation + " of lock '" + lockName + "'";
    }
}
