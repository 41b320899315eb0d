package dev.relock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/** What {@code relock --version} prints: the version the build wrote into version.properties. */
final class VersionProvider implements CommandLine.IVersionProvider {

    @Override
    public String[] getVersion() {
        return new String[] {"relock " + version()};
    }

    /** The project's version, as the build filtered it into the resource. */
    static String version() {
        Properties properties = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties is missing from relock's CLI jar");
            }
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("reading relock's version.properties", e);
        }
        return properties.getProperty("version");
    }
}
