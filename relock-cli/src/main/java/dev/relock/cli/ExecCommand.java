package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock exec}; being written. */
@Command(name = "exec", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class ExecCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock exec: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
