package dev.relock.spring.boot;

import dev.relock.RelockClientBuilder;

/**
 * A bean that adjusts the builder of the auto-configured {@link dev.relock.RelockClient} after the
 * properties were applied, in {@link org.springframework.core.annotation.Order} order.
 */
@FunctionalInterface
public interface RelockClientBuilderCustomizer {

    /** Adjusts {@code builder}; called once, before the client is built. */
    void customize(RelockClientBuilder builder);
}
