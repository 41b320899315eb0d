package dev.relock; // not in the docs

/*
 * The README's "## Usage" snippet (and README.zh-CN.md's copy of it), a whole file as a user pastes it:
 * everything between the markers is the README's code block line for line, except the lines ending in
 * "// not in the docs" (the package, the fixture's server, and probes that let ReadmeExampleTest check
 * what the comments say). ReadmeExampleTest runs main and compiles the README's block on its own, without
 * this package, as a user's first file would be; DocSnippetsTest keeps the blocks and this file identical.
 */
// snippet README.md#usage README.zh-CN.md#用法
import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

public class QuickStart {
    public static void main(String[] args) throws InterruptedException {
        try (RelockClient client = RelockClient.builder()
                .redisUri("redis://127.0.0.1:6379")              // redis://user:password@host:port, rediss:// for TLS
                .redisUri(args[0]) // not in the docs: the fixture's server instead of the host above
                .keyPrefix("billing")                            // keys: billing:{<name>}…
                .defaultLease(Duration.ofSeconds(30))            // renewed every 10 s while held
                .leaseLostListener(lost -> System.err.println("lost " + lost.lockName() + ": " + lost.reason()))
                .leaseLostListener(ReadmeExampleTest::leaseLost) // not in the docs
                .build()) {
            RelockLock lock = client.lock("invoice:42");         // a java.util.concurrent.locks.Lock, and more

            lock.lock();                                         // waits its turn: first come, first served
            try {
                ReadmeExampleTest.holding(client, lock.fencingToken().orElseThrow()); // not in the docs
                System.out.println("one holder at a time, across threads, processes and machines");
            } finally {
                lock.unlock();
            }

            try (LockHandle held = lock.tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
                long token = held.fencingToken();                // greater than every earlier holder's
                ReadmeExampleTest.holding(client, token); // not in the docs
                System.out.println("pass " + token + " to what the lock protects, to refuse older writers");
            }

            if (lock.tryLock(0, 2, TimeUnit.MINUTES)) {          // no wait, fixed 2-minute lease, not renewed
                try {
                    ReadmeExampleTest.holdingForTwoMinutes(); // not in the docs
                    System.out.println("the nightly job runs here");
                } finally {
                    lock.unlock();
                }
            }
        }                                                        // close() releases what the client still holds
    }
}
// snippet end
