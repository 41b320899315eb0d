package dev.relock.cli.demo;

/**
 * What the parent ({@link ContentionEngine}) and a {@link Worker} process say to each other, and the
 * names of the keys they share. One line per message, UTF-8, fields separated by single spaces.
 *
 * <p>Parent to worker, on the worker's stdin:
 * <pre>
 * uri=&lt;redis uri&gt;                  configuration, one {@code key=value} a line, before "connect";
 * prefix=&lt;key prefix of this run&gt;   the URI goes here and not on the command line, where ps(1)
 * worker=&lt;index&gt;                    would show its password
 * threads=&lt;n&gt;
 * locks=&lt;n&gt;
 * lease-ms=&lt;n&gt;
 * connect                          connect, then answer "ready"
 * run locked|unlocked &lt;millis&gt;     run one phase for that long, then answer "done"
 * quit                             close the connections and exit 0
 * </pre>
 * End of input at any moment (the parent exited or was killed) makes the worker halt at once:
 * workers never outlive their parent.
 *
 * <p>Worker to parent, on the worker's stdout (its stderr is for logs and is only shown on failure):
 * <pre>
 * ready
 * a &lt;thread&gt; &lt;lock&gt; &lt;token&gt; &lt;wait µs&gt; &lt;acquired at µs&gt; &lt;released at µs&gt; &lt;fencing violation 0|1&gt;
 * p &lt;increments so far in this phase&gt;
 * done &lt;elapsed µs&gt; &lt;increments&gt; &lt;fencing violations&gt; &lt;leases lost&gt;
 * error unavailable|failed &lt;message&gt;
 * </pre>
 * "a" lines (one per acquisition, locked phase only) and a "p" line are written in batches every
 * {@value #REPORT_INTERVAL_MILLIS} ms. Times "at" are wall-clock microseconds since the epoch
 * (every worker runs on the parent's host, so they share that clock); waits are measured with
 * {@link System#nanoTime()} inside one worker.
 */
final class WorkerProtocol {

    static final String CONNECT = "connect";
    static final String RUN = "run";
    static final String QUIT = "quit";

    static final String READY = "ready";
    static final String ACQUISITION = "a";
    static final String PROGRESS = "p";
    static final String DONE = "done";
    static final String ERROR = "error";
    static final String UNAVAILABLE = "unavailable";
    static final String FAILED = "failed";

    static final long REPORT_INTERVAL_MILLIS = 100;

    /**
     * Every data key a run writes expires after this long, so a run whose parent was killed before
     * it could clean up leaves nothing behind for good. Lock keys carry their own lease.
     */
    static final long KEY_TTL_SECONDS = 3600;

    /** Exit status of a worker that lost its parent (end of stdin). */
    static final int EXIT_ORPHANED = 3;
    /** Exit status of a worker that reported an error line. */
    static final int EXIT_ERROR = 2;

    static String lockName(int lock) {
        return "lock-" + lock;
    }

    /** The counter incremented under lock {@code lock}. */
    static String counterKey(String prefix, int lock) {
        return prefix + ":counter:" + lock;
    }

    /** The highest fencing token a holder of lock {@code lock} has written so far. */
    static String lastTokenKey(String prefix, int lock) {
        return prefix + ":last-token:" + lock;
    }

    /** One line, so a message can travel in one protocol line. */
    static String oneLine(String text) {
        return text == null ? "" : text.replaceAll("\\s+", " ").strip();
    }

    private WorkerProtocol() {}
}
