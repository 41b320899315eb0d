package dev.relock.spring.internal;

import dev.relock.RelockClient;
import dev.relock.RelockLock;
import dev.relock.spring.DistributedLock;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import dev.relock.spring.InvalidDistributedLockException;
import dev.relock.spring.LockNotAcquiredException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.springframework.aop.support.AopUtils;
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
 * created: its name expression, wait, lease, lock kind and what to do when the lock is taken.
 * Immutable; used by any number of threads.
 */
final class LockedMethod {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();
    private static final Set<String> ASYNC_TYPE_NAMES = Set.of(
            Future.class.getName(), CompletionStage.class.getName(), "org.reactivestreams.Publisher");

    private final Method method;
    private final String description;
    private final Expression name;
    private final Duration wait;
    private final Duration lease;
    private final boolean shared;
    private final WhenNotAcquired whenNotAcquired;
    private final Method fallback;
    private final Supplier<Object> emptyResult;

    private LockedMethod(Method method, String description, Expression name, Duration wait, Duration lease,
            boolean shared, WhenNotAcquired whenNotAcquired, Method fallback, Supplier<Object> emptyResult) {
        this.method = method;
        this.description = description;
        this.name = name;
        this.wait = wait;
        this.lease = lease;
        this.shared = shared;
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
            rejectAsyncReturnType(method.getReturnType());
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
            Supplier<Object> emptyResult = when == WhenNotAcquired.SKIP ? EmptyResult.of(method.getReturnType()) : null;
            return new LockedMethod(method, description, name, wait, lease, annotation.shared(), when, fallback,
                    emptyResult);
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

    /** Tries to take {@code lock} within this method's wait, with its lease if it has one. */
    boolean tryLock(RelockLock lock) throws InterruptedException {
        return lease == null
                ? lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)
                : lock.tryLock(wait.toMillis(), lease.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** What the call returns, or throws, when the lock named {@code lockName} was not acquired. */
    Object notAcquired(String lockName, Object target, Object[] args) throws Throwable {
        switch (whenNotAcquired) {
            case SKIP:
                return emptyResult.get();
            case FALLBACK:
                return AopUtils.invokeJoinpointUsingReflection(target, fallback, args);
            case THROW:
            default:
                throw new LockNotAcquiredException(lockName, method, "was not acquired within " + wait.toMillis() + " ms", null);
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

    /**
     * Refuses a return type that is, directly or through any supertype, one of {@link #ASYNC_TYPE_NAMES}, each
     * resolved by the return type's class loader, where it is present (a Publisher is only with Reactive Streams).
     */
    private static void rejectAsyncReturnType(Class<?> type) {
        ClassLoader loader = type.getClassLoader();
        for (String asyncTypeName : ASYNC_TYPE_NAMES) {
            if (ClassUtils.isPresent(asyncTypeName, loader)
                    && ClassUtils.resolveClassName(asyncTypeName, loader).isAssignableFrom(type)) {
                throw new IllegalArgumentException("it returns " + type.getName() + ", whose work may go on after "
                        + "the method returns and the lock is released; lock inside the asynchronous work instead");
            }
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
