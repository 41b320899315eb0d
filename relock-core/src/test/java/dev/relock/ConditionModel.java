package dev.relock;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The sequential model of one lock and its default condition, shared by the threads ("actors") of a few clients, as
 * {@link RelockLock}, {@link RelockCondition} and the README's fairness guarantee describe them: what a quiescent
 * system looks like after each operation. Not thread-safe: {@link ConditionModelTest} drives it from one thread.
 *
 * <p>The state: the holder; the lock's queue in Redis (waiters of other clients than the holder's, in arrival order,
 * and every signalled waiter); the holder's client's local line (its other threads that asked for the lock while it
 * held it); the condition's wait set (joining order); and what each actor is doing. A release goes to the head of
 * the queue in Redis first, then to the releasing client's line. When the queue's head is of another client, the
 * line is woken and its waiters join the queue in Redis behind everyone there (in line order: with two threads per
 * client a line has at most one waiter, so there is no race among them to model).
 *
 * <p>Invariants: at most one holder; an actor is in at most one of holder, queue, line, wait set; the queue and the
 * line are empty when nobody holds the lock.
 */
final class ConditionModel {

    /** What an actor is doing, as the model predicts it. */
    enum Status {
        /** Not holding, nothing running. */
        IDLE("idle"),
        /** Holding; its last operation returned. */
        HOLDING("idle"),
        /** Blocked in lock(). */
        WAITING_FOR_LOCK("waiting for the lock"),
        /** Blocked in await(), in the wait set. */
        AWAITING_SIGNAL("awaiting a signal"),
        /** Blocked in await(), signalled (or spuriously woken): taking the lock back. */
        AWAITING_LOCK_BACK("awaiting the lock back");

        /** How the actor's thread looks from outside (see ConditionModelTest's observation). */
        final String phase;

        Status(String phase) {
            this.phase = phase;
        }
    }

    /** The operations of the lock and condition API the model knows. */
    enum Op {
        LOCK, UNLOCK, AWAIT, SIGNAL, SIGNAL_ALL;

        /** Whether {@code actor} may do this in {@code model}'s state, as the API allows it. */
        boolean allowedFor(ConditionModel model, String actor) {
            return this == LOCK ? model.status(actor) == Status.IDLE : actor.equals(model.holder);
        }
    }

    // actor -> its client, in a fixed order
    private final Map<String, String> clientOf;
    private final Map<String, Status> status = new LinkedHashMap<>();
    private String holder;
    private final List<String> queue = new ArrayList<>();
    private final List<String> line = new ArrayList<>();
    private final List<String> waitSet = new ArrayList<>();

    ConditionModel(Map<String, String> clientOf) {
        this.clientOf = Map.copyOf(clientOf);
        for (String actor : clientOf.keySet()) {
            status.put(actor, Status.IDLE);
        }
    }

    private ConditionModel(ConditionModel other) {
        this.clientOf = other.clientOf;
        this.status.putAll(other.status);
        this.holder = other.holder;
        this.queue.addAll(other.queue);
        this.line.addAll(other.line);
        this.waitSet.addAll(other.waitSet);
    }

    /** An independent copy, for what-ifs. */
    ConditionModel copy() {
        return new ConditionModel(this);
    }

    /** Takes {@code other}'s state (a copy of this one moved on): the system showed it, and it is legal. */
    void adopt(ConditionModel other) {
        status.clear();
        status.putAll(other.status);
        holder = other.holder;
        queue.clear();
        queue.addAll(other.queue);
        line.clear();
        line.addAll(other.line);
        waitSet.clear();
        waitSet.addAll(other.waitSet);
    }

    /** The actors, in a fixed order. */
    List<String> actors() {
        return List.copyOf(status.keySet());
    }

    String clientOf(String actor) {
        return clientOf.get(actor);
    }

    Status status(String actor) {
        return Objects.requireNonNull(status.get(actor), actor);
    }

    /** The holder, or null. */
    String holder() {
        return holder;
    }

    List<String> queue() {
        return List.copyOf(queue);
    }

    List<String> waitSet() {
        return List.copyOf(waitSet);
    }

    /** Applies {@code op} by {@code actor}, which must be allowed. */
    void apply(Op op, String actor) {
        if (!op.allowedFor(this, actor)) {
            throw new IllegalStateException(op + " by " + actor + " is not allowed in " + this);
        }
        switch (op) {
            case LOCK -> lock(actor);
            case UNLOCK -> {
                status.put(actor, Status.IDLE);
                release(actor);
            }
            case AWAIT -> {
                waitSet.add(actor);
                status.put(actor, Status.AWAITING_SIGNAL);
                release(actor);
            }
            case SIGNAL -> {
                if (!waitSet.isEmpty()) {
                    takeLockBack(waitSet.remove(0));
                }
            }
            case SIGNAL_ALL -> {
                while (!waitSet.isEmpty()) {
                    takeLockBack(waitSet.remove(0));
                }
            }
        }
    }

    /**
     * {@code actor}, in the wait set, woke up without a signal (its entry lapsed), as Condition allows: it takes the
     * lock back as a signalled waiter does, or at once if nobody holds the lock.
     */
    void wakeSpuriously(String actor) {
        if (!waitSet.remove(actor)) {
            throw new IllegalStateException(actor + " is not in the wait set of " + this);
        }
        if (holder == null) {
            grant(actor);
        } else {
            takeLockBack(actor);
        }
    }

    private void lock(String actor) {
        if (holder == null) {
            grant(actor);
            return;
        }
        // a client's threads wait in that client for a lock another of its threads holds
        (clientOf(holder).equals(clientOf(actor)) ? line : queue).add(actor);
        status.put(actor, Status.WAITING_FOR_LOCK);
    }

    // a signalled waiter goes to the end of the queue in Redis, so before the signaller's own threads in its line
    private void takeLockBack(String actor) {
        queue.add(actor);
        status.put(actor, Status.AWAITING_LOCK_BACK);
    }

    private void release(String releaser) {
        holder = null;
        if (!queue.isEmpty()) {
            String next = queue.remove(0);
            grant(next);
            if (!clientOf(next).equals(clientOf(releaser))) {
                // the line is no longer led by a thread of its client: its waiters try in Redis
                queue.addAll(line);
                line.clear();
            }
        } else if (!line.isEmpty()) {
            grant(line.remove(0));
        }
    }

    private void grant(String actor) {
        holder = actor;
        status.put(actor, Status.HOLDING);
    }

    @Override
    public String toString() {
        return "holder " + holder + ", queue " + queue + ", line " + line + ", wait set " + waitSet;
    }
}
