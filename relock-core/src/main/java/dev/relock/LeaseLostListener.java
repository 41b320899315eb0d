package dev.relock;

/**
 * Told of every hold of a client whose lease is lost while held. Runs on the client's lease-keeper
 * thread (or the thread that found the loss): it must return quickly and not block.
 */
@FunctionalInterface
public interface LeaseLostListener {
    void leaseLost(LeaseLost event);
}
