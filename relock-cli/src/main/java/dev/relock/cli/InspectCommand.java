package dev.relock.cli;

import dev.relock.LatchInfo;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code relock inspect [--latch] NAME}: one lock, held or free, in full; or one count-down latch. */
@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Shows one lock in full, held or not; with --latch, the count-down latch of that name.",
            "",
            "Whether it is held, by which owners (<client id>:<thread id>) with how many"
                    + " holds, the lease left, the fencing token and the number of waiters. Exits 0 whether the"
                    + " lock is held or not.",
            "",
            "With --latch: whether the latch is set, its count, how long until it expires unless counted down,"
                    + " and the clients with threads waiting for it to open. Exits 0 whether it is set or not.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock inspect backup",
            "  relock inspect --json backup",
            "  relock inspect --latch nightly-start",
            "",
            "  # in a script: is it held? (needs jq)",
            "  if relock inspect --json backup | jq -e .held >/dev/null; then echo busy; fi",
            "",
            "  # how many count-downs the latch still waits for (needs jq)",
            "  relock inspect --latch --json nightly-start | jq .count"
        })
public final class InspectCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--latch", description = "Show the count-down latch NAME instead of the lock.")
    boolean latch;

    @Option(names = "--json", description = "One JSON object, for scripts.")
    boolean json;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name (with --latch, the latch's).")
    String name;

    @Override
    public Integer call() {
        if (latch) {
            return inspectLatch();
        }
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

    private Integer inspectLatch() {
        LatchInfo info;
        try (RelockClient client = connection.connect()) {
            info = client.countDownLatch(name).inspect();
        }
        LatchReport report = new LatchReport(System.out);
        if (json) {
            report.json(info);
        } else {
            report.details(info);
        }
        return ExitCodes.OK;
    }
}
