package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.LeaseLostException;
import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockSemaphore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@link ReactiveLocks} against a fixture Redis; {@code other} also forces locks open.
 */
@Tag("redis")
class ReactiveLocksTest extends TwoClientsTestBase {

    @Test
    void nothingHappensUntilSubscribedAndEverySubscriptionAcquiresAnew() {
        RelockLock lock = client.lock("lazy");
        Mono<LockHandle> once = ReactiveLocks.tryAcquire(lock, Duration.ZERO);
        assertThat(other.inspect("lazy").isHeld()).as("held before anybody subscribed").isFalse();

        LockHandle first = once.block(HANG);
        assertThat(first).isNotNull();
        assertThat(first.isValid()).isTrue();
        assertThat(other.inspect("lazy").fencingToken()).isEqualTo(first.fencingToken());
        StepVerifier.create(once).as("a second subscription while the first holds").verifyComplete();

        StepVerifier.create(ReactiveLocks.release(first)).verifyComplete();
        assertThat(other.inspect("lazy").isHeld()).isFalse();
        StepVerifier.create(ReactiveLocks.release(first)).as("releasing again does nothing").verifyComplete();

        LockHandle waited = ReactiveLocks.acquire(lock).block(HANG);
        assertThat(waited.fencingToken()).isGreaterThan(first.fencingToken());
        ReactiveLocks.release(waited).block(HANG);
    }

