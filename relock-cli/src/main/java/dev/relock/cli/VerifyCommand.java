package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock verify}; being written. */
@Command(name = "verify", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class VerifyCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock verify: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
