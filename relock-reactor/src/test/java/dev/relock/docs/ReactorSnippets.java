package dev.relock.docs;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.reactor.ReactiveLocks;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Reactor block of docs/async.md, compiled: the region between the markers is the block line for line
 * (relock-core's DocSnippetsTest). The types after it stand for the reader's own.
 */
abstract class ReactorSnippets {

    Invoices invoices;
    Export export;

    Flux<Row> reactor(RelockClient client, long id) {
        // snippet docs/async.md#reactor
        RelockLock lock = client.lock("invoice:" + id);
        Mono<Invoice> paid = ReactiveLocks.withLock(lock, invoices.load(id).map(Invoice::paid).flatMap(invoices::save));

        Flux<Row> rows = ReactiveLocks.holdingMany(ReactiveLocks.tryAcquire(lock, Duration.ofSeconds(2)),
                held -> export.rows(held.fencingToken()));            // empty when not acquired within 2 s
        // snippet end
        return paid.thenMany(rows);
    }

    interface Invoice {
        Invoice paid();
    }

    interface Invoices {
        Mono<Invoice> load(long id);

        Mono<Invoice> save(Invoice invoice);
    }

    interface Row {
    }

    interface Export {
        Flux<Row> rows(long fencingToken);
    }
}
