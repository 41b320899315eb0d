package dev.relock.spring.internal;

import java.lang.reflect.Method;

/**
 * The root object of a {@code @DistributedLock} name expression: {@code method}, {@code args} and
 * {@code target} of the call. Public only so that SpEL can read its properties.
 */
public final class LockNameRoot {

    private final Method method;
    private final Object[] args;
    private final Object target;

    LockNameRoot(Method method, Object[] args, Object target) {
        this.method = method;
        this.args = args;
        this.target = target;
    }

    /** The annotated method. */
    public Method getMethod() {
        return method;
    }

    /** The call's arguments (the array itself, not a copy). */
    public Object[] getArgs() {
        return args;
    }

    /** The bean the method runs on (the target, not its proxy). */
    public Object getTarget() {
        return target;
    }
}
