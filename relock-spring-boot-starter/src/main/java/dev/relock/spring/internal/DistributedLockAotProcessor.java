package dev.relock.spring.internal;

import dev.relock.spring.DistributedLock;
import dev.relock.spring.DistributedLock.WhenNotAcquired;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The reflection that the {@link DistributedLock} methods of one bean class need in a native image, found when Spring
 * AOT processes the bean (registered in {@code META-INF/spring/aot.factories}): each such method, which the advisor
 * calls on the target by reflection, and its declarations in the interfaces the class implements (an interface
 * proxy calls through those); its fallback method; the properties of {@link LockNameRoot}, which name expressions
 * read; the Reactor types {@link LockedMethod} looks up by name; and what {@link EmptyResult} makes by reflection for
 * a skipped call. A bean class without such methods contributes nothing.
 *
 * <p>Found as {@link LockedMethods} finds them at run time: on the class's own methods, inherited ones included, with
 * the annotation on the method or on a method it overrides or implements. The annotation is not checked here: that
 * happens at start-up, where a bad one stops the application with a message naming the method.
 */
final class DistributedLockAotProcessor implements BeanRegistrationAotProcessor {

    @Override
    public BeanRegistrationAotContribution processAheadOfTime(RegisteredBean bean) {
        Class<?> beanClass = bean.getBeanClass();
        Map<Method, DistributedLock> locked = lockedMethodsOf(beanClass);
        if (locked.isEmpty()) {
            return null;
        }
        return (generationContext, code) -> register(generationContext.getRuntimeHints().reflection(), beanClass,
                locked);
    }

    private static Map<Method, DistributedLock> lockedMethodsOf(Class<?> beanClass) {
        Map<Method, DistributedLock> locked = new LinkedHashMap<>();
        Method[] methods = ReflectionUtils.getUniqueDeclaredMethods(beanClass, ReflectionUtils.USER_DECLARED_METHODS);
        for (Method method : methods) {
            DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
            if (annotation != null) {
                locked.put(method, annotation);
            }
        }
        return locked;
    }

    private static void register(ReflectionHints hints, Class<?> beanClass, Map<Method, DistributedLock> locked) {
        hints.registerType(LockNameRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        LockedMethod.registerTypesResolvedByName(hints, beanClass.getClassLoader());
        locked.forEach((method, annotation) -> {
            hints.registerMethod(method, ExecutableMode.INVOKE);
            for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(beanClass)) {
                Method declared = ReflectionUtils.findMethod(type, method.getName(), method.getParameterTypes());
                if (declared != null) {
                    hints.registerMethod(declared, ExecutableMode.INVOKE);
                }
            }
            if (annotation.whenNotAcquired() == WhenNotAcquired.FALLBACK) {
                // one not found is left to the start-up check, which names it
                Method fallback = ReflectionUtils.findMethod(beanClass, annotation.fallback(), method.getParameterTypes());
                if (fallback != null) {
                    hints.registerMethod(fallback, ExecutableMode.INVOKE);
                }
            } else if (annotation.whenNotAcquired() == WhenNotAcquired.SKIP) {
                EmptyResult.registerHints(hints, method.getReturnType());
            }
        });
    }
}
