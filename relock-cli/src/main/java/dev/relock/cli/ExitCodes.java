package dev.relock.cli;

/**
 * The exit codes of {@code relock}, from sysexits(3) where one fits. Fixed: scripts depend on them.
 */
public final class ExitCodes {

    public static final int OK = 0;
    /** A check failed: {@code verify} saw a lost update or a fencing violation. */
    public static final int CHECK_FAILED = 1;
    /** EX_USAGE: unknown option, missing argument, bad duration. */
    public static final int USAGE = 64;
    /** EX_UNAVAILABLE: Redis could not be reached. */
    public static final int UNAVAILABLE = 69;
    /** EX_SOFTWARE: the lease was lost while the command ran. */
    public static final int LEASE_LOST = 70;
    /** EX_TEMPFAIL: the lock was not acquired within --wait. */
    public static final int NOT_ACQUIRED = 75;

    private ExitCodes() {}
}
