package dev.relock.spring.internal;

import dev.relock.RelockLock;
import dev.relock.internal.metrics.CountedCall;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * The lock of one call of a {@code @DistributedLock} method as the call's tries see it: every method runs inside the
 * call's {@link CountedCall}, so that {@code relock.acquire} counts the call once, however many tries its
 * {@code waitFor} takes while Redis cannot be reached, and a SKIP method's miss as {@code skipped}. A view rather
 * than a wrapped call, because relock-reactor starts a try when its subscriber requests, on whatever thread that is.
 *
 * <p>Immutable; used by the call's tries one after the other, on any thread.
 */
final class CountedLock implements InvocationHandler {

    private final RelockLock lock;
    private final CountedCall call;

    private CountedLock(RelockLock lock, CountedCall call) {
        this.lock = lock;
        this.call = call;
    }

    /** {@code lock}, its acquisitions reported to {@code call}. */
    static RelockLock of(RelockLock lock, CountedCall call) {
        return (RelockLock) Proxy.newProxyInstance(CountedLock.class.getClassLoader(), new Class<?>[] {RelockLock.class},
                new CountedLock(lock, call));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                default -> "counted " + lock;
            };
        }
        return call.run(() -> {
            try {
                return method.invoke(lock, args);
            } catch (InvocationTargetException e) {
                // what the lock threw, as it threw it: an Error, an unchecked or a declared checked exception
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw (Exception) e.getCause();
            }
        });
    }
}
