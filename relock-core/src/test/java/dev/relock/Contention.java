package dev.relock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** Watches critical sections: who is inside, and the fencing tokens in the order they ran. */
final class Contention {
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    private final ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();

    List<Long> tokens() {
        return new ArrayList<>(tokens);
    }

    void criticalSection(long fencingToken, Runnable work) {
        if (inside.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        try {
            // added while inside: if sections never overlap, the queue's order is theirs
            tokens.add(fencingToken);
            work.run();
        } finally {
            inside.decrementAndGet();
        }
    }
}
