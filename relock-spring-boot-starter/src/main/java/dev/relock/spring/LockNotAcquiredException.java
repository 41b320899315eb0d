package dev.relock.spring;

import java.lang.reflect.Method;
import java.util.Objects;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Thrown by a {@link DistributedLock} method whose lock was not acquired within its wait (with
 * {@link DistributedLock.WhenNotAcquired#THROW}, the default), or whose thread was interrupted while
 * it waited (then the thread's interrupt status is set again). A method with an asynchronous result
 * returns a future, Mono or Flux that fails with it instead. Not a {@link dev.relock.RelockException}:
 * Redis answered, another holder had the lock.
 *
 * <p>In a Spring MVC or WebFlux application it answers 409 Conflict (the request conflicts with work under way
 * elsewhere; a retry may succeed), not 500. An application's own {@code @ExceptionHandler} for it takes precedence.
 */
@ResponseStatus(HttpStatus.CONFLICT)
public class LockNotAcquiredException extends RuntimeException {

    private final String lockName;

    /**
     * @param lockName the evaluated name of the lock that was not acquired
     * @param method the annotated method that did not run
     * @param reason why, e.g. "not acquired within 2s"
     * @param cause an InterruptedException, or null
     */
    public LockNotAcquiredException(String lockName, Method method, String reason, Throwable cause) {
        super("lock '" + Objects.requireNonNull(lockName, "lockName") + "' " + reason + "; "
                + method.getDeclaringClass().getName() + "." + method.getName() + " did not run", cause);
        this.lockName = lockName;
    }

    /** The evaluated name of the lock that was not acquired. */
    public String lockName() {
        return lockName;
    }
}
