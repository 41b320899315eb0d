package dev.relock.cli;

import dev.relock.HolderIdentity;
import dev.relock.LeaseLost;
import dev.relock.LeaseLostException;
import dev.relock.LeaseState;
import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.RelockException;
import dev.relock.RelockLock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relock exec}: flock(1) across machines. Acquires the lock, runs COMMAND while the lease
 * keeper renews the lease, releases the lock when COMMAND ends and exits with its status.
 *
 * <p>Paths out, and what each leaves behind (the lock is released in every one):
 * <ul>
 *   <li>COMMAND ran: its exit status, or 128 + signal if a signal ended it.</li>
 *   <li>Not acquired within --wait: 75, COMMAND not run.</li>
 *   <li>COMMAND not found / not executable: 127 / 126.</li>
 *   <li>Lease lost while COMMAND ran: SIGTERM, SIGKILL after --kill-grace, 70 (or, with
 *       --on-lost=warn, a warning and COMMAND's status).</li>
 *   <li>SIGINT/SIGTERM/SIGHUP before COMMAND started: 128 + signal, COMMAND not run; after: the
 *       signal goes to COMMAND and relock waits for it.</li>
 *   <li>Redis unreachable: 69.</li>
 * </ul>
 */
@Command(name = "exec",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Runs COMMAND while holding the lock NAME, like flock(1) but across machines.",
            "",
            "Waits for the lock (--wait), runs COMMAND with its lease renewed in the background, releases the"
                    + " lock when COMMAND ends and exits with COMMAND's exit status (128+n if signal n ended it)."
                    + " COMMAND gets RELOCK_LOCK_NAME and RELOCK_FENCING_TOKEN in its environment; pass the token"
                    + " to whatever you protect so it can refuse a stale holder.",
            "",
            "If the lease is lost while COMMAND runs (Redis lost the key, the lock was forced open, Redis was"
                    + " unreachable for longer than the lease), COMMAND gets SIGTERM, SIGKILL after --kill-grace,"
                    + " and relock exits 70. SIGINT, SIGTERM and SIGHUP sent to relock are passed on to COMMAND"
                    + " (before COMMAND starts they end relock with 128+n). relock killed with SIGKILL cannot stop"
                    + " COMMAND, and the lock frees itself only when the lease runs out: kill the process group.",
            ""
        },
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
            "<n>:COMMAND's exit status (128+n if signal n ended it)",
            "64:usage error",
            "69:Redis unreachable",
            "70:the lease was lost while COMMAND ran",
            "75:the lock was not acquired within --wait; COMMAND not run",
            "126:COMMAND is not executable",
            "127:COMMAND not found"
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  # one backup at a time across all hosts; skip if one is running already",
            "  relock exec --wait 0 backup -- /usr/local/bin/backup --full",
            "",
            "  # a crontab: every 15 minutes on every host, one run at a time; a run",
            "  # still waiting after 10 minutes gives up (exit 75)",
            "  RELOCK_REDIS=redis://redis.internal:6379",
            "  */15 * * * * relock exec --wait 10m reports -- /opt/reports/run.sh",
            "",
            "  # a fencing token for the protected resource",
            "  relock exec deploy -- sh -c 'deploy --token \"$RELOCK_FENCING_TOKEN\"'",
            "",
            "  # TLS and a password; a 2-minute lease, renewed every 40 s",
            "  relock exec --redis rediss://app:secret@redis:6380 --lease 2m db -- ./migrate",
            "",
            "  # readers and writers, like flock -s and -x: many reports at once, never",
            "  # while the nightly rebuild (exclusive) runs",
            "  relock exec --shared catalog -- ./report.sh",
            "  relock exec --exclusive catalog -- ./rebuild.sh",
            "",
            "  # a command with options of its own needs the --",
            "  relock exec --wait 30s cache -- rsync -a --delete src/ dst/"
        })
public final class ExecCommand implements Callable<Integer> {

