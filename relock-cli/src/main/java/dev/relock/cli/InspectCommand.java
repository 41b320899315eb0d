package dev.relock.cli;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code relock inspect NAME}: one lock, held or free, in full. */
@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Shows one lock in full, held or not.",
            "",
            "Whether it is held, by which owners (<client id>:<thread id>) with how many"
                    + " holds, the lease left, the fencing token and the number of waiters. Exits 0 whether the"
                    + " lock is held or not.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock inspect backup",
            "  relock inspect --json backup",
            "",
            "  # in a script: is it held? (needs jq)",
            "  if relock inspect --json backup | jq -e .held >/dev/null; then echo busy; fi"
        })
public final class InspectCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--json", description = "One JSON object, for scripts.")
    boolean json;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Override
    public Integer call() {
        LockInfo info;
        try (RelockClient client = connection.connect()) {
            info = client.inspect(name);
        }
        LockReport report = new LockReport(System.out);
        if (json) {
            report.jsonLines(List.of(info), true);
        } else {
            report.details(info);
        }
        return ExitCodes.OK;
    }
}
