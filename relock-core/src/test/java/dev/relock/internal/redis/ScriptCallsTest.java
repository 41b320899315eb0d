package dev.relock.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.internal.script.SharedScripts;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.PartitionSelectorException;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.protocol.RedisCommand;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * What a script call sends again, and until when, on a hand-moved ticker: a connection that answers as the test says
 * and a timer whose tasks the test runs, without Redis.
 */
class ScriptCallsTest {

    private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final String[] KEYS = {"calls-test:{a}"};

    // the ticker, moved by hand
    private long now = Long.MAX_VALUE - TimeUnit.MINUTES.toNanos(1);
    private final List<RedisCommand<?, ?, ?>> dispatched = new ArrayList<>();
    // how the connection answers each command dispatched, in turn; the last answer repeats
    private final Deque<Consumer<RedisCommand<?, ?, ?>>> answers = new ArrayDeque<>();
    private final List<Long> resendDelaysMillis = new ArrayList<>();
    private final Deque<Runnable> resends = new ArrayDeque<>();
    private final ScriptCalls calls = new ScriptCalls(connection(), null, TIMEOUT_NANOS, timer(), () -> now);

    @Test
    void tryAgainIsSentAgainEvery20MillisUntilTheCommandTimeoutHasPassedOnTheTicker() {
        RedisCommandExecutionException tryAgain =
                new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing of slot");
        answers.add(command -> command.completeExceptionally(tryAgain));

        CompletableFuture<Long> reply = calls.run(SharedScripts.INSPECT, ScriptOutputType.INTEGER, KEYS, new String[0]);
        // sent at 0, then again every 20 ms up to 100 ms: one more, 20 ms later, would be past the command timeout
        for (int resend = 1; resend <= 5; resend++) {
            assertThat(reply).as("before resend %d", resend).isNotDone();
            assertThat(resends).hasSize(1);
            now += TimeUnit.MILLISECONDS.toNanos(20);
            resends.poll().run();
        }
        assertThat(dispatched).hasSize(6);
        assertThat(resendDelaysMillis).containsOnly(ScriptCalls.TRY_AGAIN_MILLIS);
        assertThat(resends).isEmpty();
        assertThat(reply).isCompletedExceptionally();
        assertThat(reply.handle((value, error) -> error).join()).isSameAs(tryAgain);
    }

    @Test
    void aScriptLettuceCouldNotRouteIsSentAgainAndItsReplyEndsTheCall() {
        answers.add(command -> {
            throw new PartitionSelectorException("Cannot determine a partition for slot 3999.", new Partitions());
        });
        answers.add(RedisCommand::complete);

        CompletableFuture<Long> reply = calls.run(SharedScripts.INSPECT, ScriptOutputType.INTEGER, KEYS, new String[0]);
        assertThat(reply).isNotDone();
        now += TimeUnit.MILLISECONDS.toNanos(20);
        resends.poll().run();

        assertThat(dispatched).hasSize(2);
        assertThat(reply).isCompleted().isNotCompletedExceptionally();
    }

    @Test
    void whatRedisRefusedIsNotSentAgain() {
        RedisCommandExecutionException wrongType = new RedisCommandExecutionException(
                "WRONGTYPE Operation against a key holding the wrong kind of value");
        answers.add(command -> command.completeExceptionally(wrongType));

        CompletableFuture<Long> reply = calls.run(SharedScripts.INSPECT, ScriptOutputType.INTEGER, KEYS, new String[0]);

        assertThat(dispatched).hasSize(1);
        assertThat(resends).isEmpty();
        assertThat(reply.handle((value, error) -> error).join()).isSameAs(wrongType);
    }

    @Test
    void aCallGivenUpSendsNothingMore() {
        answers.add(command -> command.completeExceptionally(new RedisCommandExecutionException("TRYAGAIN slot")));

        CompletableFuture<Long> reply = calls.run(SharedScripts.INSPECT, ScriptOutputType.INTEGER, KEYS, new String[0]);
        reply.cancel(false);
        resends.poll().run();

        assertThat(dispatched).hasSize(1);
    }

    @SuppressWarnings("unchecked")
    private StatefulConnection<String, String> connection() {
        return (StatefulConnection<String, String>) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StatefulConnection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("dispatch") && args.length == 1
                            && args[0] instanceof RedisCommand<?, ?, ?> command) {
                        dispatched.add(command);
                        Consumer<RedisCommand<?, ?, ?>> answer = answers.size() > 1 ? answers.poll() : answers.peek();
                        answer.accept(command);
                        return command;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private ScheduledExecutorService timer() {
        return (ScheduledExecutorService) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ScheduledExecutorService.class}, (proxy, method, args) -> {
                    if (method.getName().equals("schedule") && args[0] instanceof Runnable task) {
                        resendDelaysMillis.add(((TimeUnit) args[2]).toMillis((Long) args[1]));
                        resends.add(task);
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