    @Test
    void tryAcquireIsEmptyWhenTheWaitEndsAndKeepsAnExplicitLease() {
        try (LockHandle held = other.lock("busy").acquire()) {
            long start = System.nanoTime();
            StepVerifier.create(ReactiveLocks.tryAcquire(client.lock("busy"), Duration.ofMillis(200)))
                    .expectSubscription()
                    .verifyComplete();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms waited").isGreaterThanOrEqualTo(150);
            assertThat(held.isValid()).isTrue();
        }

        LockHandle leased = ReactiveLocks.tryAcquire(client.lock("busy"), Duration.ZERO, Duration.ofSeconds(5)).block(HANG);
        assertThat(other.inspect("busy").remainingLease()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
        assertThat(client.heldLocks()).singleElement().satisfies(hold -> assertThat(hold.renewed()).isFalse());
        ReactiveLocks.release(leased).block(HANG);
    }

    @Test
    void twoPublishersOnOneLockRunOneAfterTheOther() throws Exception {
        Sinks.Empty<Void> letGo = Sinks.empty();
        List<String> events = new CopyOnWriteArrayList<>();
        Mono<String> first = ReactiveLocks.withLock(client.lock("exclusive"), Mono.defer(() -> {
            events.add("first in");
            return letGo.asMono().then(Mono.fromCallable(() -> {
                events.add("first out");
                return "first";
            }));
        }));
        Mono<String> second = ReactiveLocks.withLock(other.lock("exclusive"), Mono.fromCallable(() -> {
            events.add("second in");
            return "second";
        }));

        CompletableFuture<String> firstDone = first.toFuture();
        soon("the first holds").until(() -> events.contains("first in"));
        CompletableFuture<String> secondDone = second.toFuture();
        soon("the second queued").until(() -> other.inspect("exclusive").waiters() == 1);
        assertThat(events).containsExactly("first in");

        letGo.tryEmitEmpty();
        assertThat(secondDone.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(firstDone.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(events).containsExactly("first in", "first out", "second in");
    }

    /** Handles are not reentrant: two publishers of one client exclude each other as two clients do. */
    @Test
    void manyPublishersOfTwoClientsNeverOverlap() {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        Flux.range(0, 20)
                .flatMap(i -> ReactiveLocks.withLock((i % 2 == 0 ? client : other).lock("contended"), Mono.defer(() -> {
                    most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    return Mono.delay(Duration.ofMillis(2)).doOnNext(tick -> inside.decrementAndGet());
                })), 20)
                .blockLast(HANG);
        assertThat(most).as("bodies inside at once").hasValue(1);
    }

    @Test
    void theLockIsHeldWhileTheBodyRunsAndReleasedBeforeItCompletes() {
        AtomicReference<String> releasingThread = new AtomicReference<>();
        StepVerifier.create(ReactiveLocks.withLock(client.lock("complete"),
                        Flux.defer(() -> Flux.just(other.inspect("complete").isHeld(), false))
                                .subscribeOn(Schedulers.boundedElastic()))
                        .doOnComplete(() -> releasingThread.set(Thread.currentThread().getName())))
                .expectNext(true, false)
                .verifyComplete();
        assertThat(other.inspect("complete").isHeld()).as("held once the Flux completed").isFalse();
        assertThat(releasingThread.get()).as("the thread that released, then completed").startsWith("boundedElastic");

        StepVerifier.create(ReactiveLocks.withLock(client.lock("complete"),
                        Mono.fromCallable(() -> other.inspect("complete").isHeld()).subscribeOn(Schedulers.boundedElastic()))
                        .map(heldInside -> heldInside && !other.inspect("complete").isHeld()))
                .as("held inside, and released before the Mono's value was signalled")
                .expectNext(true)
                .verifyComplete();
    }

    @Test
    void theLockIsReleasedWhenTheBodyFails() {
        StepVerifier.create(ReactiveLocks.withLock(client.lock("error"),
                        Flux.concat(Flux.just(1), Flux.error(new IllegalStateException("carrier refused")))))
                .expectNext(1)
                .verifyErrorMessage("carrier refused");
        assertThat(other.inspect("error").isHeld()).isFalse();

        StepVerifier.create(ReactiveLocks.withLock(client.lock("error"), Mono.error(new IllegalStateException("no stock"))))
                .verifyErrorMessage("no stock");
        assertThat(other.inspect("error").isHeld()).isFalse();
    }

    @Test
    void theLockIsReleasedWhenTheSubscriberCancels() {
        AtomicBoolean bodySubscribed = new AtomicBoolean();
        AtomicBoolean bodyCancelled = new AtomicBoolean();
        StepVerifier.create(ReactiveLocks.withLock(client.lock("cancel"), Flux.never()
                        .doOnSubscribe(subscription -> bodySubscribed.set(true))
                        .doOnCancel(() -> bodyCancelled.set(true))))
                .expectSubscription()
                .then(() -> soon("the body runs").untilTrue(bodySubscribed))
                .thenCancel()
                .verify(HANG);
        assertThat(bodyCancelled).isTrue();
        soon("released after the cancel").until(() -> !other.inspect("cancel").isHeld());

        StepVerifier.create(ReactiveLocks.withLock(client.lock("cancel"), Mono.never()))
                .expectSubscription()
                .then(() -> soon("held").until(() -> other.inspect("cancel").isHeld()))
                .thenCancel()
                .verify(HANG);
        soon("released after the cancel").until(() -> !other.inspect("cancel").isHeld());
    }

    @Test
    void cancellingWhileWaitingWithdrawsAndTheCancelledSubscriberNeverHolds() {
        AtomicBoolean bodyRan = new AtomicBoolean();
        List<LockHandle> delivered = new CopyOnWriteArrayList<>();
        try (LockHandle held = other.lock("queue").acquire()) {
            Disposable withLock = ReactiveLocks.withLock(client.lock("queue"), Mono.fromRunnable(() -> bodyRan.set(true)))
                    .subscribe();
            Disposable acquire = ReactiveLocks.acquire(client.lock("queue")).subscribe(delivered::add);
            soon("both queued").until(() -> other.inspect("queue").waiters() == 2);

            withLock.dispose();
            acquire.dispose();
            soon("both withdrawn").until(() -> other.inspect("queue").waiters() == 0);
            assertThat(held.isValid()).isTrue();
        }
        assertThat(other.inspect("queue").isHeld()).as("held after the holder released").isFalse();
        assertThat(bodyRan).isFalse();
        assertThat(delivered).isEmpty();
    }

    /**
     * Cancels at 0 to 2 ms after subscribing, around the time the acquisition completes: before it (withdrawn),
     * as it completes (the handle released here or by the core) or after it (the subscriber has the handle). The
     * subscriber keeps every handle it is given, even after it cancelled (a handle signalled as the cancel
     * arrives belongs to it, as Reactive Streams has it; {@code withLock} below releases such a one too).
     */
    @Test
    void aHandleAcquiredAsTheSubscriberCancelsIsReleased() {
        RelockLock lock = client.lock("race");
        for (int i = 0; i < 40; i++) {
            HandleKeeper keeper = new HandleKeeper();
            ReactiveLocks.acquire(lock).subscribe(keeper);
            Mono.delay(Duration.ofNanos(i * 50_000L)).subscribe(tick -> keeper.cancel());
            soon("cancelled or completed").untilTrue(keeper.settled);
            soon("nothing held but what was delivered, after cancel " + i).until(() -> {
                keeper.closeKept();
                return !other.inspect("race").isHeld() && client.heldLocks().isEmpty();
            });
        }
        for (int i = 0; i < 40; i++) {
            Disposable subscription = ReactiveLocks.withLock(lock, Mono.never()).subscribe();
            Mono.delay(Duration.ofNanos(i * 50_000L)).subscribe(tick -> subscription.dispose());
            soon("nothing held after withLock's cancel " + i)
                    .until(() -> subscription.isDisposed() && !other.inspect("race").isHeld()
                            && client.heldLocks().isEmpty());
        }
        assertThat(other.inspect("race").waiters()).isZero();
    }

    @Test
    void aLeaseLostWhileTheBodyRunsFailsThePublisherAndCancelsTheBody() {
        try (RelockClient shortLease = RelockClient.builder().redisUri(redis.uri())
                .defaultLease(Duration.ofSeconds(1)).build()) {
            AtomicBoolean bodySubscribed = new AtomicBoolean();
            AtomicBoolean bodyCancelled = new AtomicBoolean();
            StepVerifier.create(ReactiveLocks.withLock(shortLease.lock("lost"), Flux.never()
                            .doOnSubscribe(subscription -> bodySubscribed.set(true))
                            .doOnCancel(() -> bodyCancelled.set(true))))
                    .expectSubscription()
                    .then(() -> soon("the body runs").untilTrue(bodySubscribed))
                    .then(() -> forceOpenOnceHeld("lost"))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LeaseLostException.class)
                            .hasMessageContaining("lease of lock 'lost' was lost while held"))
                    .verify(HANG);
            assertThat(bodyCancelled).as("the body was cancelled").isTrue();

            StepVerifier.create(ReactiveLocks.withLock(shortLease.lock("lost"), Mono.never()))
                    .expectSubscription()
                    .then(() -> forceOpenOnceHeld("lost"))
                    .verifyError(LeaseLostException.class);
            assertThat(shortLease.heldLocks()).isEmpty();
        }
    }

    /** A hold whose lease is known lost before the body would start: the body is never subscribed. */
    @Test
    void aBodyIsNotRunOnAHoldWhoseLeaseIsAlreadyKnownLost() throws Exception {
        try (RelockClient shortLease = RelockClient.builder().redisUri(redis.uri())
                .defaultLease(Duration.ofSeconds(1)).build()) {
            for (boolean many : new boolean[] {false, true}) {
                LockHandle held = shortLease.lock("lost-before").acquire();
                forceOpenOnceHeld("lost-before");
                held.whenLost().toCompletableFuture().get(HANG.toMillis(), TimeUnit.MILLISECONDS);
                AtomicBoolean ran = new AtomicBoolean();
                Mono<Boolean> body = Mono.fromCallable(() -> ran.getAndSet(true));

                StepVerifier.create(many ? ReactiveLocks.holdingMany(Mono.just(held), h -> body)
                                : ReactiveLocks.holding(Mono.just(held), h -> body))
                        .verifyError(LeaseLostException.class);
                assertThat(ran).as("a body that does not wait ran without the lock (%s)", many ? "Flux" : "Mono")
                        .isFalse();
            }
        }
    }

    /**
     * A loss found only by the release after the body completed fails the publisher with the release's error. The lock
     * key is deleted behind relock's back (a forced unlock would tell the holder's client at once, during the body).
     */
    @Test
    void aLeaseFoundLostByTheReleaseFailsTheCompletedPublisher() {
        StepVerifier.create(ReactiveLocks.withLock(client.lock("late"),
                        Mono.fromCallable(this::deleteLate).subscribeOn(Schedulers.boundedElastic())))
                .verifyError(LeaseLostException.class);
        StepVerifier.create(ReactiveLocks.withLock(client.lock("late"),
                        Flux.defer(() -> Flux.just(deleteLate())).subscribeOn(Schedulers.boundedElastic())))
                .expectNext(true)
                .verifyError(LeaseLostException.class);
    }

    /** Deletes lock 'late''s key directly; whether it was there. */
    private boolean deleteLate() {
        return redis.execute("DEL", "relock:{late}").equals("1");
    }

    @Test
    void holdingGivesTheBodyTheHandleAndIsEmptyWhenNotAcquired() {
        StepVerifier.create(ReactiveLocks.holding(ReactiveLocks.tryAcquire(client.lock("fenced"), Duration.ZERO),
                        held -> Mono.just(held.fencingToken())))
                .assertNext(token -> assertThat(token).isPositive())
                .verifyComplete();

        AtomicBoolean bodyCalled = new AtomicBoolean();
        try (LockHandle held = other.lock("fenced").acquire()) {
            StepVerifier.create(ReactiveLocks.holdingMany(ReactiveLocks.tryAcquire(client.lock("fenced"), Duration.ZERO),
                            handle -> {
                                bodyCalled.set(true);
                                return Flux.just(1);
                            }))
                    .verifyComplete();
            assertThat(held.isValid()).isTrue();
        }
        assertThat(bodyCalled).isFalse();
    }

    @Test
    void readersShareAndAWriterWaitsForThem() throws Exception {
        Sinks.Empty<Void> letGo = Sinks.empty();
        List<String> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> firstReader = ReactiveLocks.withLock(client.readWriteLock("catalog").readLock(),
                Mono.fromRunnable(() -> events.add("reader 1 in")).then(letGo.asMono())).toFuture();
        soon("the first reader holds").until(() -> events.contains("reader 1 in"));

        ReactiveLocks.withLock(other.readWriteLock("catalog").readLock(), Mono.fromRunnable(() -> events.add("reader 2")))
                .block(HANG);
        CompletableFuture<Void> writer = ReactiveLocks.withLock(other.lock("catalog"),
                Mono.<Void>fromRunnable(() -> events.add("writer"))).toFuture();
        soon("the writer queued").until(() -> other.inspect("catalog").waiters() == 1);
        assertThat(events).containsExactly("reader 1 in", "reader 2");

        letGo.tryEmitEmpty();
        writer.get(HANG.toSeconds(), TimeUnit.SECONDS);
        firstReader.get(HANG.toSeconds(), TimeUnit.SECONDS);
        assertThat(events).containsExactly("reader 1 in", "reader 2", "writer");
    }

    @Test
    void permitsAreHeldForTheBodyAndGivenBack() {
        RelockSemaphore exports = client.semaphore("exports");
        exports.trySetPermits(2);
        StepVerifier.create(ReactiveLocks.withPermits(exports, 2,
                        Mono.fromCallable(exports::availablePermits).subscribeOn(Schedulers.boundedElastic())))
                .expectNext(0)
                .verifyComplete();
        assertThat(exports.availablePermits()).isEqualTo(2);

        PermitHandle both = ReactiveLocks.acquire(other.semaphore("exports"), 2).block(HANG);
        StepVerifier.create(ReactiveLocks.tryAcquire(exports, 1, Duration.ZERO)).verifyComplete();
        StepVerifier.create(ReactiveLocks.withPermits(exports, 1, Flux.just("a", "b")))
                .expectSubscription()
                .then(() -> ReactiveLocks.release(both).block(HANG))
                .expectNext("a", "b")
                .verifyComplete();
        assertThat(exports.availablePermits()).isEqualTo(2);
    }

    @Test
    void aClosedClientFailsTheSubscriptionNotTheAssembly() {
        RelockClient closed = RelockClient.create(redis.uri());
        RelockLock lock = closed.lock("closed");
        closed.close();
        Mono<String> assembled = ReactiveLocks.withLock(lock, Mono.just("never"));
        StepVerifier.create(assembled).verifyError(IllegalStateException.class);
    }

    private void forceOpenOnceHeld(String name) {
        soon("held").until(() -> other.inspect(name).isHeld());
        assertThat(other.lock(name).forceUnlock()).isTrue();
    }
}
