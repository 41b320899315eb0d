package dev.relock.spring.boot;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockMultiLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.RelockSemaphore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The auto-configured {@link RelockClient}: it tries to connect at start-up, and where Redis cannot be reached it
 * connects on first use instead, so an application starts while Redis is down (as a Spring Data Redis application
 * does); until Redis answers, every call that needs it fails
 * as relock's calls do when Redis is unreachable ({@link dev.relock.RedisUnavailableException}, within the command
 * timeout, which relock's clients also use as the connect timeout) and the health indicator is DOWN.
 *
 * <p>Views asked for before the client is connected ({@code lock(name)}, {@code readWriteLock}, {@code semaphore},
 * {@code multiLock}, and a read-write lock's halves) are proxies too: each asks for the real view on its first call
 * and keeps it. So a bean may take its views in its constructor. A bad lock name is then reported at that first call,
 * not when the view is made.
 *
 * <p>Threads: any. At most one connect is under way at a time ({@link #attempt}); callers that arrive meanwhile share
 * its outcome, so none waits longer than one connect. A connect that failed is tried again by the next call. Once
 * connected, {@link #client} never changes; calls then go to it directly.
 */
final class LazyRelockClient implements InvocationHandler {

    private static final Logger log = LoggerFactory.getLogger(LazyRelockClient.class);

    /** The types of the views a client or view hands out without talking to Redis, as proxies until it connects. */
    static final Set<Class<?>> VIEWS =
            Set.of(RelockLock.class, RelockReadWriteLock.class, RelockSemaphore.class, RelockMultiLock.class);

    private final Supplier<RelockClient> connect;
    private final String redis;
    // null until a connect succeeded; then the client for good
    private volatile RelockClient client;
    // the connect under way or the last one that failed, null before the first; guarded by this
    private CompletableFuture<RelockClient> attempt;
    // set once, under this; read without it only to refuse new views after close
    private volatile boolean closed;

    private LazyRelockClient(Supplier<RelockClient> connect, String redis) {
        this.connect = connect;
        this.redis = redis;
    }

    /**
     * A client that runs {@code connect} on first use.
     *
     * @param redis where it connects, without credentials, for messages
     */
    static RelockClient of(Supplier<RelockClient> connect, String redis) {
        return proxy(RelockClient.class, new LazyRelockClient(connect, redis));
    }

    /**
     * Connects now, on the calling thread (within the command timeout): a Redis that cannot be reached is logged and
     * left to the first call; anything else relock refuses (settings the server cannot serve) is thrown.
     */
    void tryToConnect() {
        try {
            connected();
        } catch (RedisUnavailableException e) {
            log.warn("relock: {} is not reachable ({}); the application starts, locks fail until it answers, and the"
                    + " health indicator is DOWN meanwhile", redis, e.getMessage());
        }
    }

    static LazyRelockClient handlerOf(RelockClient proxy) {
        return (LazyRelockClient) Proxy.getInvocationHandler(proxy);
    }

    /**
     * The client that {@code client} stands for once it has connected, without connecting it: {@code client} itself
     * unless it is a lazy client; a lazy client's connected client, or null while it has not connected (or closed
     * before it did).
     */
    static RelockClient connectedOrNull(RelockClient client) {
        if (Proxy.isProxyClass(client.getClass())
                && Proxy.getInvocationHandler(client) instanceof LazyRelockClient lazy) {
            return lazy.client;
        }
        return client;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            RelockClient connectedClient = client;
            return objectMethod(proxy, method, args,
                    connectedClient != null ? connectedClient : "RelockClient[" + redis + ", not connected yet]");
        }
        if (method.getName().equals("close") && method.getParameterCount() == 0) {
            close();
            return null;
        }
        if (client == null && VIEWS.contains(method.getReturnType())) {
            if (closed) {
                throw closedException();
            }
            return proxy(method.getReturnType(), new LazyView(() -> call(connected(), method, args)));
        }
        return call(connected(), method, args);
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("relock client for " + redis + " is closed");
    }

    private void close() {
        RelockClient connectedClient;
        synchronized (this) {
            closed = true;
            connectedClient = client;
        }
        if (connectedClient != null) {
            connectedClient.close();
        }
    }

    /** The connected client: the one there is, or the outcome of the connect under way or of a new one. */
    private RelockClient connected() {
        RelockClient connectedClient = client;
        if (connectedClient != null) {
            return connectedClient;
        }
        CompletableFuture<RelockClient> outcome;
        boolean connectHere = false;
        synchronized (this) {
            if (closed) {
                throw closedException();
            }
            if (attempt == null || attempt.isCompletedExceptionally()) {
                attempt = new CompletableFuture<>();
                connectHere = true;
            }
            outcome = attempt;
        }
        if (connectHere) {
            connectOnce(outcome);
        }
        try {
            return outcome.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw e;
        }
    }

    private void connectOnce(CompletableFuture<RelockClient> outcome) {
        RelockClient made;
        try {
            made = connect.get();
        } catch (RuntimeException | Error e) {
            outcome.completeExceptionally(e);
            return;
        }
        boolean closedMeanwhile;
        synchronized (this) {
            closedMeanwhile = closed;
            if (!closedMeanwhile) {
                client = made;
            }
        }
        if (closedMeanwhile) {
            made.close();
            outcome.completeExceptionally(closedException());
            return;
        }
        log.debug("relock client {} connected to {}", made.clientId(), redis);
        outcome.complete(made);
    }

    /** Calls {@code method} on {@code target}, throwing what it throws. */
    private static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** equals and hashCode by identity, toString from {@code shown}. */
    private static Object objectMethod(Object proxy, Method method, Object[] args, Object shown) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> shown.toString();
        };
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(LazyRelockClient.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    /** How a lazy view gets its real one: a call of the method that made it, on the real client or view. */
    @FunctionalInterface
    private interface Resolver {
        Object get() throws Throwable;
    }

    /**
     * A view asked for before the client was connected: its first call asks for the real view (connecting the client
     * if need be), which it keeps. A view it hands out before that (a read-write lock's half) is such a view too.
     */
    private static final class LazyView implements InvocationHandler {

        private final Resolver resolve;
        // null until resolved, then the real view for good
        private volatile Object target;

        LazyView(Resolver resolve) {
            this.resolve = resolve;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                Object resolvedTarget = target;
                return objectMethod(proxy, method, args,
                        resolvedTarget != null ? resolvedTarget : "relock view (client not connected yet)");
            }
            if (target == null && VIEWS.contains(method.getReturnType())) {
                return proxy(method.getReturnType(), new LazyView(() -> call(resolved(), method, args)));
            }
            return call(resolved(), method, args);
        }

        private Object resolved() throws Throwable {
            Object resolvedTarget = target;
            if (resolvedTarget == null) {
                synchronized (this) {
                    if (target == null) {
                        target = resolve.get();
                    }
                    resolvedTarget = target;
                }
            }
            return resolvedTarget;
        }
    }
}
