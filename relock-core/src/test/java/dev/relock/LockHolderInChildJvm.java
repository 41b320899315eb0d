package dev.relock;

import dev.relock.ExclusionChecker.Kind;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Main class of the child JVM that {@link ChildJvm} starts: connects to the Redis given as the first argument with a
 * renewed lease (the third argument in milliseconds, default {@link #LEASE}), acquires the lock named by the second,
 * prints an {@link ExclusionChecker} {@code ENTER} line and {@code ACQUIRED <fencing token>}, then holds it until its
 * standard input ends (so it also goes away with the test JVM). Meant to be SIGKILLed or SIGSTOPped while holding.
 *
 * <p>Lines it obeys on standard input: {@code WRITE} prints a {@code WRITE} event with its token (a write to the
 * protected resource); {@code UNLOCK} releases and prints {@code UNLOCKED} or {@code UNLOCK-FAILED <exception class>}
 * and a {@code LEAVE} event. When its lease keeper reports the hold lost it prints {@code LOST <token>}.
 */
final class LockHolderInChildJvm {

    static final Duration LEASE = Duration.ofSeconds(1);

    private LockHolderInChildJvm() {
    }

    public static void main(String[] args) throws Exception {
        String lock = args[1];
        Duration lease = args.length > 2 ? Duration.ofMillis(Long.parseLong(args[2])) : LEASE;
        String owner = "child-" + ProcessHandle.current().pid();
        try (RelockClient client = RelockClient.builder()
                .redisUri(args[0])
                .defaultLease(lease)
                .commandTimeout(Duration.ofSeconds(2))
                .build()) {
            LockHandle held = client.lock(lock).acquire();
            long token = held.fencingToken();
            // ENTER first: once the test has read ACQUIRED, its checker has the entry
            System.out.println(ExclusionChecker.line(Kind.ENTER, lock, owner, token));
            System.out.println("ACQUIRED " + token);
            held.whenLost().thenAccept(lost -> System.out.println("LOST " + lost.fencingToken()));
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String command;
            while ((command = in.readLine()) != null) {
                if (command.equals("WRITE")) {
                    System.out.println(ExclusionChecker.line(Kind.WRITE, lock, owner, token));
                } else if (command.equals("UNLOCK")) {
                    try {
                        held.close();
                        System.out.println("UNLOCKED");
                    } catch (RuntimeException e) {
                        System.out.println("UNLOCK-FAILED " + e.getClass().getSimpleName());
                    }
                    System.out.println(ExclusionChecker.line(Kind.LEAVE, lock, owner, token));
                }
            }
            if (held.isValid()) {
                held.close();
            }
        }
    }
}
