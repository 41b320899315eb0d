package dev.relock.reactor;

import dev.relock.RelockClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The example of docs/async.md's Reactor section, compiled: the lines between the markers in {@link #assemble} are
 * that block as it stands (relock-core's {@code DocSnippetsTest} keeps the two equal; {@link ReactorDocExampleTest}
 * runs them); around them, the invoice service the example assumes, kept in memory.
 */
final class ReactorDocExample {

    private ReactorDocExample() {}

    record Invoice(String id, boolean isPaid) {

        Invoice paid() {
            return new Invoice(id, true);
        }
    }

    record Row(long fencingToken, String text) {}

    /** The example's three publishers, not yet subscribed. */
    record Publishers(Mono<Invoice> paid, Flux<Row> rows, Mono<byte[]> pdf) {}

    /** Invoices in memory: {@code saved} holds what was saved, by id. */
    static final class Invoices {

        final Map<String, Invoice> saved = new ConcurrentHashMap<>();

        Mono<Invoice> load(String id) {
            return Mono.fromCallable(() -> saved.getOrDefault(id, new Invoice(id, false)));
        }

        Mono<Invoice> save(Invoice invoice) {
            return Mono.fromCallable(() -> {
                saved.put(invoice.id(), invoice);
                return invoice;
            });
        }

        Mono<byte[]> render(String id) {
            return Mono.fromCallable(() -> ("%PDF invoice " + id).getBytes(StandardCharsets.US_ASCII));
        }
    }

    /** An export whose rows carry the fencing token they were written with. */
    static final class Export {

        Flux<Row> rows(long fencingToken) {
            return Flux.just(new Row(fencingToken, "first"), new Row(fencingToken, "second"));
        }
    }

    static Publishers assemble(RelockClient client, String id, Invoices invoices, Export export) {
        // snippet docs/async.md#reactor
        ReactiveRelockLock invoice = ReactiveRelockLock.of(client.lock("invoice:" + id));
        Mono<Invoice> paid = invoice.withLock(invoices.load(id).map(Invoice::paid).flatMap(invoices::save));

        ReactiveRelockReadWriteLock catalog = ReactiveRelockReadWriteLock.of(client.readWriteLock("catalog"));
        Flux<Row> rows = ReactiveLocks.holdingMany(catalog.readLock().tryAcquire(Duration.ofSeconds(2)),
                held -> export.rows(held.fencingToken()));            // empty when not acquired within 2 s

        ReactiveRelockSemaphore renderers = ReactiveRelockSemaphore.of(client.semaphore("renderers"));
        Mono<byte[]> pdf = renderers.withPermits(1, invoices.render(id));   // as many at once as permits
        // snippet end
        return new Publishers(paid, rows, pdf);
    }
}
