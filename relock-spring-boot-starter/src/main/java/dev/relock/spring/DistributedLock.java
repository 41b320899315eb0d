package dev.relock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a relock lock: acquired before the method starts,
 * released when it returns or throws, or, for a method returning a CompletionStage, a Mono or a
 * Flux, when that work ends.
 *
 * <pre>{@code
 * @DistributedLock(name = "'order:' + #order.id", waitFor = "2s")
 * public void ship(Order order) { ... }
 * }</pre>
 *
 * <p>Applied by a Spring AOP advisor, so it works on any bean Spring proxies, and, as with
 * {@code @Transactional}, not on calls a bean makes to itself. The advisor runs outside
 * transactions and other advisors of default order, so a transaction commits before the lock is
 * released.
 *
 * <p>Locks are reentrant per thread: an annotated method called from another one holding the same
 * lock simply enters it again. A method holding the shared lock cannot take the exclusive one of
 * the same name (relock refuses upgrades at once with {@link IllegalMonitorStateException}); the
 * exclusive holder may take the shared lock.
 *
 * <p><b>Asynchronous results</b> hold the lock until their work ends, through a hold owned by a
 * handle, not by a thread (not reentrant: a nested call for the same lock waits like any other
 * owner, so with no {@link #waitFor()} it is not acquired):
 * <ul>
 *   <li>{@code CompletionStage} or {@code CompletableFuture}: the call returns a CompletableFuture
 *       at once; the lock is taken without blocking the caller, the method is called once it is held
 *       (on a relock thread, "relock-stage-N"), and the lock is released when the method's stage
 *       completes, normally or exceptionally, before the returned future completes with its outcome.
 *       Cancelling the returned future while the lock is awaited withdraws the acquisition.
 *   <li>{@code Mono}, {@code Flux} or {@code Publisher} (with Project Reactor and relock-reactor,
 *       which the starter brings): the call returns a Mono or Flux at once, and nothing more happens
 *       until it is subscribed; then the lock is taken, the method is called and its publisher
 *       subscribed, and the lock is released when that completes, fails or is cancelled. Every
 *       subscription does all of this anew. A lease lost meanwhile fails it with
 *       {@link dev.relock.LeaseLostException}.
 * </ul>
 * Not acquired in time: {@link WhenNotAcquired#THROW} fails the future or publisher with
 * {@link LockNotAcquiredException}, {@link WhenNotAcquired#SKIP} gives a future completed with
 * {@code null}, an empty Mono or an empty Flux, {@link WhenNotAcquired#FALLBACK} the fallback's result.
 *
 * <p>The annotation is checked when the bean is created, so a bad expression, duration or
 * fallback method stops the application at start-up with a message naming the method. A method
 * returning another {@code Future} (which tells nobody when its work ends) or another kind of
 * {@code Publisher} is refused.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

    /**
     * The lock's name, a SpEL expression over the method's arguments: {@code #p0} or {@code #a0}
     * for the first, or their names when compiled with {@code -parameters}, e.g.
     * {@code "'order:' + #order.id"}. A plain name must be quoted: {@code "'nightly-report'"}. The
     * root object has {@code method}, {@code args} and {@code target}; {@code @beanName} refers to
     * a bean. The value is turned into a string, which must not be blank.
     */
    String name();

    /**
     * How long to wait for the lock, as Spring duration text ({@code "500ms"}, {@code "2s"},
     * {@code "PT1M"}; a number alone is milliseconds) or a {@code ${property}} placeholder. Zero,
     * the default, tries once. While Redis cannot be reached the call tries again within the wait, and
     * throws {@link RedisUnavailableForLockException} if Redis still could not be reached when it ends.
     */
    String waitFor() default "0s";

    /**
     * A lease that is not renewed, in the same format as {@link #waitFor()}: the lock ends after it
     * even if the method still runs. Empty, the default, means the client's default lease, renewed
     * by its lease keeper for as long as the method runs.
     */
    String lease() default "";

    /**
     * Whether to take the shared (read) lock of the name's read-write lock, which any number of
     * methods may hold together, instead of the exclusive lock (the default), which is the
     * read-write lock's write lock.
     */
    boolean shared() default false;

    /** What happens when the lock is not acquired within {@link #waitFor()}. */
    WhenNotAcquired whenNotAcquired() default WhenNotAcquired.THROW;

    /**
     * With {@link WhenNotAcquired#FALLBACK}: the name of a method of the same class with the same
     * parameter types and a compatible return type, called on the same bean with the same arguments
     * instead of the annotated method. Must be empty otherwise.
     */
    String fallback() default "";

    /** What an annotated method does when its lock is not acquired in time. */
    enum WhenNotAcquired {
        /** Throw {@link LockNotAcquiredException} naming the lock (an asynchronous result fails with it). */
        THROW,
        /**
         * Do not run the method; return what stands for nothing in its return type: {@code null},
         * an empty {@code Optional}, {@code OptionalInt}, {@code Stream}, collection, map or array,
         * a future completed with {@code null}, an empty {@code Mono} or {@code Flux}.
         * Refused at start-up on methods returning a primitive other than {@code void}.
         */
        SKIP,
        /** Call the {@link DistributedLock#fallback()} method instead and return its result. */
        FALLBACK
    }
}
