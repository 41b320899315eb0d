package dev.relock.testredis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One node's view of a cluster, parsed from its {@code CLUSTER NODES} reply: which nodes it knows, their roles and
 * flags, and which master serves each slot. Immutable.
 *
 * <p>A line reads {@code <id> <ip:port@cport[,hostname]> <flags> <master id or -> <ping> <pong> <epoch> <link>
 * <slot or range>...}; slot entries in brackets (slots being imported or migrated) are not ownership and are skipped.
 */
record ClusterNodesView(List<Entry> entries) {

    /** One line: a node as seen by the viewer. */
    record Entry(String id, int port, Set<String> flags, String masterId, List<int[]> slotRanges) {

        boolean isMaster() {
            return flags.contains("master");
        }

        boolean isFailed() {
            return flags.contains("fail") || flags.contains("fail?");
        }

        boolean isSettled() {
            return !flags.contains("handshake") && !flags.contains("noaddr");
        }
    }

    static ClusterNodesView parse(String reply) {
        List<Entry> entries = new ArrayList<>();
        for (String line : reply.split("\r?\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.trim().split(" ");
            String address = fields[1];
            int at = address.indexOf('@');
            int port = Integer.parseInt(address.substring(address.lastIndexOf(':', at < 0 ? address.length() : at) + 1,
                    at < 0 ? address.length() : at));
            List<int[]> ranges = new ArrayList<>();
            for (int i = 8; i < fields.length; i++) {
                String slot = fields[i];
                if (slot.startsWith("[")) {
                    continue;
                }
                int dash = slot.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? slot : slot.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(slot.substring(dash + 1));
                ranges.add(new int[] {from, to});
            }
            entries.add(new Entry(fields[0], port, Set.of(fields[2].split(",")),
                    "-".equals(fields[3]) ? null : fields[3], ranges));
        }
        return new ClusterNodesView(Collections.unmodifiableList(entries));
    }

    /** The port of the master that serves {@code slot} in this view, or -1 if none does. */
    int ownerPort(int slot) {
        for (Entry entry : entries) {
            for (int[] range : entry.slotRanges()) {
                if (range[0] <= slot && slot <= range[1]) {
                    return entry.port();
                }
            }
        }
        return -1;
    }

    /**
     * Every node's port to its role as text, e.g. {@code 7001=master 0-5460} and {@code 7004=replica of <id>}:
     * equal in two views that agree on roles and slot ownership (failure flags are left out).
     */
    Map<Integer, String> roles() {
        Map<Integer, String> roles = new TreeMap<>();
        for (Entry entry : entries) {
            StringBuilder text = new StringBuilder(entry.isMaster() ? "master" : "replica of " + entry.masterId());
            entry.slotRanges().stream().sorted((a, b) -> Integer.compare(a[0], b[0]))
                    .forEach(r -> text.append(' ').append(r[0]).append('-').append(r[1]));
            roles.put(entry.port(), text.toString());
        }
        return roles;
    }

    /** The entry for the node on {@code port}, or null if this view does not list it. */
    Entry byPort(int port) {
        return entries.stream().filter(e -> e.port() == port).findFirst().orElse(null);
    }
}
