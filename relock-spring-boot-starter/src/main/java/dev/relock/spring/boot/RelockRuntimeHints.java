package dev.relock.spring.boot;

import dev.relock.RelockClient;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;

/**
 * What an application compiled ahead of time (Spring AOT, a GraalVM native image) needs of relock beyond what Spring
 * finds in its bean definitions: the Lua scripts relock-core reads by name from its jar; the JDK proxies
 * {@link LazyRelockClient} makes of the client and of its views, whose methods it calls on the real ones by
 * reflection; and the {@code spring.data.redis.*} settings, which {@link SpringDataRedisSettings} binds by
 * reflection. Registered by {@link RelockAutoConfiguration}, so only where it applies. The {@code @DistributedLock}
 * methods of an application's beans are hinted bean by bean, by {@code DistributedLockAotProcessor}.
 */
class RelockRuntimeHints implements RuntimeHintsRegistrar {

    /** Every Lua script of relock-core, in whichever package: each engine's, the preludes they use, the fence's. */
    static final String SCRIPTS = "dev/relock/**/*.lua";

    @Override
    public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
        hints.resources().registerPattern(SCRIPTS);
        Set<Class<?>> proxied = new LinkedHashSet<>();
        proxied.add(RelockClient.class);
        proxied.addAll(LazyRelockClient.VIEWS);
        for (Class<?> type : proxied) {
            hints.proxies().registerJdkProxy(type);
            hints.reflection().registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
        }
        BindableRuntimeHintsRegistrar.forTypes(SpringDataRedisSettings.class).registerHints(hints, classLoader);
    }
}
