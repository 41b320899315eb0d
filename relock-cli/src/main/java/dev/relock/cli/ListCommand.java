package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock list}; being written. */
@Command(name = "list", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class ListCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock list: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
