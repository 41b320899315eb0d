package dev.relock.cli;

/**
 * Log levels of the library and of Lettuce/Netty, which log through slf4j-simple to stderr. A
 * command line reports failures itself, one line each, so by default only errors get through;
 * with {@code --verbose} the library's own debug lines and everyone's warnings show too.
 *
 * <p>slf4j-simple reads these properties when it creates its first logger, so this must run
 * before the first Redis client is built (nothing earlier logs).
 */
final class Logging {

    private static final String PREFIX = "org.slf4j.simpleLogger.";

    static void configure(boolean verbose) {
        setIfAbsent(PREFIX + "defaultLogLevel", verbose ? "info" : "error");
        if (verbose) {
            setIfAbsent(PREFIX + "log.dev.relock", "debug");
            setIfAbsent(PREFIX + "showDateTime", "true");
            setIfAbsent(PREFIX + "dateTimeFormat", "HH:mm:ss.SSS");
        }
        setIfAbsent(PREFIX + "showShortLogName", "true");
    }

    /** A -D on the command line wins, so a user can still turn on one logger. */
    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private Logging() {}
}
