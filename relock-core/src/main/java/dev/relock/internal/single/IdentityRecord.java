package dev.relock.internal.single;

import dev.relock.internal.engine.ClientRegistry;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.RecordWrites;
import dev.relock.internal.redis.RedisCalls;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SharedScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's identity record in Redis ({@link ClientRegistry}): its writes, in the order {@link RecordWrites} keeps,
 * and its delete at close, all on the command connection, none waited for; and reads of any client's record.
 *
 * <p>Any thread.
 */
final class IdentityRecord {

    // the engine's log category, the one users set levels for
    private static final Logger log = LoggerFactory.getLogger(SingleServerEngine.class);

    private final EngineClient core;
    private final RedisCalls calls;
    private final String key;
    // the writes of the record and its delete at close, in that order, on the command connection
    private final RecordWrites recordWrites;

    /** Writes nothing yet: {@link #writeWhole} writes the record first. */
    IdentityRecord(EngineClient core, RedisCalls calls, ScheduledExecutorService timer) {
        this.core = core;
        this.calls = calls;
        this.key = ClientRegistry.key(core.settings().keyPrefix(), core.clientId());
        this.recordWrites = new RecordWrites(core, timer, args -> write(SharedScripts.REGISTER, args),
                args -> write(SharedScripts.NAME_HOLDERS, args));
    }

    /** Writes the record whole: at connect and after each pass of the lease keeper. */
    void writeWhole() {
        recordWrites.writeWhole();
    }

    /** {@code hold}, just handed out, has its owner's thread named in the identity record soon (RecordWrites). */
    void nameHolder(Hold hold) {
        recordWrites.nameHolder(hold);
    }

    /**
     * Sends the delete of the record, after any write of it, and no write follows; a stage that completes with null
     * once Redis answered or failed (not a release: a failure here is no hold left behind, the record expires).
     */
    CompletableFuture<Object> delete() {
        CompletableFuture<Object> deleted = new CompletableFuture<>();
        recordWrites.delete(() -> calls.commands().del(key).toCompletableFuture()
                .whenComplete((count, error) -> deleted.complete(null)));
        return deleted;
    }

    /** The record of the client {@code clientId}, empty if there is none. */
    Map<String, String> read(String clientId) {
        return calls.await(calls.commands().hgetall(ClientRegistry.key(core.settings().keyPrefix(), clientId)),
                "read the identity record of client " + clientId, null);
    }

    /** Sends one write of the record by EVAL, in order, without waiting. */
    private void write(LuaScript script, String[] args) {
        calls.runInOrder(script, ScriptOutputType.INTEGER, new String[] {key}, args).whenComplete((written, error) -> {
            if (error != null) {
                log.debug("relock client {}: {} of its identity record failed: {}", core.clientId(), script.name(),
                        error.toString());
            }
        });
    }
}
