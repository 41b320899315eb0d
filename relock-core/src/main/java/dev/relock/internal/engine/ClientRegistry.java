package dev.relock.internal.engine;

import dev.relock.ClientIdentity;
import dev.relock.HolderIdentity;
import dev.relock.LeaseState;
import dev.relock.LockInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The identity records of clients in Redis, one hash per client at {@code <prefix>:client:{<client id>}} (see
 * register.lua): host, pid, application and label, and the name of the thread behind each owner id that holds
 * something now. A client writes its own whole at start-up and after every pass of its lease keeper, with a time to
 * live of one default lease (at least three passes), adds the threads of owners that begin to hold in between
 * (name-holders.lua, at most once per owner between two whole writes), and deletes it at close; so a record names
 * what its client holds from shortly after each acquisition on, and a crashed client's goes with its leases.
 * {@link RecordWrites} orders and paces one client's writes.
 *
 * <p>Anyone reads them: {@link #withIdentities} names the holders of what {@code inspect} and {@code list} found.
 *
 * <p>Public because both engines, each in a package of its own, write and read the records.
 */
public final class ClientRegistry {

    /** The most owners one record names the threads of (a client of many handles names the first ones). */
    static final int MAX_OWNERS = 1_000;

    private ClientRegistry() {}

    /** The key of the record of client {@code clientId}; the hash tag keeps it in one Cluster slot. */
    public static String key(String keyPrefix, String clientId) {
        return keyPrefix + ":client:{" + clientId + "}";
    }

    /** The record's time to live: one default lease, at least 3 s. */
    public static long ttlMillis(EngineClient client) {
        return Math.max(3_000, client.settings().defaultLease().toMillis());
    }

    /**
     * The owners (full owner ids) of {@code client}'s holds that its record names now, each with the name of its
     * thread: at most {@link #MAX_OWNERS}.
     */
    static Map<String, String> threadsOfHolders(EngineClient client) {
        Map<String, String> threads = new LinkedHashMap<>();
        int suffix = client.clientId().length() + 1;
        for (Hold hold : client.holds().all()) {
            if (threads.size() == MAX_OWNERS) {
                break;
            }
            if (namesThreadOf(hold, suffix)) {
                threads.putIfAbsent(hold.owner, hold.threadName());
            }
        }
        return threads;
    }

    /**
     * Whether a record names the thread of {@code hold}'s owner: a hold still held, by an owner id of the client (longer
     * than the client id and its colon, {@code suffix} characters), whose thread has a name.
     */
    static boolean namesThreadOf(Hold hold, int suffix) {
        return hold.state() == LeaseState.HELD && hold.owner.length() > suffix && !hold.threadName().isEmpty();
    }

    /** register.lua's arguments for {@code client}: its time to live, its identity, {@code threads} by owner. */
    static String[] registerArgs(EngineClient client, Map<String, String> threads) {
        ClientIdentity identity = client.identity();
        List<String> args = new ArrayList<>();
        args.add(Long.toString(ttlMillis(client)));
        args.add("host");
        args.add(identity.host());
        args.add("pid");
        args.add(Long.toString(identity.pid()));
        args.add("application");
        args.add(identity.application());
        args.add("label");
        args.add(identity.label());
        int suffix = identity.clientId().length() + 1;
        threads.forEach((owner, thread) -> {
            args.add("t:" + owner.substring(suffix));
            args.add(thread);
        });
        return args.toArray(String[]::new);
    }

    /**
     * {@code info} with its holders named: {@code records} reads the record of a client id (empty when there is
     * none), once per client; a record that cannot be read (Redis slow or gone since) names nobody.
     */
    public static LockInfo withIdentities(LockInfo info, Function<String, Map<String, String>> records) {
        return withIdentities(List.of(info), records).get(0);
    }

    /** As {@link #withIdentities(LockInfo, Function)}, for many, reading each client's record once. */
    public static List<LockInfo> withIdentities(List<LockInfo> infos, Function<String, Map<String, String>> records) {
        Map<String, Map<String, String>> byClient = new HashMap<>();
        List<LockInfo> named = new ArrayList<>(infos.size());
        for (LockInfo info : infos) {
            Map<String, HolderIdentity> identities = new LinkedHashMap<>();
            for (String owner : info.holders().keySet()) {
                int colon = owner.indexOf(':');
                String clientId = colon < 0 ? owner : owner.substring(0, colon);
                Map<String, String> record = byClient.computeIfAbsent(clientId, id -> recordOrNone(records, id));
                identities.put(owner, identity(owner, clientId, colon < 0 ? "" : owner.substring(colon + 1), record));
            }
            named.add(new LockInfo(info.name(), info.kind(), info.holders(), info.fencingToken(), info.remainingLease(),
                    info.waiters(), info.permits(), identities));
        }
        return named;
    }

    /** The record, or none when it cannot be read: naming the holders never fails what found them. */
    private static Map<String, String> recordOrNone(Function<String, Map<String, String>> records, String clientId) {
        try {
            return records.apply(clientId);
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    private static HolderIdentity identity(String owner, String clientId, String ownerSuffix,
            Map<String, String> record) {
        if (record.isEmpty()) {
            return new HolderIdentity(owner, Optional.empty(), "");
        }
        long pid;
        try {
            pid = Long.parseLong(record.getOrDefault("pid", "0"));
        } catch (NumberFormatException e) {
            pid = 0;
        }
        ClientIdentity client = new ClientIdentity(clientId, record.getOrDefault("host", ""), pid,
                record.getOrDefault("application", ""), record.getOrDefault("label", ""));
        return new HolderIdentity(owner, Optional.of(client), record.getOrDefault("t:" + ownerSuffix, ""));
    }
}
