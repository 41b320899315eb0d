package dev.relock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.joran.spi.JoranException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/**
 * The README's Logback note: Logback with no configuration file logs everything at DEBUG (spring-boot's jar,
 * when it is on the class path, sets the root level to INFO instead), and the README's {@code logback.xml} keeps
 * Lettuce and Netty at INFO while relock's WARNs still show. Each test configures a
 * {@link LoggerContext} of its own, never the one the other tests log to. Logback is on this module's test class
 * path through spring-boot-starter-test.
 */
class LogbackConfigurationTest {

    @Test
    void withoutAConfigurationFileLogbackLogsEverythingAtDebugUnlessSpringBootIsOnTheClassPath() throws JoranException {
        ClassLoader withoutBoot = new ClassLoader(getClass().getClassLoader()) {
            @Override
            public Enumeration<URL> getResources(String name) throws IOException {
                List<URL> found = Collections.list(super.getResources(name));
                found.removeIf(url -> url.toString().contains("spring-boot"));
                return Collections.enumeration(found);
            }
        };
        assertThat(rootLevelAfterAutoConfiguration(withoutBoot)).as("Logback alone").isEqualTo(Level.DEBUG);
        assertThat(rootLevelAfterAutoConfiguration(getClass().getClassLoader()))
                .as("with spring-boot's jar, whose Logback configurator sets the root level").isEqualTo(Level.INFO);
    }

    @Test
    void theReadmesLogbackXmlKeepsLettuceAndNettyAtInfoAndRelocksWarningsOn() throws IOException, JoranException {
        LoggerContext context = new LoggerContext();
        try {
            JoranConfigurator configurator = new JoranConfigurator();
            configurator.setContext(context);
            configurator.doConfigure(new ByteArrayInputStream(readmeLogbackXml().getBytes(StandardCharsets.UTF_8)));

            for (String name : List.of("io.lettuce.core.protocol.CommandHandler", "io.netty.util.internal.PlatformDependent",
                    "dev.relock.internal.lease.LeaseKeeper")) {
                Logger logger = context.getLogger(name);
                assertThat(logger.isDebugEnabled()).as("DEBUG of %s", name).isFalse();
                assertThat(logger.isInfoEnabled()).as("INFO of %s", name).isTrue();
            }
            assertThat(context.getLogger("dev.relock.internal.lease.LeaseKeeper").isWarnEnabled()).isTrue();
        } finally {
            context.stop();
        }
    }

    /** The root logger's level of a fresh context that Logback configured as it does at start, with no file. */
    private static Level rootLevelAfterAutoConfiguration(ClassLoader classLoader) throws JoranException {
        LoggerContext context = new LoggerContext();
        try {
            new ContextInitializer(context).autoConfig(classLoader);
            return context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel();
        } finally {
            context.stop();
        }
    }

    /** The README's block from the line {@code <configuration>} to {@code </configuration>}. */
    private static String readmeLogbackXml() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("").toAbsolutePath().resolve("../README.md"), StandardCharsets.UTF_8);
        int begin = lines.indexOf("<configuration>");
        int end = lines.indexOf("</configuration>");
        assertThat(begin).as("a line <configuration> in the README").isNotNegative();
        assertThat(end).as("a line </configuration> after it").isGreaterThan(begin);
        return String.join("\n", lines.subList(begin, end + 1));
    }
}
