package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock inspect}; being written. */
@Command(name = "inspect", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class InspectCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock inspect: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
