package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.relock.testredis.RedisServer;
import java.io.File;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * relock-core on a module path: module {@code dev.relock} resolves with only its runtime dependencies (Lettuce, Netty,
 * Reactor, SLF4J; no Micrometer) in a layer of its own, takes and releases a lock through the exported API, and does
 * not export its internals. Calls go through the API interfaces of that layer by method handles, as a module that
 * {@code requires dev.relock} would make them.
 */
@Tag("redis")
class ModulePathTest {

    // the jars of the module's runtime dependencies, by file name; Micrometer (optional) is left out
    private static final List<String> RUNTIME_JARS = List.of("lettuce-core-", "netty-", "reactor-core-",
            "reactive-streams-", "slf4j-api-");

    @Test
    void aLockIsTakenAndReleasedOnAModulePath() throws Throwable {
        ModuleLayer layer = relockLayer();
        Module relock = layer.findModule("dev.relock").orElseThrow();
        assertThat(relock.getDescriptor().isAutomatic()).isFalse();
        assertThat(layer.findModule("micrometer.core")).isEmpty();
        assertThat(relock.isExported("dev.relock.internal.engine")).isFalse();

        ClassLoader loader = layer.findLoader("dev.relock");
        Class<?> clientType = loader.loadClass("dev.relock.RelockClient");
        Class<?> builderType = loader.loadClass("dev.relock.RelockClientBuilder");
        Class<?> lockType = loader.loadClass("dev.relock.RelockLock");
        assertThat(clientType.getModule()).isSameAs(relock);

        // method handles, not Class.getMethod: that resolves every method of the type, the builder's taking
        // Micrometer's types among them, which this layer does not have (as an application without Micrometer)
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        // as in an application started from that module path: Lettuce looks its optional classes up through the
        // context class loader, and finds the test's class path's otherwise
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        try (RedisServer redis = RedisServer.start()) {
            // after the fixture's start, whose own Lettuce is the class path's
            thread.setContextClassLoader(loader);
            Object builder = lookup.findStatic(clientType, "builder", MethodType.methodType(builderType)).invoke();
            lookup.findVirtual(builderType, "redisUri", MethodType.methodType(builderType, String.class))
                    .invoke(builder, redis.uri());
            Object client = lookup.findVirtual(builderType, "build", MethodType.methodType(clientType)).invoke(builder);
            try (AutoCloseable closing = (AutoCloseable) client) {
                Object lock = lookup.findVirtual(clientType, "lock", MethodType.methodType(lockType, String.class))
                        .invoke(client, "on-a-module-path");
                assertThat(call(lookup, lockType, "tryLock", lock)).isEqualTo(true);
                assertThat(call(lookup, lockType, "isHeldByCurrentThread", lock)).isEqualTo(true);
                lookup.findVirtual(lockType, "unlock", MethodType.methodType(void.class)).invoke(lock);
                assertThat(call(lookup, lockType, "isLocked", lock)).isEqualTo(false);

                // the client's class lives in an internal package, which the module does not export
                Class<?> engineClient = client.getClass();
                assertThat(engineClient.getPackageName()).startsWith("dev.relock.internal.");
                assertThatThrownBy(() -> lookup.findVirtual(engineClient, "clientId",
                        MethodType.methodType(String.class))).isInstanceOf(IllegalAccessException.class);
            }
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static Object call(MethodHandles.Lookup lookup, Class<?> type, String booleanMethod, Object target)
            throws Throwable {
        return lookup.findVirtual(type, booleanMethod, MethodType.methodType(boolean.class)).invoke(target);
    }

    /** A layer over the boot layer with dev.relock and its runtime dependencies, on the platform class loader. */
    private static ModuleLayer relockLayer() {
        List<Path> path = new ArrayList<>(List.of(ModuleDescriptorTest.codeSource()));
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String file = Path.of(entry).getFileName().toString();
            if (file.endsWith(".jar") && RUNTIME_JARS.stream().anyMatch(file::startsWith)) {
                path.add(Path.of(entry));
            }
        }
        ModuleFinder finder = ModuleFinder.of(path.toArray(Path[]::new));
        Configuration configuration = ModuleLayer.boot().configuration()
                .resolve(finder, ModuleFinder.of(), Set.of("dev.relock"));
        return ModuleLayer.boot().defineModulesWithOneLoader(configuration, ClassLoader.getPlatformClassLoader());
    }
}
