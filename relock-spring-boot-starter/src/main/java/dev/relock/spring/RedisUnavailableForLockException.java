package dev.relock.spring;

import dev.relock.RedisUnavailableException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Thrown by a {@link DistributedLock} method whose lock could not be taken because Redis could not be reached for
 * the whole of its wait (tried again meanwhile); the method did not run. Its cause is the last
 * {@link RedisUnavailableException} relock reported. A method with an asynchronous result returns a future, Mono
 * or Flux that fails with it instead.
 *
 * <p>Only the taking of the lock throws it: a {@link RedisUnavailableException} that the method itself throws, or
 * that the release after it throws, is passed on as it is. It is a {@link RedisUnavailableException}, so code that
 * catches those catches it too.
 *
 * <p>In a Spring MVC or WebFlux application it answers 503 Service Unavailable (the lock service is down; a retry
 * may succeed), not 500. An application's own {@code @ExceptionHandler} for it, or for
 * {@link RedisUnavailableException}, takes precedence.
 */
@ResponseStatus(HttpStatus.SERVICE_UNAVAILABLE)
public class RedisUnavailableForLockException extends RedisUnavailableException {

    private final String lockName;

    /**
     * @param lockName the evaluated name of the lock that could not be taken
     * @param method the annotated method that did not run
     * @param wait the method's wait, during which Redis could not be reached
     * @param cause the last failure to reach Redis
     */
    public RedisUnavailableForLockException(String lockName, Method method, Duration wait,
            RedisUnavailableException cause) {
        super("lock '" + Objects.requireNonNull(lockName, "lockName") + "' could not be taken: Redis could not be "
                + "reached" + (wait.isZero() ? "" : " within the wait of " + wait.toMillis() + " ms") + " ("
                + Objects.requireNonNull(cause, "cause").getMessage() + "); " + method.getDeclaringClass().getName()
                + "." + method.getName() + " did not run", cause);
        this.lockName = lockName;
    }

    /** The evaluated name of the lock that could not be taken. */
    public String lockName() {
        return lockName;
    }
}
