package dev.relock.cli.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What the build recorded for the demo's private redis-server in {@code demo-redis.properties}: the file name of
 * the fixture jar it put in {@code demo/}, and the embedded-redis version it was built with and that jar's SHA-256.
 */
record DemoArtifacts(String fixtureJar, String embeddedRedisVersion, String embeddedRedisSha256) {

    private static final String RESOURCE = "demo-redis.properties";

    /** The values of this build. */
    static DemoArtifacts ofThisBuild() {
        Properties properties = new Properties();
        try (InputStream in = DemoArtifacts.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the command line's jar");
            }
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
        return new DemoArtifacts(required(properties, "fixture.jar"), required(properties, "embedded-redis.version"),
                required(properties, "embedded-redis.sha256"));
    }

    private static String required(Properties properties, String key) {
        String value = properties.getProperty(key, "").trim();
        if (value.isEmpty() || value.contains("${")) {
            throw new IllegalStateException(RESOURCE + " has no " + key + " (was the jar built by Maven?)");
        }
        return value;
    }
}
