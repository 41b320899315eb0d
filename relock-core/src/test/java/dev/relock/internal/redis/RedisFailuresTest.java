package dev.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.PartitionSelectorException;
import io.lettuce.core.cluster.models.partitions.Partitions;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which failures of a Redis command are sent again, and which exception a caller sees for each, without Redis. */
class RedisFailuresTest {

    private static final String ADDRESS = "10.0.0.7:6390";
    private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final RedisCommandExecutionException TRYAGAIN =
            new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing of slot");
    private static final RedisCommandExecutionException ASK =
            new RedisCommandExecutionException("ASK 3999 10.0.0.8:6390");
    private static final RedisCommandExecutionException MOVED =
            new RedisCommandExecutionException("MOVED 3999 10.0.0.8:6390");
    private static final RedisCommandExecutionException WRONGTYPE = new RedisCommandExecutionException(
            "WRONGTYPE Operation against a key holding the wrong kind of value");
    private static final PartitionSelectorException UNCOVERED =
            new PartitionSelectorException("Cannot determine a partition for slot 3999.", new Partitions());

    @Test
    void onlyWhatRanNothingIsSentAgainWrappedOrNot() {
        assertThat(RedisFailures.mayResend(TRYAGAIN)).isTrue();
        assertThat(RedisFailures.mayResend(ASK)).isTrue();
        assertThat(RedisFailures.mayResend(new CompletionException(TRYAGAIN))).isTrue();
        assertThat(RedisFailures.mayResend(new RedisException("no master", UNCOVERED))).isTrue();
        assertThat(RedisFailures.mayResend(new CompletionException(UNCOVERED))).isTrue();

        assertThat(RedisFailures.mayResend(MOVED)).as("Lettuce follows MOVED itself").isFalse();
        assertThat(RedisFailures.mayResend(WRONGTYPE)).isFalse();
        assertThat(RedisFailures.mayResend(new RedisCommandTimeoutException("timed out")))
                .as("a timeout may have run").isFalse();
        assertThat(RedisFailures.mayResend(new RedisConnectionException("reset"))).isFalse();
    }

    @Test
    void redirectionsAndLostConnectionsAreToldApart() {
        assertThat(RedisFailures.isMoved(new CompletionException(MOVED))).isTrue();
        assertThat(RedisFailures.isMoved(ASK)).isFalse();
        assertThat(RedisFailures.connectionGone(MOVED)).isTrue();
        assertThat(RedisFailures.connectionGone(new ExecutionException(ASK))).isTrue();
        assertThat(RedisFailures.connectionGone(new RedisException("Connection closed"))).isTrue();
        assertThat(RedisFailures.connectionGone(new RedisCommandTimeoutException("Command timed out"))).isFalse();
        assertThat(RedisFailures.connectionGone(TRYAGAIN)).isFalse();
        assertThat(RedisFailures.isConnectionFailure(
                new RedisConnectionException("Unable to connect", new ConnectException("refused")))).isTrue();
        assertThat(RedisFailures.isConnectionFailure(new RuntimeException(new ConnectException("refused")))).isTrue();
        assertThat(RedisFailures.isConnectionFailure(WRONGTYPE)).isFalse();
        assertThat(RedisFailures.isSlotUncovered(TRYAGAIN)).isFalse();
    }

    @Test
    void whatMayHaveRunOrMayRunLaterIsUnavailableAndNamesTheLockAndTheServer() {
        assertUnavailable(new RedisCommandTimeoutException("timed out"), "did not answer within 1500 ms");
        assertUnavailable(new CompletionException(TRYAGAIN), "its Cluster slot is being migrated");
        assertUnavailable(new RedisConnectionException("Connection refused"), "is unreachable");
        assertUnavailable(new RedisException("Connection closed"), "is unreachable");
        assertUnavailable(new CancellationException(), "was closed with the command unanswered");
        assertUnavailable(new IOException("Connection reset by peer"), "failed");
    }

    @Test
    void whatRedisRefusedIsARelockExceptionThatIsNotUnavailable() {
        RelockException wrongType = RedisFailures.toRelockException(new ExecutionException(WRONGTYPE), "acquire",
                "orders", ADDRESS, TIMEOUT_NANOS);
        assertThat(wrongType).isNotInstanceOf(RedisUnavailableException.class).hasCause(WRONGTYPE);
        assertThat(wrongType.getMessage()).isEqualTo("acquire of lock 'orders': a key of lock 'orders' at Redis "
                + ADDRESS + " holds a value of another type (WRONGTYPE); relock left it untouched");

        RelockException scriptError = RedisFailures.toRelockException(
                new RedisCommandExecutionException("ERR user_script:1: oops"), "release", null, ADDRESS, TIMEOUT_NANOS);
        assertThat(scriptError).isNotInstanceOf(RedisUnavailableException.class);
        assertThat(scriptError.getMessage()).isEqualTo("release: Redis at " + ADDRESS
                + " refused the command: ERR user_script:1: oops");

        RelockException other = RedisFailures.toRelockException(new IllegalStateException("bug"), "list", null,
                ADDRESS, TIMEOUT_NANOS);
        assertThat(other).isNotInstanceOf(RedisUnavailableException.class);
        assertThat(other.getMessage()).isEqualTo("list failed: java.lang.IllegalStateException: bug");
    }

    @Test
    void aRelockExceptionStaysAsItIs() {
        RelockException relock = new RedisUnavailableException("node down", null);
        assertThat(RedisFailures.toRelockException(new CompletionException(relock), "acquire", "orders", ADDRESS,
                TIMEOUT_NANOS)).isSameAs(relock);
    }

    private static void assertUnavailable(Throwable error, String saying) {
        RelockException mapped = RedisFailures.toRelockException(error, "acquire", "orders", ADDRESS, TIMEOUT_NANOS);
        assertThat(mapped).as("%s", error).isInstanceOf(RedisUnavailableException.class);
        assertThat(mapped.getMessage()).as("%s", error).startsWith("acquire of lock 'orders': ")
                .contains(ADDRESS).contains(saying);
        assertThat(mapped.getCause()).isSameAs(RedisFailures.unwrap(error));
    }
}
