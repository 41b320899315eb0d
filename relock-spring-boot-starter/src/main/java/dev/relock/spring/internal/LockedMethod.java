package dev.relock.spring.internal;

import dev.relock.LockHandle;
import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.internal.metrics.CountedCall;
import dev.relock.spring.DistributedLock;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import dev.relock.spring.InvalidDistributedLockException;
import dev.relock.spring.LockNotAcquiredException;
import dev.relock.spring.RedisUnavailableForLockException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.springframework.aop.support.AopUtils;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * One {@link DistributedLock} method of one bean class, checked and parsed once, when the bean is
 * created: its name expression, wait, lease, lock kind, what it returns and what to do when the lock
 * is taken. Immutable; used by any number of threads.
 */
final class LockedMethod {

    /** What a locked method returns, which decides how long its lock is held. */
    enum Result {
        /** A plain value: held by the calling thread until the method returns or throws. */
        VALUE,
        /** A CompletionStage or CompletableFuture: held by a handle until the stage completes. */
        STAGE,
        /** A Mono: held by a handle, from subscription until the Mono ends. */
        MONO,
        /** A Flux or a Publisher: held by a handle, from subscription until it ends. */
        FLUX
    }

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();
    // resolved by name, where present: an application without Reactor never loads a class of it
    private static final String PUBLISHER = "org.reactivestreams.Publisher";
    private static final String MONO = "reactor.core.publisher.Mono";
    private static final String FLUX = "reactor.core.publisher.Flux";
    private static final String REACTIVE_LOCKS = "dev.relock.reactor.ReactiveLocks";

    private final Method method;
    private final String description;
    private final Expression name;
    private final Duration wait;
    private final Duration lease;
    private final boolean shared;
    private final Result result;
    private final WhenNotAcquired whenNotAcquired;
    private final Method fallback;
    private final Supplier<Object> emptyResult;

    private LockedMethod(Method method, String description, Expression name, Duration wait, Duration lease,
            boolean shared, Result result, WhenNotAcquired whenNotAcquired, Method fallback,
            Supplier<Object> emptyResult) {
        this.method = method;
        this.description = description;
        this.name = name;
        this.wait = wait;
        this.lease = lease;
        this.shared = shared;
        this.result = result;
        this.whenNotAcquired = whenNotAcquired;
        this.fallback = fallback;
        this.emptyResult = emptyResult;
    }

    /**
     * Checks the annotation of {@code method} as declared in {@code targetClass}.
     *
     * @param beanFactory resolves {@code ${...}} placeholders in wait and lease; may be null
     * @throws InvalidDistributedLockException naming the method and what is wrong with its annotation
     */
    static LockedMethod of(Method method, Class<?> targetClass, DistributedLock annotation, BeanFactory beanFactory) {
        String description = "@DistributedLock on " + targetClass.getName() + "." + method.getName()
                + "(" + parameterTypeNames(method) + ")";
        try {
            Result result = resultOf(method.getReturnType());
            Expression name = parseName(annotation.name(), method);
            Duration wait = duration(annotation.waitFor(), "waitFor", beanFactory);
            if (wait == null || wait.isNegative()) {
                throw new IllegalArgumentException("waitFor must be zero or positive: '" + annotation.waitFor() + "'");
            }
            Duration lease = duration(annotation.lease(), "lease", beanFactory);
            if (lease != null && (lease.isZero() || lease.isNegative())) {
                throw new IllegalArgumentException("lease must be positive or empty: '" + annotation.lease() + "'");
            }
            WhenNotAcquired when = annotation.whenNotAcquired();
            Method fallback = null;
            if (when == WhenNotAcquired.FALLBACK) {
                fallback = fallbackMethod(method, targetClass, annotation.fallback());
            } else if (!annotation.fallback().isEmpty()) {
                throw new IllegalArgumentException("fallback '" + annotation.fallback()
                        + "' is set but whenNotAcquired is " + when + ", not FALLBACK");
            }
            Supplier<Object> emptyResult = when == WhenNotAcquired.SKIP ? emptyResult(method.getReturnType(), result)
                    : null;
            return new LockedMethod(method, description, name, wait, lease, annotation.shared(), result, when,
                    fallback, emptyResult);
        } catch (IllegalArgumentException e) {
            throw new InvalidDistributedLockException(method, description, e.getMessage(), null);
        } catch (ParseException e) {
            throw new InvalidDistributedLockException(method, description,
                    "name is not a SpEL expression: " + e.getMessage(), e);
        }
    }

