package dev.relock.internal.redlock;

import dev.relock.internal.engine.ClientRegistry;
import dev.relock.internal.engine.EngineClient;
import dev.relock.internal.engine.Hold;
import dev.relock.internal.engine.RecordWrites;
import dev.relock.internal.script.LuaScript;
import dev.relock.internal.script.SharedScripts;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's identity record ({@link ClientRegistry}) on every node: {@link RecordWrites} decides when and what is
 * written, this class sends each write to every node by EVAL, in order, without waiting, and reads a client's record
 * from the first node that has it. Thread-safe.
 */
final class IdentityRecords {

    private static final Logger log = LoggerFactory.getLogger(IdentityRecords.class);

    private final NodeSet nodes;
    private final String keyPrefix;
    private final String clientId;
    // the writes of the record and its delete at close, in that order, on every node
    private final RecordWrites writes;

    IdentityRecords(EngineClient core, NodeSet nodes) {
        this.nodes = nodes;
        this.keyPrefix = core.settings().keyPrefix();
        this.clientId = core.clientId();
        this.writes = new RecordWrites(core, nodes.timer(), args -> write(SharedScripts.REGISTER, args),
                args -> write(SharedScripts.NAME_HOLDERS, args));
    }

    /** Writes the record whole, without waiting ({@link RecordWrites#writeWhole}). */
    void writeWhole() {
        writes.writeWhole();
    }

    /** {@code hold}, just handed out, has its owner's thread named in the record soon ({@link RecordWrites}). */
    void nameHolder(Hold hold) {
        writes.nameHolder(hold);
    }

    /**
     * Deletes the record on every node, after any write of it on the same connections; no write follows. Without
     * waiting: each node's delete completes, never exceptionally, once it is done or failed.
     */
    List<CompletableFuture<Void>> delete() {
        String key = ClientRegistry.key(keyPrefix, clientId);
        List<CompletableFuture<Void>> deletes = new ArrayList<>();
        writes.delete(() -> nodes.all().forEach(
                node -> deletes.add(node.delete(key).handle((deleted, error) -> null))));
        return deletes;
    }

    /**
     * The record of client {@code client} from the first node that has it: any node that took a write of it has the
     * whole record.
     */
    Map<String, String> read(String client) {
        String key = ClientRegistry.key(keyPrefix, client);
        RuntimeException unreachable = null;
        for (RedlockNode node : nodes.all()) {
            try {
                Map<String, String> record = node.hashAt(key, "read the identity record of client " + client);
                if (!record.isEmpty()) {
                    return record;
                }
            } catch (RuntimeException e) {
                unreachable = e;
            }
        }
        if (unreachable != null) {
            log.debug("relock: the identity record of client {} was found on no node that answered: {}", client,
                    unreachable.toString());
        }
        return Map.of();
    }

    /** Sends one write of the record to every node by EVAL, in order, without waiting. */
    private void write(LuaScript script, String[] args) {
        String key = ClientRegistry.key(keyPrefix, clientId);
        for (RedlockNode node : nodes.all()) {
            node.<Long>runInOrder(script, ScriptOutputType.INTEGER, new String[] {key}, args)
                    .whenComplete((written, error) -> {
                        if (error != null) {
                            log.debug("relock Redlock client {}: {} of its identity record on {} failed: {}",
                                    clientId, script.name(), node.address, error.toString());
                        }
                    });
        }
    }
}
