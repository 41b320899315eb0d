package dev.relock.spring.boot;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure an auto-proxy creator exists to apply the {@code @DistributedLock} advisor, even when
 * Boot's AOP auto-configuration is off. One that exists already (Boot's, AspectJ's) is kept.
 */
class AutoProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

    @Override
    public void registerBeanDefinitions(AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
        AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }
}
