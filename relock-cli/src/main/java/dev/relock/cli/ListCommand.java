package dev.relock.cli;

import dev.relock.LockInfo;
import dev.relock.RelockClient;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code relock list}: the locks held now, found with SCAN (never KEYS, so Redis is not blocked). */
@Command(name = "list",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Lists the locks held now, and the semaphores of which permits are held (--all: every semaphore).",
            "",
            "For each: name, kind, holders (owner" + "\u00d7" + "holds; the owner shortened to the first 8 hex digits"
                    + " of its client id and its thread id), lease left, fencing token and number of waiters.",
            "",
            "Walks the keys with SCAN, never KEYS, so it does not block Redis; like SCAN it may miss a lock taken"
                    + " during the walk. Free locks are not listed; use inspect for one lock.",
            ""
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  relock list",
            "  relock list --pattern 'orders:*'",
            "  relock list --all                 # with the semaphores nobody holds permits of",
            "",
            "  # locks whose lease runs out in less than 5 seconds, for a script (needs jq)",
            "  relock list --json | jq -c 'select(.leaseMillis >= 0 and .leaseMillis < 5000)'"
        })
public final class ListCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Option(names = "--pattern", paramLabel = "GLOB", defaultValue = "*",
            description = "Only locks whose name matches this Redis glob (*, ?, [abc]; default: all).")
    String pattern;

    @Option(names = "--all", description = "Also the semaphores of which no permit is held now.")
    boolean all;

    @Option(names = "--json", description = "One JSON object per lock and line, for scripts; full owner ids.")
    boolean json;

    @Override
    public Integer call() {
        List<LockInfo> locks;
        try (RelockClient client = connection.connect()) {
            locks = client.list(pattern).stream().filter(lock -> all || lock.isHeld()).toList();
        }
        LockReport report = new LockReport(System.out);
        if (json) {
            report.jsonLines(locks, false);
        } else if (locks.isEmpty()) {
            System.out.println(pattern.equals("*") ? "no locks" : "no locks match '" + pattern + "'");
        } else {
            report.table(locks);
        }
        return ExitCodes.OK;
    }
}
