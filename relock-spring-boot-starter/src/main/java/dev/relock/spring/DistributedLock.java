package dev.relock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a relock lock: acquired before the method starts,
 * released when it returns or throws.
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
 * <p>The annotation is checked when the bean is created, so a bad expression, duration or
 * fallback method stops the application at start-up with a message naming the method. The method
 * must return a plain value: methods returning a {@code Future}, {@code CompletionStage} or
 * reactive {@code Publisher} are refused, since the lock would be released before their work ends.
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
     * the default, tries once.
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
        /** Throw {@link LockNotAcquiredException} naming the lock. */
        THROW,
        /**
         * Do not run the method; return what stands for nothing in its return type: {@code null},
         * an empty {@code Optional}, {@code OptionalInt}, {@code Stream}, collection, map or array.
         * Refused at start-up on methods returning a primitive other than {@code void}.
         */
        SKIP,
        /** Call the {@link DistributedLock#fallback()} method instead and return its result. */
        FALLBACK
    }
}
