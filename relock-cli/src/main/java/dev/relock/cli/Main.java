package dev.relock.cli;

import picocli.CommandLine;

/** {@code relock}: the command line. Exit codes are those of {@link ExitCodes}. */
public final class Main {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs one command line and returns its exit code (for tests and the launcher). */
    public static int run(String... args) {
        return RelockCommand.commandLine().execute(args);
    }

    private Main() {}
}
