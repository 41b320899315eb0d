package dev.relock.docs; // not in the docs

/*
 * The @DistributedLock block of docs/spring.md, a whole file as the doc shows it (with the imports a reader
 * needs), compiled against the starter: the region between the markers is the block line for line, except the
 * lines ending in "// not in the docs" (this package, and stubs of the reader's own code); relock-core's
 * DocSnippetsTest keeps the two identical. No test context scans this package.
 */
// snippet docs/spring.md#spring-boot
import static dev.relock.spring.DistributedLock.WhenNotAcquired.SKIP;

import dev.relock.spring.DistributedLock;
import java.util.Optional;
import org.springframework.stereotype.Service;

@Service
class Shipping {

    record Order(String id) { } // not in the docs
    record Report() { } // not in the docs
    private Report report() { return new Report(); } // not in the docs
    private int count(String sku) { return sku.length(); } // not in the docs
    @DistributedLock(name = "'order:' + #order.id()", waitFor = "2s")
    public void ship(Order order) { /* ... */ }                           // LockNotAcquiredException after 2 s

    @DistributedLock(name = "'nightly-report'", whenNotAcquired = SKIP)
    public Optional<Report> nightlyReport() { return Optional.of(report()); }  // Optional.empty() on the instances that lose

    @DistributedLock(name = "'stock:' + #p0", shared = true)
    public int stock(String sku) { return count(sku); }                  // readers together, exclusive writers wait
}
// snippet end