    /** The evaluated lock name for one call. */
    String lockName(Object target, Object[] args, BeanFactory beanFactory) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new LockNameRoot(method, args, target), method, args, PARAMETER_NAMES);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value = name.getValue(context);
        String text = value == null ? null : value.toString();
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(description + ": name '" + name.getExpressionString()
                    + "' evaluated to " + (text == null ? "null" : "a blank string") + ", not a lock name");
        }
        return text;
    }

    /** The lock this method takes under {@code lockName}: the shared or the exclusive one. */
    RelockLock lock(RelockClient client, String lockName) {
        return shared ? client.readWriteLock(lockName).readLock() : client.lock(lockName);
    }

    /** Tries to take {@code lock} within {@code wait} (what is left of this method's), with its lease if it has one. */
    boolean tryLock(RelockLock lock, Duration wait) throws InterruptedException {
        return lease == null
                ? lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)
                : lock.tryLock(wait.toMillis(), lease.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Whether the first try on {@code lock} may block the thread that makes it: the starter's auto-configured
     * client, until it has connected, hands out views that are JDK proxies and connect on their first call, within
     * the command timeout; the locks of a connected client (relock-core's own classes) do not connect. A cheap check,
     * made once per call of an asynchronous method.
     */
    static boolean firstTryMayConnect(RelockLock lock) {
        return Proxy.isProxyClass(lock.getClass());
    }

    /** As {@link #tryLock}, for a hold owned by a handle, not by the calling thread. */
    CompletionStage<Optional<LockHandle>> tryAcquireAsync(RelockLock lock, Duration wait) {
        return lease == null ? lock.tryAcquireAsync(wait) : lock.tryAcquireAsync(wait, lease);
    }

    /** A wait of this method's length, starting now: one per call. */
    LockWait startWait() {
        return LockWait.startingNow(wait);
    }

    /**
     * The count of one call of this method, starting now: the tries made on its {@link CountedLock} count as one
     * acquisition, {@code skipped} when they end without the lock and this method skips then. {@link CountedCall#end}
     * it once the call has its outcome.
     */
    CountedCall startCall() {
        return CountedCall.start(whenNotAcquired == WhenNotAcquired.SKIP);
    }

    /** What the call throws when Redis could not be reached to take the lock named {@code lockName} within the wait. */
    RedisUnavailableForLockException unreachable(String lockName, RedisUnavailableException lastFailure) {
        return new RedisUnavailableForLockException(lockName, method, wait, lastFailure);
    }

    /**
     * What the call returns, or throws, when the lock named {@code lockName} was not acquired: for a method with
     * an asynchronous result, a result of that kind (an empty Mono, a completed stage, the fallback's result).
     */
    Object notAcquired(String lockName, Object target, Object[] args) throws Throwable {
        return notAcquired(lockName, target, args, () -> "");
    }

    /**
     * As {@link #notAcquired(String, Object, Object[])}; {@code heldBy} says who holds the lock for the exception's
     * message (" (held by …)", or "" when not known), asked only when the call throws.
     */
    Object notAcquired(String lockName, Object target, Object[] args, Supplier<String> heldBy) throws Throwable {
        switch (whenNotAcquired) {
            case SKIP:
                return emptyResult.get();
            case FALLBACK:
                return AopUtils.invokeJoinpointUsingReflection(target, fallback, args);
            case THROW:
            default:
                throw new LockNotAcquiredException(lockName, method,
                        "was not acquired within " + wait.toMillis() + " ms" + heldBy.get(), null);
        }
    }

    /** Whether the annotated method declares InterruptedException, so it may throw it. */
    boolean declaresInterruptedException() {
        for (Class<?> type : method.getExceptionTypes()) {
            if (type.isAssignableFrom(InterruptedException.class)) {
                return true;
            }
        }
        return false;
    }

    Method method() {
        return method;
    }

    Result result() {
        return result;
    }

    /** The explicit lease, not renewed; null for the client's default lease, renewed. */
    Duration lease() {
        return lease;
    }

    /**
     * How long a method returning {@code type} holds its lock. Asynchronous results are held until they end, if the
     * lock can know when that is: a CompletionStage (declared as CompletionStage or CompletableFuture, the type the
     * interceptor returns), and, with Reactor and relock-reactor present, a Mono, a Flux or a Publisher (resolved
     * by name, through the return type's class loader). Any other {@link Future} or Publisher is refused.
     */
    private static Result resultOf(Class<?> type) {
        if (CompletionStage.class.isAssignableFrom(type)) {
            if (!type.isAssignableFrom(CompletableFuture.class)) {
                throw new IllegalArgumentException("it returns " + type.getName() + "; the lock is held until a "
                        + "CompletionStage completes, but the method must be declared to return CompletionStage or "
                        + "CompletableFuture, which is what a locked call returns");
            }
            return Result.STAGE;
        }
        if (Future.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException("it returns " + type.getName() + ", which tells nobody when its work "
                    + "ends, so the lock would be released before it does; return a CompletableFuture instead");
        }
        ClassLoader loader = type.getClassLoader();
        if (!ClassUtils.isPresent(PUBLISHER, loader)
                || !ClassUtils.resolveClassName(PUBLISHER, loader).isAssignableFrom(type)) {
            return Result.VALUE;
        }
        if (!ClassUtils.isPresent(FLUX, loader)) {
            throw new IllegalArgumentException("it returns " + type.getName() + ", a Publisher; holding a lock until "
                    + "one ends needs Project Reactor (io.projectreactor:reactor-core) on the class path");
        }
        if (!ClassUtils.isPresent(REACTIVE_LOCKS, LockedMethod.class.getClassLoader())) {
            throw new IllegalArgumentException("it returns " + type.getName() + ", a Publisher; holding a lock until "
                    + "one ends needs dev.relock:relock-reactor on the class path");
        }
        if (type == ClassUtils.resolveClassName(MONO, loader)) {
            return Result.MONO;
        }
        if (type.isAssignableFrom(ClassUtils.resolveClassName(FLUX, loader))) {
            return Result.FLUX;
        }
        throw new IllegalArgumentException("it returns " + type.getName() + ", a Publisher the lock cannot stand in "
                + "for: declare Mono, Flux or Publisher");
    }

    /**
     * Registers the types {@link #resultOf} resolves by name, those of them {@code classLoader} has: in a native image
     * a type not registered is absent to a lookup by name, and a Mono result would then pass for a plain value.
     */
    static void registerTypesResolvedByName(ReflectionHints hints, ClassLoader classLoader) {
        for (String typeName : List.of(PUBLISHER, MONO, FLUX, REACTIVE_LOCKS)) {
            hints.registerTypeIfPresent(classLoader, typeName);
        }
    }

    /** What a skipped call returns: an empty result of its kind, or the empty value of a plain type. */
    private static Supplier<Object> emptyResult(Class<?> type, Result result) {
        switch (result) {
            case STAGE:
                return () -> CompletableFuture.completedFuture(null);
            case MONO:
            case FLUX:
                return () -> LockedPublisher.empty(result);
            case VALUE:
            default:
                return EmptyResult.of(type);
        }
    }

    private static Expression parseName(String text, Method method) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        Expression expression = PARSER.parseExpression(text);
        String[] parameterNames = PARAMETER_NAMES.getParameterNames(method);
        Set<String> known = new HashSet<>(Set.of("root", "this"));
        for (int i = 0; i < method.getParameterCount(); i++) {
            known.add("p" + i);
            known.add("a" + i);
            if (parameterNames != null) {
                known.add(parameterNames[i]);
            }
        }
        Set<String> used = new HashSet<>();
        variablesOf(((SpelExpression) expression).getAST(), used);
        used.removeAll(known);
        if (!used.isEmpty()) {
            throw new IllegalArgumentException("name '" + text + "' refers to " + used.stream().sorted().map(v -> "#" + v)
                    .toList() + ", not a parameter of the method" + (parameterNames == null
                    ? " (parameter names are unknown: compile with -parameters, or use #p0, #p1, ...)" : ""));
        }
        return expression;
    }

    private static void variablesOf(SpelNode node, Set<String> into) {
        if (node instanceof VariableReference) {
            into.add(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            variablesOf(node.getChild(i), into);
        }
    }

    private static Duration duration(String text, String attribute, BeanFactory beanFactory) {
        String resolved = text;
        if (beanFactory instanceof ConfigurableBeanFactory configurable) {
            resolved = configurable.resolveEmbeddedValue(text);
        }
        if (resolved == null || resolved.isBlank()) {
            return null;
        }
        try {
            return DurationFormatterUtils.detectAndParse(resolved.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(attribute + " '" + text + "' is not a duration such as 500ms, 2s or PT1M");
        }
    }

    private static Method fallbackMethod(Method method, Class<?> targetClass, String fallbackName) {
        if (fallbackName.isEmpty()) {
            throw new IllegalArgumentException("whenNotAcquired is FALLBACK but no fallback method is named");
        }
        Method fallback = ReflectionUtils.findMethod(targetClass, fallbackName, method.getParameterTypes());
        if (fallback == null) {
            throw new IllegalArgumentException("fallback method " + fallbackName + "(" + parameterTypeNames(method)
                    + ") not found in " + targetClass.getName());
        }
        Class<?> returned = method.getReturnType();
        if (returned != void.class && !ClassUtils.isAssignable(returned, fallback.getReturnType())) {
            throw new IllegalArgumentException("fallback method " + fallbackName + " returns "
                    + fallback.getReturnType().getName() + ", not a " + returned.getName());
        }
        return fallback;
    }

    private static String parameterTypeNames(Method method) {
        StringBuilder names = new StringBuilder();
        for (Class<?> type : method.getParameterTypes()) {
            names.append(names.length() == 0 ? "" : ", ").append(type.getSimpleName());
        }
        return names.toString();
    }
}
