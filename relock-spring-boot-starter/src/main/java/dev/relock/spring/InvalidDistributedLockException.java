package dev.relock.spring;

import java.lang.reflect.Method;

/**
 * Thrown at start-up for a {@link DistributedLock} that cannot work (a name that is no SpEL expression or names no
 * parameter, a bad duration, a missing fallback, an asynchronous return type...): the application does not start,
 * and Spring Boot's failure analysis names the method and what to change. Its message begins with
 * {@code @DistributedLock on <class>.<method>(<parameter types>): }.
 */
public class InvalidDistributedLockException extends IllegalStateException {

    private final transient Method method;
    private final String problem;

    /**
     * @param method the annotated method, as called on the bean's class
     * @param description {@code @DistributedLock on <class>.<method>(<parameter types>)}
     * @param problem what is wrong with the annotation
     * @param cause the parser's exception, or null
     */
    public InvalidDistributedLockException(Method method, String description, String problem, Throwable cause) {
        super(description + ": " + problem, cause);
        this.method = method;
        this.problem = problem;
    }

    /** The annotated method. */
    public Method method() {
        return method;
    }

    /** What is wrong with its annotation, without the method's name. */
    public String problem() {
        return problem;
    }
}
