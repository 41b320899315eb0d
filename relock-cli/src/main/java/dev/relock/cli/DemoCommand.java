package dev.relock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Placeholder for {@code relock demo}; being written. */
@Command(name = "demo", mixinStandardHelpOptions = true, description = "Not implemented yet.")
public final class DemoCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Override
    public Integer call() {
        System.err.println("relock demo: not implemented yet");
        return ExitCodes.CHECK_FAILED;
    }
}
