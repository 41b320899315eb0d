package dev.relock.faults;

/**
 * What the workers of a scenario do: which primitive they use, with how many threads each, and the loop each thread
 * runs ({@link FaultWorker} starts them). The second dimension of a {@link Scenario}, beside its fault.
 */
enum Workload {
    /** The exclusive lock, one thread a worker: the campaign's first workload. */
    EXCLUSIVE("exclusive lock", 1, false, LockSections::exclusive),
    /** The exclusive lock, three threads a worker: a client hands the lock between its own threads too. */
    EXCLUSIVE_THREADS("exclusive lock, 3 threads a worker", 3, false, LockSections::exclusive),
    /** A read-write lock, two threads a worker, one section in three a write. */
    READ_WRITE("read-write lock", 2, false, LockSections::readWrite),
    /** A semaphore of {@value SemaphoreSections#PERMITS} permits, two threads a worker taking one each. */
    SEMAPHORE("semaphore", 2, true, SemaphoreSections::run),
    /**
     * A lock's condition: a producer and two consumers a worker, on a list, one consumer with handles
     * ({@link QueueSections}).
     */
    CONDITION("condition", 3, true, QueueSections::run),
    /** Rounds of count-down latches in lanes: a counter and two waiters a worker in each, a coordinator in the campaign. */
    LATCH("count-down latch", LatchRounds.THREADS, true, LatchRounds::run),
    /** Multi-locks over two of three locks, two threads a worker. */
    MULTI_LOCK("multi-lock", 2, false, LockSections::multiLock);

    /** What one worker thread does until the run ends. */
    @FunctionalInterface
    interface Loop {
        void run(WorkerThread thread) throws Exception;
    }

    /** How scenario names and the report call it. */
    final String label;
    final int threads;
    /** Whether it needs one Redis (standalone, Sentinel, Cluster): a Redlock client refuses it. */
    final boolean oneRedisOnly;
    final Loop loop;

    Workload(String label, int threads, boolean oneRedisOnly, Loop loop) {
        this.label = label;
        this.threads = threads;
        this.oneRedisOnly = oneRedisOnly;
        this.loop = loop;
    }
}
