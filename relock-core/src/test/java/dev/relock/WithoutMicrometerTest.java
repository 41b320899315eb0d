package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is optional: relock-core, builder included, loads and works in a class loader that
 * has every jar of the test class path except Micrometer's. (relock-cli, which depends on core
 * without Micrometer, shows the same with its own tests.)
 */
@Tag("redis")
class WithoutMicrometerTest extends OneServerTestBase {

    /** Runs in the class loader without Micrometer; plain calls, no reflection on relock's classes. */
    public static final class LockWithoutMicrometer implements Function<String, String> {

        @Override
        public String apply(String redisUri) {
            try (RelockClient client = RelockClient.builder()
                    .redisUri(redisUri)
                    .metricsGroup(name -> "group")
                    .build()) {
                RelockLock lock = client.lock("without-micrometer");
                if (!lock.tryLock()) {
                    return "not acquired";
                }
                String held = client.heldLocks().get(0).name();
                client.ping();
                lock.unlock();
                return held + " " + client.heldLocks().size();
            }
        }
    }

    @Test
    void relockCoreWorksWithoutMicrometerOnTheClassPath() throws Exception {
        List<URL> classPath = new ArrayList<>();
        int left = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.contains(File.separator + "io" + File.separator + "micrometer" + File.separator)) {
                left++;
            } else {
                classPath.add(url(entry));
            }
        }
        assertThat(left).as("Micrometer jars found and left out of " + classPath).isGreaterThanOrEqualTo(2);
        // parent: the platform loader, so nothing of the test's own class path is visible but these
        try (URLClassLoader withoutMicrometer = new URLClassLoader(classPath.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false,
                    withoutMicrometer)).isInstanceOf(ClassNotFoundException.class);
            Class<?> user = Class.forName(LockWithoutMicrometer.class.getName(), true, withoutMicrometer);
            assertThat(user.getClassLoader()).isSameAs(withoutMicrometer);
            @SuppressWarnings("unchecked")
            Function<String, String> run = (Function<String, String>) user.getConstructor().newInstance();

            // as in an application started from that class path (Lettuce looks up classes through it)
            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(withoutMicrometer);
            try {
                assertThat(run.apply(redis.uri())).isEqualTo("without-micrometer 0");
            } finally {
                thread.setContextClassLoader(previous);
            }
        }
    }

    private static URL url(String entry) {
        try {
            return Path.of(entry).toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(entry, e);
        }
    }
}
