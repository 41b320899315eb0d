package dev.relock.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One Redisson release line (3.x or 4.x) loaded from a directory of jars into a class loader of its
 * own, whose parent is the platform loader: it sees its own Netty, Reactor and SLF4J and nothing of
 * the harness, so 3.x and 4.x run side by side in this JVM although they share package names.
 *
 * <p>It is driven by reflection only at set-up ({@code Config}, {@code Redisson.create},
 * {@code getLock}); the locks it returns are {@code java.util.concurrent.locks.Lock}s (RLock extends
 * it, and java.* is shared by every loader), so the measured calls are plain interface calls.
 */
final class RedissonLine {

    private static final Pattern JAR = Pattern.compile("redisson-(\\d+\\.\\d+\\.\\d+)\\.jar");

    private final String version;
    private final URLClassLoader loader;
    private final Class<?> configClass;
    private final Class<?> clientInterface;
    private final Method create;

    private RedissonLine(String version, URLClassLoader loader) throws ReflectiveOperationException {
        this.version = version;
        this.loader = loader;
        this.configClass = loader.loadClass("org.redisson.config.Config");
        this.clientInterface = loader.loadClass("org.redisson.api.RedissonClient");
        this.create = loader.loadClass("org.redisson.Redisson").getMethod("create", configClass);
    }

    /**
     * Loads the jars in {@code libDirectory} (as copied by the redisson-N modules).
     *
     * @throws IllegalStateException if the directory holds no redisson-X.Y.Z.jar
     */
    static RedissonLine load(Path libDirectory) {
        List<URL> urls = new ArrayList<>();
        String version = null;
        try (Stream<Path> files = Files.list(libDirectory)) {
            for (Path jar : files.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                urls.add(jar.toUri().toURL());
                Matcher matcher = JAR.matcher(jar.getFileName().toString());
                if (matcher.matches()) {
                    version = matcher.group(1);
                }
            }
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list Redisson jars in " + libDirectory
                    + " (build relock-bench first: mvn -pl relock-bench/harness -am package)", e);
        }
        if (version == null) {
            throw new IllegalStateException("no redisson-X.Y.Z.jar in " + libDirectory);
        }
        URLClassLoader loader = new URLClassLoader("redisson-" + version, urls.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader());
        try {
            return new RedissonLine(version, loader);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Redisson " + version + " in " + libDirectory + " is not usable", e);
        }
    }

    String version() {
        return version;
    }

    /** The major version, 3 or 4. */
    int major() {
        return Integer.parseInt(version.substring(0, version.indexOf('.')));
    }

    /**
     * Creates a client with Redisson's defaults except the address and, when given, the watchdog
     * timeout (the lease that the watchdog renews every third of).
     */
    Object createClient(String redisUri, Duration watchdogLease) throws ReflectiveOperationException {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            Object config = configClass.getConstructor().newInstance();
            Object server = configClass.getMethod("useSingleServer").invoke(config);
            server.getClass().getMethod("setAddress", String.class).invoke(server, redisUri);
            if (watchdogLease != null) {
                configClass.getMethod("setLockWatchdogTimeout", long.class).invoke(config, watchdogLease.toMillis());
            }
            return create.invoke(null, config);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("Redisson " + version + " did not start: " + e.getCause(), e.getCause());
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** {@code client.<factory>(name)}, e.g. getLock, getFairLock, getFencedLock. */
    Lock lock(Object client, String factory, String name) {
        try {
            return (Lock) clientInterface.getMethod(factory, String.class).invoke(client, name);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(factory + "(" + name + ") failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code client.getReadWriteLock(name)}: an RReadWriteLock, which is a java.util ReadWriteLock. */
    ReadWriteLock readWriteLock(Object client, String name) {
        try {
            return (ReadWriteLock) clientInterface.getMethod("getReadWriteLock", String.class).invoke(client, name);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("getReadWriteLock(" + name + ") failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether this line still ships {@code org.redisson.RedissonRedLock} (deprecated since 3.x). */
    boolean hasRedLock() {
        try {
            loader.loadClass("org.redisson.RedissonRedLock");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /**
     * {@code new RedissonRedLock(locks)}: one RLock per independent server, each from that server's
     * own client.
     *
     * @throws IllegalStateException if this line has no RedissonRedLock
     */
    Lock redLock(List<Lock> locks) {
        try {
            Class<?> rlock = loader.loadClass("org.redisson.api.RLock");
            Object array = Array.newInstance(rlock, locks.size());
            for (int i = 0; i < locks.size(); i++) {
                Array.set(array, i, locks.get(i));
            }
            return (Lock) loader.loadClass("org.redisson.RedissonRedLock").getConstructor(array.getClass())
                    .newInstance(array);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("Redisson " + version + " ships no org.redisson.RedissonRedLock", e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("new RedissonRedLock failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    void shutdown(Object client) {
        try {
            clientInterface.getMethod("shutdown").invoke(client);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Redisson " + version + " shutdown failed", e);
        }
    }
}
