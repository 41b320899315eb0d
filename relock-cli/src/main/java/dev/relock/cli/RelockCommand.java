package dev.relock.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The top-level {@code relock} command; the work is in its subcommands. */
@Command(name = "relock",
        mixinStandardHelpOptions = true,
        version = "relock 0.1.0-SNAPSHOT",
        description = "Distributed locks on Redis, from the shell.",
        subcommands = {
            ExecCommand.class,
            ListCommand.class,
            InspectCommand.class,
            UnlockCommand.class,
            DemoCommand.class,
            VerifyCommand.class,
            CommandLine.HelpCommand.class
        })
public final class RelockCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }

    /** The configured command line: usage errors exit 64, expected failures print one line. */
    public static CommandLine commandLine() {
        return new CommandLine(new RelockCommand())
                .registerConverter(java.time.Duration.class, new DurationConverter())
                .setExitCodeExceptionMapper(Failures::exitCode)
                .setExecutionExceptionHandler(Failures::handle)
                .setParameterExceptionHandler(Failures::usage);
    }
}