    private static final Pattern ERRNO = Pattern.compile("error(?:=|: )(\\d+)");
    private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE);
    private static final long FIRST_BACKOFF_MILLIS = 50;
    private static final long MAX_BACKOFF_MILLIS = 2_000;

    /** Named as they are typed: {@code --on-lost=warn}. */
    enum OnLost { kill, warn }

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--wait", paramLabel = "DURATION",
            description = "How long to wait for the lock: 500ms, 2s, 1m, 1h, or plain seconds as flock -w: 5; 0 tries once. Default: forever."
                    + " Redis failures meanwhile are retried until then.")
    Duration wait;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "30s",
            description = "Lease of the lock, renewed every third of it while COMMAND runs; after a crash the"
                    + " lock frees itself within this long (default: ${DEFAULT-VALUE}, at least 30ms).")
    Duration lease;

    @Option(names = "--on-lost", paramLabel = "kill|warn", defaultValue = "kill",
            description = "When the lease is lost while COMMAND runs: kill it (SIGTERM, then SIGKILL) and exit 70,"
                    + " or only warn and let it finish (default: ${DEFAULT-VALUE}).")
    OnLost onLost;

    @Option(names = "--kill-grace", paramLabel = "DURATION", defaultValue = "10s",
            description = "How long COMMAND may take to exit after SIGTERM before it gets SIGKILL"
                    + " (default: ${DEFAULT-VALUE}).")
    Duration killGrace;

    /** flock's -s and -x: the read or the write half of NAME's read-write lock. */
    static final class Mode {
        @Option(names = {"-s", "--shared"},
                description = "Run COMMAND under the read (shared) half of NAME's read-write lock: many"
                        + " --shared runs at once, none while an exclusive one runs.")
        boolean shared;

        @Option(names = {"-x", "--exclusive"},
                description = "Run COMMAND under the write (exclusive) half of NAME's read-write lock."
                        + " The default; the same lock as plain `relock exec NAME`.")
        boolean exclusive;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Mode mode;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "COMMAND",
            description = "The command and its arguments; put -- before it if it has options.")
    List<String> command;

    @Override
    public Integer call() throws Exception {
        if (lease.compareTo(RelockClientBuilder.MIN_DEFAULT_LEASE) < 0) {
            throw new ParameterException(spec.commandLine(), "--lease must be at least "
                    + RelockClientBuilder.MIN_DEFAULT_LEASE.toMillis() + "ms, was " + Durations.format(lease));
        }
        if (name.isBlank()) {
            throw new ParameterException(spec.commandLine(), "NAME must not be blank");
        }
        ChildProcess child = new ChildProcess(Thread.currentThread());
        child.handleSignals();
        RelockClient client;
        try {
            client = connection.connect(lease);
        } catch (RedisUnavailableException e) {
            if (child.signalBeforeStart() != 0) {
                return stoppedBySignal(child); // the signal interrupted the connect
            }
            throw e;
        }
        try (client) {
            // the exclusive lock of NAME is the write half of NAME's read-write lock
            RelockLock lock = mode != null && mode.shared ? client.readWriteLock(name).readLock() : client.lock(name);
            LockHandle handle;
            try {
                handle = acquire(lock);
            } catch (InterruptedException e) {
                return stoppedBySignal(child);
            }
            if (handle == null) {
                System.err.println("relock: lock '" + name + "' not acquired " + waited() + holder(client)
                        + "; command not run");
                return ExitCodes.NOT_ACQUIRED;
            }
            try {
                return run(child, handle);
            } finally {
                release(handle);
            }
        }
    }

    /** The lock, or null if --wait ran out. Redis failures are retried until then. */
    private LockHandle acquire(RelockLock lock) throws InterruptedException {
        long start = System.nanoTime();
        long backoff = 0;
        boolean told = false;
        while (true) {
            Duration left = wait == null ? FOREVER : wait.minusNanos(System.nanoTime() - start);
            try {
                Optional<LockHandle> handle = lock.tryAcquire(left.isNegative() ? Duration.ZERO : left);
                return handle.orElse(null);
            } catch (RedisUnavailableException e) {
                backoff = backoff == 0 ? FIRST_BACKOFF_MILLIS : Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
                long remainingMillis = wait == null ? Long.MAX_VALUE : left.toMillis();
                if (remainingMillis <= backoff) {
                    throw e;
                }
                if (!told) {
                    System.err.println("relock: " + Failures.oneLine(e.getMessage()) + "; still trying");
                    told = true;
                }
                Thread.sleep(backoff);
            }
        }
    }

    private int run(ChildProcess child, LockHandle handle) throws InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().put("RELOCK_LOCK_NAME", name);
        builder.environment().put("RELOCK_FENCING_TOKEN", Long.toString(handle.fencingToken()));
        Process process;
        try {
            process = child.start(builder);
        } catch (IOException e) {
            return cannotRun(e);
        }
        if (process == null) {
            return stoppedBySignal(child);
        }
        CompletableFuture<LeaseLost> lost = handle.whenLost().toCompletableFuture();
        CompletableFuture<Process> exited = process.onExit();
        try {
            CompletableFuture.anyOf(lost, exited).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for the command failed", e.getCause());
        }
        if (!exited.isDone()) {
            LeaseLost event = lost.join();
            if (onLost == OnLost.warn) {
                System.err.println("relock: warning: " + lostMessage(event)
                        + "; the command goes on without the lock (--on-lost=warn)");
                return process.waitFor();
            }
            System.err.println("relock: " + lostMessage(event) + "; stopping the command (SIGTERM, SIGKILL after "
                    + Durations.format(killGrace) + ")");
            ChildProcess.terminate(process, killGrace);
            return ExitCodes.LEASE_LOST;
        }
        int status = process.waitFor();
        if (handle.state() == LeaseState.LOST) {
            // lost while it ran, noticed as it ended
            String message = lostMessage(lost.join()); // completed as the state turned LOST
            if (onLost == OnLost.warn) {
                System.err.println("relock: warning: " + message);
                return status;
            }
            System.err.println("relock: " + message + " (the command exited with " + status + ")");
            return ExitCodes.LEASE_LOST;
        }
        return status;
    }

    private void release(LockHandle handle) {
        try {
            handle.close();
        } catch (LeaseLostException e) {
            // already reported by run()
        } catch (RelockException e) {
            System.err.println("relock: could not release lock '" + name + "': " + Failures.oneLine(e.getMessage())
                    + "; its lease runs out by itself within " + Durations.format(lease));
        }
    }

    /**
     * 127 for a command that does not exist, 126 for one that cannot be executed, as shells do.
     * The errno is in the exception's message: "error=2, No such file or directory" up to JDK 21,
     * "Exec failed, error: 2 (No such file or directory)" from JDK 22.
     */
    private int cannotRun(IOException e) {
        String message = String.valueOf(e.getMessage());
        Matcher errno = ERRNO.matcher(message);
        int code = errno.find() ? Integer.parseInt(errno.group(1)) : 0;
        String what = "'" + command.get(0) + "'";
        if (code == 2) {
            System.err.println("relock: " + what + ": command not found");
            return 127;
        }
        String reason = switch (code) {
            case 13 -> "permission denied";
            case 8 -> "exec format error";
            case 21 -> "is a directory";
            default -> Failures.oneLine(message);
        };
        System.err.println("relock: " + what + ": not executable (" + reason + ")");
        return 126;
    }

    private int stoppedBySignal(ChildProcess child) {
        int signal = child.signalBeforeStart();
        System.err.println("relock: " + (signal == 0 ? "interrupted" : Signals.name(signal))
                + " before the command started (lock '" + name + "'); command not run");
        return signal == 0 ? ExitCodes.NOT_ACQUIRED : 128 + signal;
    }

    private String lostMessage(LeaseLost event) {
        return "lease of lock '" + name + "' (fencing token " + event.fencingToken() + ") was lost while the command"
                + " ran: " + event.reason();
    }

    private String waited() {
        if (wait == null) {
            return "";
        }
        return wait.isZero() ? "(--wait 0)" : "within " + Durations.format(wait);
    }

    /** ": held by …" for the message, if it can be found out quickly. */
    private String holder(RelockClient client) {
        try {
            LockInfo info = client.inspect(name);
            if (info.isHeld()) {
                List<String> holders = new ArrayList<>();
                for (String owner : info.holders().keySet()) {
                    HolderIdentity named = info.identities().get(owner);
                    holders.add(named == null || named.client().isEmpty() ? owner : owner + " (" + named.describe() + ")");
                }
                return "; held by " + String.join(", ", holders)
                        + " (lease left " + Durations.format(info.remainingLease()) + ")";
            }
            return info.waiters() > 0 ? "; " + info.waiters() + " waiter(s) ahead" : "";
        } catch (RuntimeException e) {
            return "";
        }
    }
}
