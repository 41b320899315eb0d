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
        if (error instanceof IllegalArgumentException) {
            // a malformed --redis URI or --prefix, a lock name that is blank, too long or not Unicode, a malformed
            // condition name
            return ExitCodes.USAGE;
        }
        return ExitCodes.CHECK_FAILED;
    }

    static int handle(Exception error, CommandLine commandLine, ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        err.println("relock: " + oneLine(error.getMessage()));
        if (verbose(parseResult)) {
            error.printStackTrace(err);
        } else if (!(error instanceof RedisUnavailableException) && !(error instanceof IllegalArgumentException)
                && !(error instanceof dev.relock.RelockException)) {
            err.println("relock: (an unexpected " + error.getClass().getSimpleName()
                    + "; run again with --verbose for details)");
        }
        err.flush();
        return exitCode(error);
    }

    static int usage(ParameterException error, String[] args) {
        CommandLine commandLine = error.getCommandLine();
        PrintWriter err = commandLine.getErr();
        err.println("relock: " + error.getMessage());
        // the synopsis, not the whole help: the mistake stays on the screen
        CommandLine.Help help = commandLine.getHelp();
        err.print(help.synopsisHeading() + help.synopsis(help.synopsisHeadingLength()));
        err.println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return ExitCodes.USAGE;
    }

    /** Whether --verbose was given to the command or any of its parents. */
    static boolean verbose(ParseResult parseResult) {
        for (ParseResult result = parseResult; result != null; result = result.subcommand()) {
            if (result.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /** Messages of nested failures may span lines; the user gets the first, --verbose the rest. */
    static String oneLine(String message) {
        if (message == null) {
            return "failed without a message";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    private Failures() {}
}
