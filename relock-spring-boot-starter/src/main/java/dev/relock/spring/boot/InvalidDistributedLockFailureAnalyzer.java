package dev.relock.spring.boot;

import dev.relock.spring.InvalidDistributedLockException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Tells what is wrong with a {@code @DistributedLock} when it stops the start-up: Spring AOP wraps the exception
 * ("Unexpected AOP exception"), which this analysis looks through. Registered in {@code META-INF/spring.factories}.
 */
class InvalidDistributedLockFailureAnalyzer extends AbstractFailureAnalyzer<InvalidDistributedLockException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidDistributedLockException cause) {
        String method = cause.method().getDeclaringClass().getName() + "." + cause.method().getName();
        return new FailureAnalysis(cause.getMessage(),
                "Change the @DistributedLock on " + method + ": " + cause.problem() + ". The annotation is checked at"
                        + " start-up so that a lock that could not work never lets a call through unlocked.",
                cause);
    }
}
