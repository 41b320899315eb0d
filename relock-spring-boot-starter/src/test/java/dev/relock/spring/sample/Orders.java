package dev.relock.spring.sample;

import dev.relock.spring.DistributedLock;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/**
 * The sample's locked methods. Each runs {@code whileHeld} while it holds its lock, so a test can
 * look at the lock from inside, or keep it held until it says so.
 */
@Service
public class Orders {

    private final AtomicInteger bodiesRun = new AtomicInteger();

    /** How many times a method body (not a fallback, not a skip) ran. */
    public int bodiesRun() {
        return bodiesRun.get();
    }

    @DistributedLock(name = "'order:' + #order.id()")
    public String ship(Order order, Runnable whileHeld) {
        return body(whileHeld, "shipped " + order.id());
    }

    @DistributedLock(name = "'order:' + #order.id()", waitFor = "${sample.ship-wait:10s}")
    public String shipWaiting(Order order, Runnable whileHeld) {
        return body(whileHeld, "shipped " + order.id());
    }

    @DistributedLock(name = "'order:' + #order.id()")
    public void shipFailing(Order order, Runnable whileHeld) {
        body(whileHeld, null);
        throw new IllegalStateException("carrier refused order " + order.id());
    }

    @DistributedLock(name = "'order:' + #p0.id()", whenNotAcquired = WhenNotAcquired.SKIP)
    public Optional<String> trackingNumber(Order order, Runnable whileHeld) {
        return Optional.of(body(whileHeld, "T-" + order.id()));
    }

    @DistributedLock(name = "'order:' + #a0.id()", whenNotAcquired = WhenNotAcquired.SKIP)
    public List<String> lines(Order order, Runnable whileHeld) {
        return List.of(body(whileHeld, "line of " + order.id()));
    }

    @DistributedLock(name = "'order:' + #order.id()", whenNotAcquired = WhenNotAcquired.SKIP)
    public Map<String, Integer> stock(Order order, Runnable whileHeld) {
        return Map.of(body(whileHeld, order.id()), 1);
    }

    @DistributedLock(name = "'order:' + #order.id()", whenNotAcquired = WhenNotAcquired.SKIP)
    public String status(Order order, Runnable whileHeld) {
        return body(whileHeld, "open");
    }

    @DistributedLock(name = "'order:' + #order.id()", whenNotAcquired = WhenNotAcquired.SKIP)
    public void touch(Order order, Runnable whileHeld) {
        body(whileHeld, null);
    }

    @DistributedLock(name = "'order:' + #order.id()", whenNotAcquired = WhenNotAcquired.FALLBACK,
            fallback = "cancelLater")
    public String cancel(Order order, Runnable whileHeld) {
        return body(whileHeld, "cancelled " + order.id());
    }

    String cancelLater(Order order, Runnable whileHeld) {
        return "queued cancellation of " + order.id();
    }

    /** A name over a parameter's name (compiled with -parameters) and a bean of the context. */
    @DistributedLock(name = "@sampleNames.region() + ':' + #warehouse + ':' + #shelf")
    public String count(String warehouse, int shelf, Runnable whileHeld) {
        return body(whileHeld, warehouse + "/" + shelf);
    }

    @DistributedLock(name = "'catalog:' + #name", shared = true)
    public String readCatalog(String name, Runnable whileHeld) {
        return body(whileHeld, "read " + name);
    }

    @DistributedLock(name = "'catalog:' + #name")
    public String writeCatalog(String name, Runnable whileHeld) {
        return body(whileHeld, "wrote " + name);
    }

    private String body(Runnable whileHeld, String result) {
        bodiesRun.incrementAndGet();
        whileHeld.run();
        return result;
    }
}
