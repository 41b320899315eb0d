package dev.relock.cli;

import dev.relock.LatchInfo;
import dev.relock.LockInfo;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code relock inspect [--latch | --condition COND] NAME}: one lock, held or free, in full; or one count-down
 * latch; or the threads waiting in one of a lock's conditions.
 */
@Command(name = "inspect",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Shows one lock in full, held or not; with --latch, the count-down latch of that name; with"
                    + " --condition, who waits in a condition of the lock.",
            "",
            "Whether it is held, by which owners (<client id>:<thread id>) with how many"
                    + " holds, the lease left, the fencing token and the number of waiters. Exits 0 whether the"
                    + " lock is held or not.",
            "",
            "With --latch: whether the latch is set, its count, how long until it expires unless counted down,"
                    + " and the clients with threads waiting for it to open. Exits 0 whether it is set or not.",
            "",
            "With --condition COND: the owners (<client id>:<thread id>) waiting in the lock's condition COND"
                    + " (RelockLock.newCondition; the unnamed one is \"" + RelockCondition.DEFAULT_NAME + "\"),"
                    + " longest waiting first. Exits 0 whether anyone waits or not.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock inspect backup",
            "  relock inspect --json backup",
            "  relock inspect --latch nightly-start",
            "  relock inspect --condition paid order",
            "",
            "  # in a script: is it held? (needs jq)",
            "  if relock inspect --json backup | jq -e .held >/dev/null; then echo busy; fi",
            "",
            "  # how many count-downs the latch still waits for (needs jq)",
            "  relock inspect --latch --json nightly-start | jq .count",
            "",
            "  # how many threads wait in the condition (needs jq)",
            "  relock inspect --json --condition paid order | jq '.waiters | length'"
        })
public final class InspectCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    /** What to show instead of the lock NAME: one thing at most. */
    static final class Instead {
        @Option(names = "--latch", description = "Show the count-down latch NAME instead of the lock.")
        boolean latch;

        @Option(names = "--condition", paramLabel = "COND",
                description = "Show the owners waiting in the condition COND of the lock NAME (\""
                        + RelockCondition.DEFAULT_NAME + "\": the lock's unnamed condition).")
        String condition;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Instead instead;

    @Option(names = "--json", description = "One JSON object, for scripts.")
    boolean json;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name (with --latch, the latch's).")
    String name;

    @Override
    public Integer call() {
        if (instead != null && instead.latch) {
            return inspectLatch();
        }
        if (instead != null && instead.condition != null) {
            return inspectCondition(instead.condition);
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

    private Integer inspectCondition(String conditionName) {
        RelockCondition condition;
        List<String> waiters;
        try (RelockClient client = connection.connect()) {
            // a malformed COND throws IllegalArgumentException naming it: exit 64, as a blank NAME
            condition = client.lock(name).newCondition(conditionName);
            waiters = condition.waiters();
        }
        ConditionReport report = new ConditionReport(System.out);
        if (json) {
            report.json(condition, waiters);
        } else {
            report.details(condition, waiters);
        }
        return ExitCodes.OK;
    }
}
