package dev.relock.testredis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** How the topology fixtures wait for a state of their servers, and read the replies they poll. */
final class Conditions {

    private static final Duration POLL_INTERVAL = Duration.ofMillis(50);

    private Conditions() {
    }

    /**
     * Polls {@code condition} every 50 ms until it is true; exceptions it throws count as "not yet" (a server may
     * be down or paused while a topology heals).
     *
     * @param what what is awaited, for the exception message
     * @param timeout the deadline before scaling by {@link TestTimeouts}
     * @throws IllegalStateException if it is still false after the (scaled) timeout; the message names {@code what}
     */
    static void await(String what, Duration timeout, Callable<Boolean> condition) {
        Duration scaled = TestTimeouts.scaled(timeout);
        try {
            Awaitility.await(what)
                    .atMost(scaled)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(POLL_INTERVAL)
                    .ignoreExceptions()
                    .until(condition);
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("timed out after " + scaled + " waiting for " + what, e);
        }
    }

    /** The elements of a flat array reply as rendered by {@link RedisServer#execute}: {@code [a, b]} to a, b. */
    static List<String> flatArray(String rendered) {
        if (rendered == null || rendered.length() < 2 || rendered.charAt(0) != '[') {
            throw new IllegalArgumentException("not an array reply: " + rendered);
        }
        String inner = rendered.substring(1, rendered.length() - 1);
        return inner.isEmpty() ? List.of() : new ArrayList<>(Arrays.asList(inner.split(", ", -1)));
    }

    /** The value of {@code field} in an INFO reply ({@code field:value} lines), or null if absent. */
    static String infoField(String info, String field) {
        String prefix = field + ":";
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        return null;
    }
}
