package dev.relock.cli;

/** {@code relock}: the command line. Exit codes are those of {@link ExitCodes}. */
public final class Main {

    public static void main(String[] args) {
        quietLibraries();
        System.exit(run(args));
    }

    /** Runs one command line and returns its exit code (for tests and the launcher). */
    public static int run(String... args) {
        String[] ordered = RelockCommand.commandFirst(args);
        return RelockCommand.commandLine(ordered).execute(ordered);
    }

    /**
     * Settings of Lettuce and Netty for a short-lived command: read when their classes initialise,
     * so set before anything connects; a -D on the java command line wins.
     */
    private static void quietLibraries() {
        // Lettuce's JFR events load JFR (slow to start, and never in a CDS archive); nobody records them here
        setIfAbsent("io.lettuce.core.jfr", "false");
        // on JDK 24+ Netty's use of sun.misc.Unsafe prints a deprecation warning to stderr at every run;
        // a CLI that moves a few hundred bytes does not need it
        setIfAbsent("io.netty.noUnsafe", "true");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private Main() {}
}
