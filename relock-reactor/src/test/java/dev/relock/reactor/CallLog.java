package dev.relock.reactor;

import dev.relock.LockHandle;
import dev.relock.PermitHandle;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.RelockReadWriteLock;
import dev.relock.RelockSemaphore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records what this module asks of relock-core: a {@link #watch watched} client's locks, read-write locks,
 * semaphores and the handles they grant note every call made on them (which method, on which thread), and every
 * release of a handle. Each call goes on to the real object unchanged; the future of an acquisition is passed on so
 * that cancelling it cancels the client's own (which is how a waiter leaves the queue), and completes on the thread
 * that completed the client's.
 *
 * <p>Calls come from any thread; the lists are safe to read while they grow.
 */
final class CallLog {

    /** One call on a lock, semaphore or handle: whether it reaches Redis, and whether its caller waits for that. */
    record Call(String method, String thread, boolean reachesRedis, boolean waits) {}

    /** Methods answered from what the object holds, without asking Redis. */
    private static final Set<String> LOCAL = Set.of("name", "readLock", "writeLock", "state", "isValid", "permits",
            "whenLost", "isHeldByCurrentThread", "getHoldCount", "toString", "hashCode", "equals");

    private final List<Call> calls = new CopyOnWriteArrayList<>();
    // the client's own handle -> how often it was released (closed, or given up with releaseAfter)
    private final Map<LockHandle, Integer> releases = Collections.synchronizedMap(new IdentityHashMap<>());

    /** {@code client}, whose locks, read-write locks and semaphores are watched; its own methods are not. */
    RelockClient watch(RelockClient client) {
        return proxy(RelockClient.class, (proxy, method, args) -> watched(call(client, method, args)));
    }

    /** Every call so far, in the order made. */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    /** The calls whose caller waited for Redis: every call that reaches it but an {@code …Async} one. */
    List<Call> waitingCalls() {
        return calls.stream().filter(Call::waits).toList();
    }

    /** How often each handle granted so far was released, in no particular order. */
    List<Integer> releasesPerHandle() {
        synchronized (releases) {
            return new ArrayList<>(releases.values());
        }
    }

    void clear() {
        calls.clear();
        releases.clear();
    }

    private Object watched(Object result) {
        if (result instanceof RelockLock lock) {
            return recording(RelockLock.class, lock);
        }
        if (result instanceof RelockReadWriteLock readWriteLock) {
            return recording(RelockReadWriteLock.class, readWriteLock);
        }
        if (result instanceof RelockSemaphore semaphore) {
            return recording(RelockSemaphore.class, semaphore);
        }
        return result;
    }

    private <T> T recording(Class<T> type, T target) {
        return proxy(type, (proxy, method, args) -> {
            String name = method.getName();
            // a handle knows its own token; a lock asks Redis for the holder's
            boolean reachesRedis = !LOCAL.contains(name) && !(target instanceof LockHandle && name.equals("fencingToken"));
            calls.add(new Call(name, Thread.currentThread().getName(), reachesRedis,
                    reachesRedis && !name.endsWith("Async")));
            if (target instanceof LockHandle handle && (name.equals("close") || name.equals("releaseAfter"))) {
                releases.merge(handle, 1, Integer::sum);
            }
            Object result = call(target, method, args);
            if (name.endsWith("Async")) {
                return handingOn((CompletionStage<?>) result);
            }
            return watched(result);
        });
    }

    /** A future completed as the client's {@code stage} is, with its handles watched, and cancelling that one. */
    private CompletableFuture<Object> handingOn(CompletionStage<?> stage) {
        CompletableFuture<?> source = stage.toCompletableFuture();
        CompletableFuture<Object> handedOn = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                // the client's future completes this one, with a CancellationException or with what came first
                return source.cancel(mayInterruptIfRunning);
            }
        };
        source.whenComplete((value, failure) -> {
            if (failure != null) {
                handedOn.completeExceptionally(failure);
            } else {
                handedOn.complete(value instanceof Optional<?> maybe ? maybe.map(this::handle) : handle(value));
            }
        });
        return handedOn;
    }

    private Object handle(Object granted) {
        return granted instanceof PermitHandle permits ? recording(PermitHandle.class, permits)
                : recording(LockHandle.class, (LockHandle) granted);
    }

    private static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return type.cast(Proxy.newProxyInstance(CallLog.class.getClassLoader(), new Class<?>[] {type}, handler));
    }
}
