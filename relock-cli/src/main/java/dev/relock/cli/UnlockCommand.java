package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock unlock}; being written. */
@Command(name = "unlock", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class UnlockCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock unlock: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
