package dev.relock.internal.engine;

import dev.relock.ClientIdentity;
import dev.relock.LeaseLostListener;
import dev.relock.RelockSettings;
import java.time.Duration;
import java.util.List;

/**
 * A client core with no engine and no Redis, on a clock the test moves: its hold table, owner ids, loss reporting
 * and ticker are real, so the classes that read time through it can be checked without a server or a sleep.
 *
 * <p>Public because the unit tests of the single-server engine's collaborators, in a package of their own, use it.
 */
public final class ClientOnAClock {

    private ClientOnAClock() {
    }

    /** A client on {@code ticker} (30 s default lease) that tells {@code listeners} of losses. */
    public static EngineClient of(Ticker ticker, LeaseLostListener... listeners) {
        return new EngineClient(new RelockSettings("test", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofMillis(50)), new ClientIdentity(EngineClient.newClientId(), "localhost", 1, "", ""),
                List.of(listeners), ticker, client -> null);
    }

    /** A write hold of {@code owner} on {@code name}: an explicit lease of {@code leaseMillis} from now. */
    public static Hold writeHold(EngineClient client, String name, String owner, long leaseMillis) {
        return new Hold(name, LockKeys.of("test", name), LockMode.WRITE, owner, 1, leaseMillis, false,
                client.ticker().nanoTime());
    }
}
