package dev.relock.fencing;

/**
 * A write was refused because its fencing token is older than the last token that wrote the
 * resource: the writer's lock was lost (its lease ran out during a pause, a partition, a GC) and
 * another holder has written since. Nothing was changed. The writer no longer holds the lock and
 * should stop, not retry with the same token.
 *
 * <pre>{@code
 * try (LockHandle held = lock.acquire()) {
 *     fence.set("account:42", "100", held.fencingToken());
 * } catch (StaleFencingTokenException e) {
 *     log.warn("lost the lock of {} to token {}", e.resource(), e.lastToken());
 * }
 * }</pre>
 */
public class StaleFencingTokenException extends IllegalStateException {

    private final String resource;
    private final long token;
    private final long lastToken;

    /** A refusal of {@code token}'s write to {@code resource}, which {@code lastToken} wrote last. */
    public StaleFencingTokenException(String resource, long token, long lastToken) {
        super("write to " + resource + " refused: fencing token " + token
                + " is older than " + lastToken + ", the last token that wrote it");
        this.resource = resource;
        this.token = token;
        this.lastToken = lastToken;
    }

    /** The resource the write was meant for: a Redis key, or a table row such as {@code account id=42}. */
    public String resource() {
        return resource;
    }

    /** The refused writer's fencing token. */
    public long token() {
        return token;
    }

    /** The token of the last write the resource accepted; greater than {@link #token()}. */
    public long lastToken() {
        return lastToken;
    }
}
