package dev.relock.spring.internal;

import dev.relock.RelockClient;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.core.Ordered;

/**
 * The Spring AOP advisor that applies {@link dev.relock.spring.DistributedLock}: matches the
 * annotated methods (checking each annotation as its bean is created) and runs them under their
 * lock. Ordered {@link #ORDER}, before (outside) advisors of default order such as transactions.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor implements BeanFactoryAware {

    /** Runs before advisors of default (lowest) order, e.g. the transaction advisor. */
    public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

    private final LockedMethods lockedMethods = new LockedMethods();
    private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return lockedMethods.find(method, targetClass).isPresent();
        }
    };
    private final transient DistributedLockInterceptor interceptor;

    /**
     * @param client gives the client to take locks with; asked on each call, so that creating the
     *     advisor, early in the context's life, does not create the client
     */
    public DistributedLockAdvisor(Supplier<RelockClient> client) {
        this.interceptor = new DistributedLockInterceptor(lockedMethods, client);
        setOrder(ORDER);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        lockedMethods.setBeanFactory(beanFactory);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}
