package dev.relock.reactor;

import dev.relock.RelockReadWriteLock;
import java.util.Objects;

/**
 * A {@link RelockReadWriteLock} for Project Reactor: many readers or one writer, never both, each half a
 * {@link ReactiveRelockLock}.
 *
 * <pre>{@code
 * ReactiveRelockReadWriteLock catalog = ReactiveRelockReadWriteLock.of(client.readWriteLock("catalog"));
 * Flux<Item> items = catalog.readLock().withLock(repository.findAll());         // readers share
 * Mono<Void> rebuilt = catalog.writeLock().withLock(repository.rebuild());       // the writer waits for them
 * }</pre>
 *
 * <p>The halves queue first come, first served, as the plain lock's do; once a writer waits, new readers queue behind
 * it. Holds belong to handles: a chain that holds the read lock and asks for the write lock waits for its own
 * reader (there is no upgrade), as does one that holds the write lock and asks for the read lock. The write half is
 * the same lock as {@code RelockClient.lock(name)} of the same name.
 *
 * <p>Immutable; a view of the read-write lock it was made of.
 */
public final class ReactiveRelockReadWriteLock {

    private final String name;
    private final ReactiveRelockLock readLock;
    private final ReactiveRelockLock writeLock;

    private ReactiveRelockReadWriteLock(RelockReadWriteLock readWriteLock) {
        this.name = readWriteLock.name();
        this.readLock = ReactiveRelockLock.of(readWriteLock.readLock());
        this.writeLock = ReactiveRelockLock.of(readWriteLock.writeLock());
    }

    /**
     * The reactive view of {@code readWriteLock}, of whichever client made it.
     *
     * @throws NullPointerException if readWriteLock is null
     */
    public static ReactiveRelockReadWriteLock of(RelockReadWriteLock readWriteLock) {
        return new ReactiveRelockReadWriteLock(Objects.requireNonNull(readWriteLock, "readWriteLock"));
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** The shared half. */
    public ReactiveRelockLock readLock() {
        return readLock;
    }

    /** The exclusive half: the same lock as {@code RelockClient.lock(name)}. */
    public ReactiveRelockLock writeLock() {
        return writeLock;
    }

    @Override
    public String toString() {
        return "ReactiveRelockReadWriteLock[" + name + "]";
    }
}
