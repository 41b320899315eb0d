package dev.relock.internal.engine;

/**
 * The ways to hold something: WRITE excludes everyone else (it is the exclusive lock), READ is
 * shared with other readers, PERMITS holds some of a semaphore's permits. Each engine keeps its
 * own scripts per mode (the single-server engine in its ModeScripts, Redlock in RedlockEngine).
 *
 * <p>Public because both engines and the metrics, each in a package of its own, use it.
 */
public enum LockMode {
    WRITE("lock"),
    READ("read lock"),
    PERMITS("semaphore");

    // how messages name it
    public final String description;

    LockMode(String description) {
        this.description = description;
    }
}
