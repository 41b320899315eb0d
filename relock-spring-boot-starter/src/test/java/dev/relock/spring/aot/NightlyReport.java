package dev.relock.spring.aot;

import dev.relock.spring.DistributedLock;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/** Writes a day's report under that day's lock, and stays inside until the caller lets it finish. */
@Component
public class NightlyReport {

    /** A bound that only a hang exceeds. */
    static final long HANG_SECONDS = 30;

    /**
     * @param running counted down once the method runs, so holding the lock
     * @param finish what the method waits for before it returns
     */
    @DistributedLock(name = "'report:' + #day")
    public String write(String day, CountDownLatch running, CountDownLatch finish) throws InterruptedException {
        running.countDown();
        if (!finish.await(HANG_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the report for " + day + " was never let finish");
        }
        return day;
    }
}
