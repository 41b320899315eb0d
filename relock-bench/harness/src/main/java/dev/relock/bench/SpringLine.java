package dev.relock.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Lock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One Spring Integration release line (the 6.5 of Spring Boot 3.5 applications) loaded from a directory of jars
 * into a class loader of its own, whose parent is the platform loader: its Spring Framework, Spring Data Redis and
 * Lettuce are its own, so it runs in this JVM beside the Spring Integration 7 on the harness's class path.
 *
 * <p>Driven by reflection only at set-up ({@code LettuceConnectionFactory}, {@code RedisLockRegistry},
 * {@code setRedisLockType}, {@code obtain}); the registry's locks are {@code java.util.concurrent.locks.Lock}s, so
 * the measured calls are plain interface calls.
 *
 * <p>Its Lettuce finds the classes of its JFR events through the thread's context class loader whenever a connection
 * opens or closes; under the harness's loader it would find the harness's Lettuce and fail. So set-up and close run
 * under this line's loader, set-up opens the shared connection at once, and the harness's workers run under the
 * loader of their lock's class ({@link Loops#started(String, Object, Runnable)}), as for a PUB_SUB registry's
 * subscription, which opens at the first wait.
 */
final class SpringLine {

    private static final Pattern JAR = Pattern.compile("(.+?)-(\\d+(?:\\.\\d+)+(?:[.-][A-Za-z0-9]+)*)\\.jar");
    private static final String CONNECTION = "org.springframework.data.redis.connection.";

    private final URLClassLoader loader;
    /** artifact id to version, from the jars' file names */
    private final Map<String, String> versions;

    private SpringLine(URLClassLoader loader, Map<String, String> versions) {
        this.loader = loader;
        this.versions = versions;
    }

