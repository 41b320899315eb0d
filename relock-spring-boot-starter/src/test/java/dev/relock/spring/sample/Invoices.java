package dev.relock.spring.sample;

import dev.relock.spring.DistributedLock;
import org.springframework.stereotype.Service;

/** Locks the same order as {@link Orders} does, around a call into it: nested holds of one lock. */
@Service
public class Invoices {

    private final Orders orders;

    public Invoices(Orders orders) {
        this.orders = orders;
    }

    @DistributedLock(name = "'order:' + #order.id()")
    public String invoiceAndShip(Order order, Runnable whileBothHeld) {
        return orders.ship(order, whileBothHeld);
    }
}
