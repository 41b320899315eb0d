package dev.relock.docs;

import dev.relock.LockHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The first Java block of docs/async.md, compiled on JDK 21+ (it starts a virtual thread): the region between
 * the markers is the block line for line (DocSnippetsTest, which reads this file on any JDK).
 */
abstract class AsyncSnippets {

    @SuppressWarnings("try")
    CompletionStage<Void> asyncAndVirtualThreads(RelockClient client, Executor workers) {
        // snippet docs/async.md#async-and-virtual-threads
        RelockLock lock = client.lock("export");
        CompletionStage<Void> done = lock.tryAcquireAsync(Duration.ofSeconds(30))   // returns at once
                .thenAcceptAsync(held -> held.ifPresent(handle -> {
                    try (handle) { runExport(); }                                  // any thread may close it
                }), workers);                                                      // not on a Lettuce thread

        Thread.ofVirtual().start(() -> {                                           // JDK 21+
            try (LockHandle held = lock.acquire()) { runExport(); }                // unmounts while it waits
        });
        // snippet end
        return done;
    }

    abstract void runExport();
}
