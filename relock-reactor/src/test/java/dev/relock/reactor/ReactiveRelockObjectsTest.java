package dev.relock.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import dev.relock.LockHandle;
import dev.relock.LockInfo;
import dev.relock.LockKind;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@link ReactiveRelockLock}, {@link ReactiveRelockReadWriteLock} and {@link ReactiveRelockSemaphore} against a
 * fixture Redis. The objects under test are made of the locks of {@code client}, which a {@link CallLog} watches (what
 * reaches relock-core, on which thread, and each handle's releases). The tests of the rules every object keeps run
 * once for each {@link Kind}.
 */
@Tag("redis")
class ReactiveRelockObjectsTest extends TwoClientsTestBase {

    private final CallLog log = new CallLog();

    @Override
    RelockClient underTest(RelockClient plain) {
        return log.watch(plain);
    }

    @BeforeEach
    void forgetEarlierCalls() {
        log.clear();
    }

    // ---- the rules every object keeps ---------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Kind.class)
    void nothingReachesRedisUntilSubscribedAndEverySubscriptionAcquiresAnew(Kind kind) {
        String name = kind.prepare(other, "lazy");
        Guard guard = kind.guard(client, name);
        Mono<? extends LockHandle> acquire = guard.acquire();
        guard.tryAcquire(Duration.ZERO);
        guard.withLock(Mono.just("mono"));
        guard.withLock(Flux.just("flux"));
        Mono<Boolean> taken = guard.taken();
        assertThat(log.calls()).as("calls made when assembled").noneMatch(CallLog.Call::reachesRedis);
        assertThat(kind.inspect(other, name).isHeld()).isFalse();

        LockHandle first = acquire.block(HANG);
        assertThat(first.isValid()).isTrue();
        assertThat(taken.block(HANG)).as("taken while the first subscription holds it").isTrue();
        ReactiveLocks.release(first).block(HANG);
        assertThat(taken.block(HANG)).as("taken, asked again after the release").isFalse();

        LockHandle second = acquire.block(HANG);
        assertThat(second).isNotSameAs(first);
        assertThat(second.isValid()).isTrue();
        assertThat(first.isValid()).isFalse();
        ReactiveLocks.release(second).block(HANG);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void tryAcquireIsEmptyWhileTheRivalHolds(Kind kind) {
        String name = kind.prepare(other, "busy");
        LockHandle rival = kind.rival(other, name).acquire().block(HANG);
        StepVerifier.create(kind.guard(client, name).tryAcquire(Duration.ofMillis(100)))
                .expectSubscription()
                .verifyComplete();
        assertThat(rival.isValid()).isTrue();
        ReactiveLocks.release(rival).block(HANG);

        StepVerifier.create(kind.guard(client, name).tryAcquire(Duration.ZERO).flatMap(ReactiveLocks::release))
                .as("tried once, free")
                .verifyComplete();
        assertThat(log.releasesPerHandle()).containsExactly(1);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void cancellingWhileWaitingLeavesTheQueueAndHoldsNothing(Kind kind) {
        String name = kind.prepare(other, "queue");
        Guard guard = kind.guard(client, name);
        AtomicBoolean bodyRan = new AtomicBoolean();
        List<LockHandle> delivered = new CopyOnWriteArrayList<>();
        LockHandle rival = kind.rival(other, name).acquire().block(HANG);

        Disposable withLock = guard.withLock(Mono.fromRunnable(() -> bodyRan.set(true))).subscribe();
        Disposable acquire = guard.acquire().subscribe(delivered::add);
        soon("both queued").until(() -> kind.inspect(other, name).waiters() == 2);
        withLock.dispose();
        acquire.dispose();
        soon("both left the queue").until(() -> kind.inspect(other, name).waiters() == 0);
        assertThat(rival.isValid()).isTrue();

        ReactiveLocks.release(rival).block(HANG);
        assertThat(kind.inspect(other, name).isHeld()).as("held after the rival released").isFalse();
        assertThat(bodyRan).isFalse();
        assertThat(delivered).isEmpty();
        assertThat(log.releasesPerHandle()).as("releases of handles granted to the cancelled").isEmpty();
    }

    /**
     * Cancels 0 to 1.5 ms after subscribing to a free lock, around the time the grant arrives: before it (the waiter
     * leaves), as it arrives (the handle is released by this module or by the client) or after it (the subscriber has
     * the handle, and closes it here). Either way the grant is released, once.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void aGrantThatRacesTheCancelIsReleasedOnce(Kind kind) {
        String name = kind.prepare(other, "race");
        Guard guard = kind.guard(client, name);
        for (int i = 0; i < 30; i++) {
            HandleKeeper keeper = new HandleKeeper();
            guard.acquire().subscribe(keeper);
            Mono.delay(Duration.ofNanos(i * 50_000L)).subscribe(tick -> keeper.cancel());
            soon("cancelled or completed").untilTrue(keeper.settled);
            soon("the grant released after cancel " + i).until(() -> {
                keeper.closeKept();
                return !kind.inspect(other, name).isHeld() && client.heldLocks().isEmpty();
            });

            Disposable withLock = guard.withLock(Mono.never()).subscribe();
            Mono.delay(Duration.ofNanos(i * 50_000L)).subscribe(tick -> withLock.dispose());
            soon("withLock's grant released after cancel " + i)
                    .until(() -> !kind.inspect(other, name).isHeld() && client.heldLocks().isEmpty());
        }
        assertThat(kind.inspect(other, name).waiters()).isZero();
        assertThat(log.releasesPerHandle()).as("releases of each handle granted").allMatch(releases -> releases == 1);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void withLockReleasesExactlyOnceOnCompleteErrorAndCancel(Kind kind) {
        String name = kind.prepare(other, "once");
        Guard guard = kind.guard(client, name);
        StepVerifier.create(guard.withLock(Mono.just("paid"))).expectNext("paid").verifyComplete();
        StepVerifier.create(guard.withLock(Flux.just(1, 2))).expectNext(1, 2).verifyComplete();
        StepVerifier.create(guard.withLock(Mono.error(new IllegalStateException("no stock"))))
                .verifyErrorMessage("no stock");
        StepVerifier.create(guard.withLock(Flux.concat(Flux.just(1), Flux.error(new IllegalStateException("refused")))))
                .expectNext(1)
                .verifyErrorMessage("refused");
        for (boolean mono : new boolean[] {true, false}) {
            AtomicBoolean bodySubscribed = new AtomicBoolean();
            Disposable held = mono
                    ? guard.withLock(Mono.never().doOnSubscribe(subscription -> bodySubscribed.set(true))).subscribe()
                    : guard.withLock(Flux.never().doOnSubscribe(subscription -> bodySubscribed.set(true))).subscribe();
            soon("the body runs").untilTrue(bodySubscribed);
            held.dispose();
        }
        soon("six holds released").until(() -> log.releasesPerHandle().size() == 6 && !kind.inspect(other, name).isHeld());
        assertThat(log.releasesPerHandle()).as("releases of each hold").containsOnly(1);
    }

    /**
     * Every call that waits for Redis (a release, {@code isLocked}, {@code availablePermits}) runs on
     * {@code boundedElastic}: never on the thread that subscribes (here a single-threaded scheduler, which Reactor
     * counts as non-blocking) nor on the Lettuce thread that completes a waited acquisition and subscribes the body.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void nothingWaitsOnTheSubscribingThreadOrALettuceThread(Kind kind) throws Exception {
        String name = kind.prepare(other, "threads");
        Guard guard = kind.guard(client, name);
        Scheduler subscriber = Schedulers.newSingle("subscriber");
        try {
            LockHandle rival = kind.rival(other, name).acquire().block(HANG);
            AtomicReference<String> bodyThread = new AtomicReference<>();
            CompletableFuture<String> waited = guard.withLock(Mono.fromCallable(() -> {
                bodyThread.set(Thread.currentThread().getName());
                return "waited";
            })).subscribeOn(subscriber).toFuture();
            soon("queued").until(() -> kind.inspect(other, name).waiters() == 1);
            // the subscribing thread has attached its callback to the core's future once it runs a later task: before
            // that, a grant that came fast would complete the acquisition on the subscribing thread, not on Lettuce's
            CountDownLatch subscriberIdle = new CountDownLatch(1);
            subscriber.schedule(subscriberIdle::countDown);
            assertThat(subscriberIdle.await(HANG.toSeconds(), TimeUnit.SECONDS)).as("the subscribing thread is idle").isTrue();
            ReactiveLocks.release(rival).block(HANG);
            assertThat(waited.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("waited");
            assertThat(bodyThread.get()).as("the thread that completed the waited acquisition").startsWith("lettuce-");

            StepVerifier.create(guard.withLock(Flux.just(1, 2)).subscribeOn(subscriber)).expectNext(1, 2).verifyComplete();
            StepVerifier.create(guard.acquire().flatMap(ReactiveLocks::release).subscribeOn(subscriber)).verifyComplete();
            StepVerifier.create(guard.taken().subscribeOn(subscriber)).expectNext(false).verifyComplete();
            AtomicBoolean bodySubscribed = new AtomicBoolean();
            Disposable cancelled = guard.withLock(Mono.never().doOnSubscribe(s -> bodySubscribed.set(true)))
                    .subscribeOn(subscriber).subscribe();
            soon("the body runs").untilTrue(bodySubscribed);
            subscriber.schedule(cancelled::dispose);
            soon("released after the cancel").until(() -> !kind.inspect(other, name).isHeld());
        } finally {
            subscriber.dispose();
        }
        assertThat(log.waitingCalls()).as("calls that waited for Redis")
                .hasSizeGreaterThanOrEqualTo(5)
                .allSatisfy(call -> assertThat(call.thread()).as(call.method()).startsWith("boundedElastic-"));
    }

    /** Bodies of the object under test and of its rival in the other client, 20 at once: never an exclusive one beside another. */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void twoClientsExcludeEachOther(Kind kind) {
        String name = kind.prepare(other, "contended");
        Guard guard = kind.guard(client, name);
        Guard rival = kind.rival(other, name);
        AtomicInteger sharedInside = new AtomicInteger();
        AtomicInteger exclusiveInside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Flux.range(0, 20)
                .flatMap(i -> {
                    boolean mine = i % 2 == 0;
                    boolean exclusive = !mine || !kind.shared;
                    // each body counts itself in, then looks at the other count: of two that overlap, one sees the other
                    Mono<Long> body = Mono.defer(() -> {
                        int withMe = (exclusive ? exclusiveInside : sharedInside).incrementAndGet();
                        if (exclusive ? withMe > 1 || sharedInside.get() > 0 : exclusiveInside.get() > 0) {
                            overlaps.incrementAndGet();
                        }
                        return Mono.delay(Duration.ofMillis(2))
                                .doOnNext(tick -> (exclusive ? exclusiveInside : sharedInside).decrementAndGet());
                    });
                    return (mine ? guard : rival).withLock(body);
                }, 20)
                .blockLast(HANG);
        assertThat(overlaps).as("exclusive bodies that had company").hasValue(0);
        assertThat(exclusiveInside).hasValue(0);
        assertThat(sharedInside).hasValue(0);
    }

    // ---- what one kind adds -------------------------------------------------------------------------------------

    @Test
    void readersShareAWriterWaitsForThemAndNoHandleChangesSides() throws Exception {
        ReactiveRelockReadWriteLock mine = ReactiveRelockReadWriteLock.of(client.readWriteLock("catalog"));
        ReactiveRelockReadWriteLock theirs = ReactiveRelockReadWriteLock.of(other.readWriteLock("catalog"));
        assertThat(mine.name()).isEqualTo("catalog");

        LockHandle reading = mine.readLock().acquire().block(HANG);
        LockHandle alsoReading = theirs.readLock().tryAcquire(Duration.ZERO).block(HANG);
        assertThat(alsoReading).as("a second reader, of the other client").isNotNull();
        assertThat(other.inspect("catalog")).satisfies(info -> {
            assertThat(info.kind()).isEqualTo(LockKind.SHARED);
            assertThat(info.holders()).hasSize(2);
        });
        assertThat(theirs.writeLock().isLocked().block(HANG)).as("the write half, while readers hold").isTrue();
        ReactiveLocks.release(alsoReading).block(HANG);
        StepVerifier.create(mine.writeLock().tryAcquire(Duration.ofMillis(100)))
                .as("the write lock, asked for beside the one read hold, of the same client: no upgrade")
                .verifyComplete();

        CompletableFuture<String> writer = theirs.writeLock().withLock(Mono.just("rebuilt")).toFuture();
        soon("the writer queued").until(() -> other.inspect("catalog").waiters() == 1);
        StepVerifier.create(theirs.readLock().tryAcquire(Duration.ofMillis(100)))
                .as("a new reader, behind the waiting writer")
                .verifyComplete();
        ReactiveLocks.release(reading).block(HANG);
        assertThat(writer.get(HANG.toSeconds(), TimeUnit.SECONDS)).isEqualTo("rebuilt");

        LockHandle writing = mine.writeLock().acquire().block(HANG);
        StepVerifier.create(mine.readLock().tryAcquire(Duration.ofMillis(100)))
                .as("the read lock, asked for beside a write hold of the same client: no downgrade through handles")
                .verifyComplete();
        assertThat(mine.readLock().isLocked().block(HANG)).as("the read half, while the writer holds").isTrue();
        ReactiveLocks.release(writing).block(HANG);
    }

    @Test
    void permitsAreHeldForTheBodyAndGivenBack() {
        other.semaphore("exports").trySetPermits(3);
        ReactiveRelockSemaphore exports = ReactiveRelockSemaphore.of(client.semaphore("exports"));
        assertThat(exports.name()).isEqualTo("exports");
        StepVerifier.create(exports.withPermits(2, exports.availablePermits())).expectNext(1).verifyComplete();
        StepVerifier.create(exports.availablePermits()).expectNext(3).verifyComplete();

        PermitHandle two = ReactiveRelockSemaphore.of(other.semaphore("exports")).acquire(2).block(HANG);
        StepVerifier.create(exports.tryAcquire(2, Duration.ZERO)).as("two of the one left").verifyComplete();
        StepVerifier.create(exports.withPermits(1, Flux.just("a", "b"))).expectNext("a", "b").verifyComplete();
        ReactiveLocks.release(two).block(HANG);

        PermitHandle leased = exports.tryAcquire(3, Duration.ZERO, Duration.ofSeconds(5)).block(HANG);
        assertThat(leased.permits()).isEqualTo(3);
        assertThat(client.heldLocks()).singleElement().satisfies(hold -> assertThat(hold.renewed()).isFalse());
        assertThat(other.inspectSemaphore("exports").remainingLease()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
        ReactiveLocks.release(leased).block(HANG);
    }

    @Test
    void badInputIsNamed() {
        assertThatNullPointerException().isThrownBy(() -> ReactiveRelockLock.of(null)).withMessage("lock");
        assertThatNullPointerException().isThrownBy(() -> ReactiveRelockReadWriteLock.of(null)).withMessage("readWriteLock");
        assertThatNullPointerException().isThrownBy(() -> ReactiveRelockSemaphore.of(null)).withMessage("semaphore");

        ReactiveRelockLock lock = ReactiveRelockLock.of(client.lock("input"));
        assertThatNullPointerException().isThrownBy(() -> lock.tryAcquire(null)).withMessage("wait");
        assertThatNullPointerException().isThrownBy(() -> lock.tryAcquire(Duration.ZERO, null)).withMessage("lease");
        assertThatNullPointerException().isThrownBy(() -> lock.withLock((Mono<?>) null)).withMessage("body");
        assertThatNullPointerException().isThrownBy(() -> lock.withLock((Flux<?>) null)).withMessage("body");
        StepVerifier.create(lock.tryAcquire(Duration.ZERO, Duration.ZERO))
                .verifyErrorMessage("lease of lock 'input' must be positive: 0 NANOSECONDS");

        ReactiveRelockSemaphore semaphore = ReactiveRelockSemaphore.of(client.semaphore("input"));
        StepVerifier.create(semaphore.acquire(1))
                .verifyErrorMessage("semaphore 'input' has no number of permits set; call trySetPermits first");
        other.semaphore("input").trySetPermits(2);
        StepVerifier.create(semaphore.acquire(0))
                .verifyErrorMessage("permits to acquire from semaphore 'input' must be positive: 0");
        StepVerifier.create(semaphore.withPermits(3, Mono.just("never")))
                .verifyErrorMessage("semaphore 'input' has fewer than 3 permits in all; asking for them would wait forever");
        assertThatNullPointerException().isThrownBy(() -> semaphore.withPermits(1, (Flux<?>) null)).withMessage("body");
    }

    // ---- the kinds, seen alike ----------------------------------------------------------------------------------

    /** One reactive object, whatever it guards. */
    interface Guard {

        Mono<? extends LockHandle> acquire();

        Mono<? extends LockHandle> tryAcquire(Duration wait);

        <T> Mono<T> withLock(Mono<T> body);

        <T> Flux<T> withLock(Flux<T> body);

        /** Whether anybody holds it: {@code isLocked()}, or for a semaphore whether no permit is free. */
        Mono<Boolean> taken();

        static Guard of(ReactiveRelockLock lock) {
            return new Guard() {
                @Override
                public Mono<LockHandle> acquire() {
                    return lock.acquire();
                }

                @Override
                public Mono<LockHandle> tryAcquire(Duration wait) {
                    return lock.tryAcquire(wait);
                }

                @Override
                public <T> Mono<T> withLock(Mono<T> body) {
                    return lock.withLock(body);
                }

                @Override
                public <T> Flux<T> withLock(Flux<T> body) {
                    return lock.withLock(body);
                }

                @Override
                public Mono<Boolean> taken() {
                    return lock.isLocked();
                }
            };
        }

        /** The semaphore's one permit. */
        static Guard of(ReactiveRelockSemaphore semaphore) {
            return new Guard() {
                @Override
                public Mono<PermitHandle> acquire() {
                    return semaphore.acquire(1);
                }

                @Override
                public Mono<PermitHandle> tryAcquire(Duration wait) {
                    return semaphore.tryAcquire(1, wait);
                }

                @Override
                public <T> Mono<T> withLock(Mono<T> body) {
                    return semaphore.withPermits(1, body);
                }

                @Override
                public <T> Flux<T> withLock(Flux<T> body) {
                    return semaphore.withPermits(1, body);
                }

                @Override
                public Mono<Boolean> taken() {
                    return semaphore.availablePermits().map(free -> free == 0);
                }
            };
        }
    }

    /** Each object under test, with what excludes it (its rival) and how an operator sees it. */
    enum Kind {
        LOCK(false) {
            @Override
            Guard guard(RelockClient client, String name) {
                return Guard.of(ReactiveRelockLock.of(client.lock(name)));
            }
        },
        WRITE_LOCK(false) {
            @Override
            Guard guard(RelockClient client, String name) {
                return Guard.of(ReactiveRelockReadWriteLock.of(client.readWriteLock(name)).writeLock());
            }
        },
        READ_LOCK(true) {
            @Override
            Guard guard(RelockClient client, String name) {
                return Guard.of(ReactiveRelockReadWriteLock.of(client.readWriteLock(name)).readLock());
            }
        },
        SEMAPHORE_OF_ONE(false) {
            @Override
            Guard guard(RelockClient client, String name) {
                return Guard.of(ReactiveRelockSemaphore.of(client.semaphore(name)));
            }

            @Override
            Guard rival(RelockClient client, String name) {
                return guard(client, name);
            }

            @Override
            LockInfo inspect(RelockClient probe, String name) {
                return probe.inspectSemaphore(name);
            }

            @Override
            String prepare(RelockClient admin, String test) {
                String name = super.prepare(admin, test);
                admin.semaphore(name).trySetPermits(1);
                return name;
            }
        };

        /** Whether holders of this kind share it with each other. */
        final boolean shared;

        Kind(boolean shared) {
            this.shared = shared;
        }

        abstract Guard guard(RelockClient client, String name);

        /** What this kind excludes and is excluded by: the exclusive lock of the name, or another permit holder. */
        Guard rival(RelockClient client, String name) {
            return LOCK.guard(client, name);
        }

        LockInfo inspect(RelockClient probe, String name) {
            return probe.inspect(name);
        }

        /** A name of this kind's own for {@code test}, ready to be acquired. */
        String prepare(RelockClient admin, String test) {
            return name().toLowerCase(Locale.ROOT) + ":" + test;
        }
    }
}
