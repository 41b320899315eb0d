package dev.relock.cli;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code relock unlock --force NAME}: an operator's release of a lock someone else holds. */
@Command(name = "unlock",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Releases a lock whoever holds it: an operator's tool, refused without --force.",
            "",
            "Deletes the lock NAME and wakes the next waiter: for a lock left by a stuck process. The holder"
                    + " is not stopped; it finds out at its next lease renewal (a relock exec holder then stops"
                    + " its command and exits 70).",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock inspect backup          # who holds it, with how much lease left?",
            "  relock unlock --force backup"
        })
public final class UnlockCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--force", description = "Required: confirms that you mean to break someone else's lock.")
    boolean force;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Override
    public Integer call() {
        if (!force) {
            throw new ParameterException(spec.commandLine(), "unlock needs --force: it releases a lock that"
                    + " someone else holds, while that holder may still be working under it");
        }
        try (RelockClient client = connection.connect()) {
            LockInfo before = client.inspect(name);
            boolean wasHeld = client.lock(name).forceUnlock();
            if (wasHeld) {
                String holders = before.isHeld()
                        ? " held by " + String.join(", ", before.holders().keySet())
                                + " (fencing token " + before.fencingToken() + ")"
                        : " held";
                System.out.println("released lock '" + name + "'," + holders
                        + "; its holder finds out at its next lease renewal");
            } else {
                System.out.println("lock '" + name + "' was not held; nothing to release");
            }
        }
        return ExitCodes.OK;
    }
}
