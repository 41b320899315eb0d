package dev.relock.cli;

import dev.relock.RedisUnavailableException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/** How failures reach the user: one line on stderr and an exit code; details only with --verbose. */
final class Failures {

    static int exitCode(Throwable error) {
        if (error instanceof RedisUnavailableException) {
            return ExitCodes.UNAVAILABLE;
        }
        return ExitCodes.CHECK_FAILED;
    }

    static int handle(Exception error, CommandLine commandLine, ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        err.println("relock: " + error.getMessage());
        if (parseResult.hasMatchedOption("--verbose")) {
            error.printStackTrace(err);
        }
        err.flush();
        return exitCode(error);
    }

    static int usage(ParameterException error, String[] args) {
        CommandLine commandLine = error.getCommandLine();
        PrintWriter err = commandLine.getErr();
        err.println("relock: " + error.getMessage());
        commandLine.usage(err);
        err.flush();
        return ExitCodes.USAGE;
    }

    private Failures() {}
}
