package dev.relock.internal.engine;

/**
 * Who holds a {@link Hold} in this client: the id its owner's lookups use (a thread's owner id, or a handle's) and
 * the name of the thread that asked for it, for {@code heldLocks()} and the identity records. Usually the id is the
 * hold's Redis owner; a hold handed on locally ({@link LocalHandOffs}) keeps the Redis owner of the hold it came from
 * and names the thread it was handed to here.
 *
 * <p>A thread's holds share one instance ({@link EngineClient#holderOfCurrentThread()}), so a hold costs no holder of
 * its own; immutable.
 *
 * @param id the owner id lookups by owner find the hold under
 * @param threadName the name of the thread that asked for the hold, or "" (a virtual thread without a name)
 */
public record Holder(String id, String threadName) {}