    /**
     * Loads the jars in {@code libDirectory} (as copied by relock-bench/spring-integration-6).
     *
     * @throws IllegalStateException if the directory holds no spring-integration-redis-X.Y.Z.jar
     */
    static SpringLine load(Path libDirectory) {
        List<URL> urls = new ArrayList<>();
        Map<String, String> versions = new HashMap<>();
        try (Stream<Path> files = Files.list(libDirectory)) {
            for (Path jar : files.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                urls.add(jar.toUri().toURL());
                Matcher matcher = JAR.matcher(jar.getFileName().toString());
                if (matcher.matches()) {
                    versions.put(matcher.group(1), matcher.group(2));
                }
            }
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list Spring Integration jars in " + libDirectory
                    + " (build relock-bench first: mvn -pl relock-bench/harness -am package)", e);
        }
        String version = versions.get("spring-integration-redis");
        if (version == null) {
            throw new IllegalStateException("no spring-integration-redis-X.Y.Z.jar in " + libDirectory);
        }
        return new SpringLine(new URLClassLoader("spring-integration-" + version, urls.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader()), Map.copyOf(versions));
    }

    /** The version of spring-integration-redis. */
    String version() {
        return versionOf("spring-integration-redis");
    }

    /** The version of one of the line's jars by artifact id, e.g. {@code spring-data-redis}; "?" if absent. */
    String versionOf(String artifactId) {
        return versions.getOrDefault(artifactId, "?");
    }

    /** A connection factory and a RedisLockRegistry on it, as one client of a subject; {@link #close} ends both. */
    private final class Registry implements Subject.Client {

        private final Object factory;
        private final Object registry;
        private final Object scheduler;
        private final Method obtain;

        private Registry(Object factory, Object registry, Object scheduler) throws NoSuchMethodException {
            this.factory = factory;
            this.registry = registry;
            this.scheduler = scheduler;
            this.obtain = registry.getClass().getMethod("obtain", Object.class);
        }

        /** {@code registry.obtain(name)} */
        @Override
        public Lock lock(String name) {
            try {
                return (Lock) obtain.invoke(registry, name);
            } catch (InvocationTargetException e) {
                throw new IllegalStateException("obtain(" + name + ") failed: " + e.getCause(), e.getCause());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(loader);
            try {
                registry.getClass().getMethod("destroy").invoke(registry);
                if (scheduler != null) {
                    scheduler.getClass().getMethod("shutdown").invoke(scheduler);
                }
                factory.getClass().getMethod("destroy").invoke(factory);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("Spring Integration " + version() + " did not close", e);
            } finally {
                thread.setContextClassLoader(previous);
            }
        }
    }

    /**
     * A started LettuceConnectionFactory on {@code redisUri} and a RedisLockRegistry of {@code lockType}
     * ({@code SPIN_LOCK} or {@code PUB_SUB_LOCK}) on it: with the registry's defaults (60 s expiry, no renewal) when
     * {@code lease} is null, else expiring after {@code lease} and renewed on a one-thread ThreadPoolTaskScheduler.
     */
    Subject.Client connect(String redisUri, String registryKey, String lockType, Duration lease)
            throws ReflectiveOperationException {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        Object factory = null;
        try {
            URI uri = URI.create(redisUri);
            Class<?> standalone = loader.loadClass(CONNECTION + "RedisStandaloneConfiguration");
            Class<?> factoryClass = loader.loadClass(CONNECTION + "lettuce.LettuceConnectionFactory");
            Object configuration = standalone.getConstructor(String.class, int.class)
                    .newInstance(uri.getHost(), uri.getPort());
            factory = factoryClass.getConstructor(standalone).newInstance(configuration);
            factoryClass.getMethod("afterPropertiesSet").invoke(factory);
            factoryClass.getMethod("start").invoke(factory);
            Object shared = factoryClass.getMethod("getConnection").invoke(factory); // opens the shared connection
            shared.getClass().getMethod("close").invoke(shared); // gives back the wrapper; the connection stays open
            Object registry = newRegistry(factory, registryKey, lease);
            setLockType(registry, lockType);
            Object scheduler = null;
            if (lease != null) {
                scheduler = renewalScheduler();
                registry.getClass().getMethod("setRenewalTaskScheduler",
                        loader.loadClass("org.springframework.scheduling.TaskScheduler")).invoke(registry, scheduler);
            }
            return new Registry(factory, registry, scheduler);
        } catch (InvocationTargetException e) {
            destroyQuietly(factory);
            throw new IllegalStateException("Spring Integration " + version() + " did not start: " + e.getCause(),
                    e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            destroyQuietly(factory);
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private Object newRegistry(Object factory, String registryKey, Duration lease) throws ReflectiveOperationException {
        Class<?> registryClass = loader.loadClass("org.springframework.integration.redis.util.RedisLockRegistry");
        Class<?> factoryType = loader.loadClass(CONNECTION + "RedisConnectionFactory");
        if (lease == null) {
            return registryClass.getConstructor(factoryType, String.class).newInstance(factory, registryKey);
        }
        // 6.x takes the expiry in milliseconds, 7.x as a Duration
        for (Constructor<?> constructor : registryClass.getConstructors()) {
            Class<?>[] types = constructor.getParameterTypes();
            if (types.length == 3 && types[2] == long.class) {
                return constructor.newInstance(factory, registryKey, lease.toMillis());
            }
            if (types.length == 3 && types[2] == Duration.class) {
                return constructor.newInstance(factory, registryKey, lease);
            }
        }
        throw new NoSuchMethodException("RedisLockRegistry " + version() + " has no constructor with an expiry");
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void setLockType(Object registry, String lockType) throws ReflectiveOperationException {
        Class<? extends Enum> type = (Class<? extends Enum>) loader.loadClass(
                "org.springframework.integration.redis.util.RedisLockRegistry$RedisLockType");
        registry.getClass().getMethod("setRedisLockType", type).invoke(registry, Enum.valueOf(type, lockType));
    }

    private Object renewalScheduler() throws ReflectiveOperationException {
        Class<?> schedulerClass = loader.loadClass("org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler");
        Object scheduler = schedulerClass.getConstructor().newInstance();
        schedulerClass.getMethod("setPoolSize", int.class).invoke(scheduler, 1);
        schedulerClass.getMethod("setThreadNamePrefix", String.class).invoke(scheduler,
                "spring" + version() + "-lock-renewal-");
        schedulerClass.getMethod("setDaemon", boolean.class).invoke(scheduler, true);
        schedulerClass.getMethod("initialize").invoke(scheduler);
        return scheduler;
    }

    private static void destroyQuietly(Object factory) {
        if (factory == null) {
            return;
        }
        try {
            factory.getClass().getMethod("destroy").invoke(factory);
        } catch (ReflectiveOperationException | RuntimeException e) {
            // the failure that led here is the one reported
        }
    }
}
