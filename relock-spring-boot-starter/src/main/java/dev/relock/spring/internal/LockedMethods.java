package dev.relock.spring.internal;

import dev.relock.spring.DistributedLock;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The {@link DistributedLock} methods seen so far, per method and bean class.
 *
 * <p>The auto-proxy creator asks {@link #find} for every method of every bean class while it
 * creates the beans, so a bad annotation fails the bean's creation at start-up; the interceptor
 * asks again on each call and finds the entry made then. Entries are never removed. The bean
 * factory is set once, before the first bean is proxied.
 */
final class LockedMethods {

    private final ConcurrentMap<MethodClassKey, Optional<LockedMethod>> byMethod = new ConcurrentHashMap<>();
    private volatile BeanFactory beanFactory;

    void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    BeanFactory beanFactory() {
        return beanFactory;
    }

    /**
     * The checked annotation of {@code method} as called on a bean of {@code targetClass}, or empty
     * if it has none. The annotation may sit on the class's method or on an interface it implements.
     *
     * @throws dev.relock.spring.InvalidDistributedLockException naming the method if its annotation is not valid
     */
    Optional<LockedMethod> find(Method method, Class<?> targetClass) {
        return byMethod.computeIfAbsent(new MethodClassKey(method, targetClass), key -> parse(method, targetClass));
    }

    private Optional<LockedMethod> parse(Method method, Class<?> targetClass) {
        Class<?> declaring = targetClass != null ? targetClass : method.getDeclaringClass();
        Method specific = BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, declaring));
        DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
        if (annotation == null) {
            return Optional.empty();
        }
        return Optional.of(LockedMethod.of(specific, declaring, annotation, beanFactory));
    }
}
