package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.relock.RelockClient;
import dev.relock.RelockCondition;
import dev.relock.RelockCountDownLatch;
import dev.relock.RelockLock;
import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relock list}, {@code inspect} and {@code unlock} through the real launcher, on locks held
 * by {@code relock exec} processes (so holders, tokens and the data format all come from the
 * build under test); {@code inspect --latch} on count-down latches set and awaited by clients in the test, {@code
 * inspect --condition} on a condition a client in the test awaits.
 */
@Tag("redis")
class InspectionCommandsTest {

    private static final Pattern OWNER = Pattern.compile("([0-9a-f]{32}):(\\d+)");
    private static RedisServer redis;

    @TempDir
    Path dir;

    @BeforeAll
    static void startRedisAndBuild() {
        Launcher.ensureBuilt();
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void emptyRedis() {
        redis.flushAll();
    }

    @Test
    void listShowsHeldLocksAsATableAndAsJsonLines() throws Exception {
        try (Holder orders = Holder.start(redis.uri(), dir, "orders:42");
                Holder billing = Holder.start(redis.uri(), dir, "billing");
                Launcher.Running waiter = Launcher.start("exec", "--redis", redis.uri(), "--wait", "60s",
                        "orders:42", "--", "true")) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> inspectJson("orders:42").get("waiters").equals(1L));

            Launcher.Result json = Launcher.run("list", "--redis", redis.uri(), "--json");
            assertThat(json.exitCode()).as(json.describe()).isZero();
            List<Map<String, Object>> objects = new ArrayList<>();
            for (String line : json.stdout().lines().toList()) {
                objects.add(parse(line));
            }
            assertThat(objects).extracting(o -> o.get("name")).containsExactly("billing", "orders:42");
            Map<String, Object> lock = objects.get(1);
            assertThat(lock).containsOnlyKeys("name", "kind", "holders", "leaseMillis", "fencingToken", "waiters")
                    .containsEntry("fencingToken", orders.token()).containsEntry("waiters", 1L);
            assertThat(lock).containsEntry("kind", "exclusive");
            assertThat((Long) lock.get("leaseMillis")).isBetween(1L, 30_000L);
            String owner = singleOwner(lock);
            String billingOwner = singleOwner(objects.get(0));

            Launcher.Result table = Launcher.run("list", "--redis", redis.uri());
            assertThat(table.exitCode()).as(table.describe()).isZero();
            List<String> lines = table.stdout().lines().toList();
            assertThat(lines).hasSize(3);
            assertThat(lines.get(0)).matches("NAME +KIND +HOLDERS +LEASE LEFT +TOKEN +WAITERS");
            // sorted by name; the owner shortened to 8 hex digits of its client id and its thread id
            // then who is behind it, as the holder's identity record names it: application@host:pid and, once the
            // holder's lease keeper wrote it, the thread
            String who = " \\(relock-cli@[^ :]+:\\d+( \\S+)?\\)";
            assertThat(lines.get(1)).matches("billing +exclusive +" + shortOwner(billingOwner)
                    + "[×x]1" + who + " +\\d+(\\.\\d)?s +" + billing.token() + " +0");
            assertThat(lines.get(2)).matches("orders:42 +exclusive +" + shortOwner(owner) + "[×x]1" + who
                    + " +\\d+(\\.\\d)?s +" + orders.token() + " +1");

            Launcher.Result filtered = Launcher.run("list", "--redis", redis.uri(), "--pattern", "orders:*");
            assertThat(filtered.stdout().lines()).hasSize(2).last().asString().startsWith("orders:42 ");

            assertThat(orders.release().exitCode()).isZero();
            assertThat(billing.release().exitCode()).isZero();
            assertThat(waiter.await().exitCode()).as("the waiter got its turn").isZero();
        }
    }

    @Test
    void listSaysSoWhenThereAreNoLocks() {
        Launcher.Result table = Launcher.run("list", "--redis", redis.uri());
        assertThat(table.exitCode()).as(table.describe()).isZero();
        assertThat(table.stdout().trim()).isEqualTo("no locks");

        Launcher.Result json = Launcher.run("list", "--redis", redis.uri(), "--json");
        assertThat(json.exitCode()).isZero();
        assertThat(json.stdout()).isEmpty();
    }

    /** Issue 17: a semaphore nobody holds permits of is no lock held now; {@code --all} shows it. */
    @Test
    void listShowsASemaphoreNobodyHoldsOnlyWithAll() {
        try (RelockClient client = RelockClient.builder().redisUri(redis.uri()).build()) {
            assertThat(client.semaphore("pool").trySetPermits(3)).isTrue();
        }
        Launcher.Result held = Launcher.run("list", "--redis", redis.uri());
        assertThat(held.exitCode()).as(held.describe()).isZero();
        assertThat(held.stdout().trim()).isEqualTo("no locks");

        Launcher.Result all = Launcher.run("list", "--redis", redis.uri(), "--all");
        assertThat(all.exitCode()).as(all.describe()).isZero();
        assertThat(all.stdout().lines()).hasSize(2).last().asString().startsWith("pool ").contains("semaphore");
    }

    @Test
    void inspectShowsOneLockInFullHeldOrNot() throws Exception {
        try (Holder report = Holder.start(redis.uri(), dir, "report")) {
            Map<String, Object> json = inspectJson("report");
            assertThat(json).containsEntry("name", "report").containsEntry("held", true)
                    .containsEntry("fencingToken", report.token()).containsEntry("waiters", 0L);
            String owner = singleOwner(json);

            Launcher.Result text = Launcher.run("inspect", "--redis", redis.uri(), "report");
            assertThat(text.exitCode()).as(text.describe()).isZero();
            assertThat(text.stdout().lines()).contains("name: report", "state: held", "fencing token: " + report.token(),
                    "waiters: 0");
            assertThat(text.stdout().lines()).anySatisfy(line -> assertThat(line)
                    .matches("holder: " + Pattern.quote(owner) + " \\(1 hold\\): relock-cli on \\S+ \\(pid \\d+\\)"
                            + "(, thread \\S+)?"));
            assertThat(text.stdout()).containsPattern("(?m)^kind: exclusive$")
                    .containsPattern("(?m)^lease left: \\d+(\\.\\d)?s \\(\\d+ ms\\)$");
            assertThat(report.release().exitCode()).isZero();
        }

        Launcher.Result free = Launcher.run("inspect", "--redis", redis.uri(), "report");
        assertThat(free.exitCode()).as(free.describe()).isZero();
        assertThat(free.stdout().lines()).contains("name: report", "state: not held", "waiters: 0");
        assertThat(inspectJson("report")).containsEntry("held", false).containsEntry("holders", List.of())
                .containsEntry("fencingToken", 0L).containsEntry("leaseMillis", 0L);
    }

    /** Issue 18: {@code inspect --latch} shows the count-down latch of that name, not the lock. */
    @Test
    void inspectLatchShowsTheCountTheExpiryAndTheClientsWaiting() throws Exception {
        ExecutorService partyThread = Executors.newSingleThreadExecutor();
        try (RelockClient coordinator = RelockClient.builder().redisUri(redis.uri()).build();
                RelockClient party = RelockClient.builder().redisUri(redis.uri()).build()) {
            RelockCountDownLatch latch = coordinator.countDownLatch("start");
            assertThat(latch.trySetCount(2, Duration.ofMinutes(10))).isTrue();
            Future<Boolean> waited = partyThread.submit(
                    () -> party.countDownLatch("start").await(Duration.ofSeconds(60)));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> latch.inspect().waitingClients().contains(party.clientId()));

            Launcher.Result text = Launcher.run("inspect", "--latch", "--redis", redis.uri(), "start");
            assertThat(text.exitCode()).as(text.describe()).isZero();
            List<String> lines = text.stdout().lines().toList();
            assertThat(lines).as(text.describe()).hasSize(6);
            assertThat(lines.subList(0, 4)).containsExactly("name: start", "kind: latch", "state: set", "count: 2");
            assertThat(lines.get(4)).matches("expires in: (9m\\d\\ds|10m) \\(\\d+ ms\\)");
            // the client id shortened to 8 hex digits, as owners are in list
            assertThat(lines.get(5)).isEqualTo("waiting clients: " + party.clientId().substring(0, 8));

            Map<String, Object> json = inspectLatchJson("start");
            assertThat(json).containsOnlyKeys("name", "kind", "count", "set", "expiresInMillis", "waitingClients")
                    .containsEntry("name", "start").containsEntry("kind", "latch").containsEntry("count", 2L)
                    .containsEntry("set", true).containsEntry("waitingClients", List.of(party.clientId()));
            assertThat((Long) json.get("expiresInMillis")).isBetween(1L, Duration.ofMinutes(10).toMillis());
            assertThat(inspectJson("start")).as("the lock of the same name is another thing")
                    .containsEntry("held", false);

            latch.countDown();
            latch.countDown();
            assertThat(waited.get(60, TimeUnit.SECONDS)).as("the party saw the latch open").isTrue();
            assertThat(inspectLatchJson("start")).as("opened: still set, at 0, nobody waiting")
                    .containsEntry("count", 0L).containsEntry("set", true).containsEntry("waitingClients", List.of());
        } finally {
            partyThread.shutdownNow();
        }
    }

    @Test
    void inspectLatchOfALatchNeverSetShowsCountZeroAndNotSet() throws Exception {
        Launcher.Result text = Launcher.run("inspect", "--latch", "--redis", redis.uri(), "never");
        assertThat(text.exitCode()).as(text.describe()).isZero();
        assertThat(text.stdout().lines()).containsExactly("name: never", "kind: latch", "state: not set", "count: 0",
                "waiting clients: none");

        assertThat(inspectLatchJson("never")).containsOnlyKeys("name", "kind", "count", "set", "expiresInMillis",
                "waitingClients").containsEntry("name", "never").containsEntry("kind", "latch")
                .containsEntry("count", 0L).containsEntry("set", false).containsEntry("expiresInMillis", 0L)
                .containsEntry("waitingClients", List.of());
    }

    /** Issue 18: {@code inspect --condition} shows the owners waiting in a condition of the lock. */
    @Test
    void inspectConditionShowsTheOwnerWaitingInIt() throws Exception {
        ExecutorService waitingThread = Executors.newSingleThreadExecutor();
        try (RelockClient signaller = RelockClient.builder().redisUri(redis.uri()).build();
                RelockClient party = RelockClient.builder().redisUri(redis.uri()).build()) {
            RelockLock partyLock = party.lock("order");
            Future<Boolean> signalled = waitingThread.submit(() -> {
                partyLock.lock();
                try {
                    return partyLock.newCondition("paid").await(60, TimeUnit.SECONDS);
                } finally {
                    partyLock.unlock();
                }
            });
            RelockLock lock = signaller.lock("order");
            RelockCondition paid = lock.newCondition("paid");
            await().atMost(Duration.ofSeconds(30)).until(() -> paid.waiters().size() == 1);
            String owner = paid.waiters().get(0);
            assertThat(owner).as("the party's waiting thread").matches(OWNER).startsWith(party.clientId() + ":");

            Launcher.Result text = Launcher.run("inspect", "--condition", "paid", "--redis", redis.uri(), "order");
            assertThat(text.exitCode()).as(text.describe()).isZero();
            // the owner shortened to 8 hex digits of its client id and its thread id, as in list
            assertThat(text.stdout().lines()).as(text.describe()).containsExactly("lock: order", "condition: paid",
                    "kind: condition", "waiters: " + shortOwner(owner));

            Map<String, Object> json = inspectConditionJson("paid", "order");
            assertThat(json).containsOnlyKeys("lock", "condition", "kind", "waiters")
                    .containsEntry("lock", "order").containsEntry("condition", "paid")
                    .containsEntry("kind", "condition").containsEntry("waiters", List.of(owner));

            lock.lock();
            try {
                paid.signal();
            } finally {
                lock.unlock();
            }
            assertThat(signalled.get(60, TimeUnit.SECONDS)).as("the waiter was signalled, not timed out").isTrue();
            waitingThread.shutdown();
            assertThat(waitingThread.awaitTermination(60, TimeUnit.SECONDS)).as("the waiting thread ended").isTrue();
            assertThat(inspectConditionJson("paid", "order")).containsEntry("waiters", List.of());
            assertThat(inspectJson("order")).as("the waiter released the lock").containsEntry("held", false);
        } finally {
            waitingThread.shutdownNow();
        }
    }

    @Test
    void inspectConditionNobodyWaitsInShowsNone() throws Exception {
        Launcher.Result text = Launcher.run("inspect", "--condition", "shipped", "--redis", redis.uri(), "order");
        assertThat(text.exitCode()).as(text.describe()).isZero();
        assertThat(text.stdout().lines()).as(text.describe()).containsExactly("lock: order", "condition: shipped",
                "kind: condition", "waiters: none");

        assertThat(inspectConditionJson("shipped", "order")).containsOnlyKeys("lock", "condition", "kind", "waiters")
                .containsEntry("lock", "order").containsEntry("condition", "shipped")
                .containsEntry("kind", "condition").containsEntry("waiters", List.of());
    }

    @Test
    void inspectLatchWithConditionIsAUsageErrorAndSoIsAMalformedConditionName() {
        Launcher.Result both = Launcher.run("inspect", "--redis", redis.uri(), "--latch", "--condition", "x", "y");
        assertThat(both.exitCode()).as(both.describe()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.stderr()).contains("mutually exclusive").contains("Usage: relock inspect")
                .doesNotContain("Exception");
        assertThat(both.stdout()).isEmpty();

        Launcher.Result malformed = Launcher.run("inspect", "--redis", redis.uri(), "--condition", "paid now", "order");
        assertThat(malformed.exitCode()).as(malformed.describe()).isEqualTo(ExitCodes.USAGE);
        assertThat(malformed.stderrLines()).as(malformed.describe()).singleElement().asString()
                .startsWith("relock: ").contains("condition name").contains("'paid now'").contains("'order'");
        assertThat(malformed.stdout()).isEmpty();
    }

    @Test
    void unlockRefusesWithoutForceAndWithItBreaksTheLockWhoseHolderThenStops() throws Exception {
        // renewed every second, so the holder finds out soon
        try (Holder stuck = Holder.start(redis.uri(), dir, "stuck", "--lease", "3s")) {
            Launcher.Result refused = Launcher.run("unlock", "--redis", redis.uri(), "stuck");
            assertThat(refused.exitCode()).as(refused.describe()).isEqualTo(ExitCodes.USAGE);
            assertThat(refused.stderr()).contains("--force").doesNotContain("Exception");
            assertThat(inspectJson("stuck")).containsEntry("held", true);

            Launcher.Result forced = Launcher.run("unlock", "--force", "--redis", redis.uri(), "stuck");
            assertThat(forced.exitCode()).as(forced.describe()).isZero();
            assertThat(forced.stdout()).contains("released lock 'stuck'").contains("fencing token " + stuck.token());

            Launcher.Result holder = stuck.running().await();
            assertThat(holder.exitCode()).as(holder.describe()).isEqualTo(ExitCodes.LEASE_LOST);
            assertThat(holder.stderr()).contains("lease of lock 'stuck'");
        }

        Launcher.Result again = Launcher.run("unlock", "--force", "--redis", redis.uri(), "stuck");
        assertThat(again.exitCode()).as(again.describe()).isZero();
        assertThat(again.stdout()).contains("'stuck' was not held");
    }

    private static Map<String, Object> inspectJson(String name) throws IOException {
        Launcher.Result result = Launcher.run("inspect", "--redis", redis.uri(), "--json", name);
        assertThat(result.exitCode()).as(result.describe()).isZero();
        assertThat(result.stdout().lines()).as("one line").hasSize(1);
        return parse(result.stdout().trim());
    }

    private static Map<String, Object> inspectLatchJson(String name) throws IOException {
        Launcher.Result result = Launcher.run("inspect", "--latch", "--redis", redis.uri(), "--json", name);
        assertThat(result.exitCode()).as(result.describe()).isZero();
        assertThat(result.stdout().lines()).as("one line").hasSize(1);
        return parse(result.stdout().trim());
    }

    private static Map<String, Object> inspectConditionJson(String condition, String name) throws IOException {
        Launcher.Result result = Launcher.run("inspect", "--condition", condition, "--redis", redis.uri(), "--json",
                name);
        assertThat(result.exitCode()).as(result.describe()).isZero();
        assertThat(result.stdout().lines()).as("one line").hasSize(1);
        return parse(result.stdout().trim());
    }

    @SuppressWarnings("unchecked")
    private static String singleOwner(Map<String, Object> lock) {
        List<Object> holders = (List<Object>) lock.get("holders");
        assertThat(holders).hasSize(1);
        Map<String, Object> holder = (Map<String, Object>) holders.get(0);
        assertThat(holder).containsOnlyKeys("owner", "holds", "application", "host", "pid", "label", "thread")
                .containsEntry("holds", 1L).containsEntry("application", "relock-cli").containsEntry("label", "");
        assertThat((Long) holder.get("pid")).as("the holder's process").isPositive();
        String owner = (String) holder.get("owner");
        assertThat(owner).matches(OWNER);
        return owner;
    }

    private static String shortOwner(String owner) {
        Matcher matcher = OWNER.matcher(owner);
        assertThat(matcher.matches()).isTrue();
        return matcher.group(1).substring(0, 8) + ":" + matcher.group(2);
    }

    /** One JSON object: numbers as Long, arrays as lists, objects as maps; nothing may follow it. */
    private static Map<String, Object> parse(String json) throws IOException {
        try (JsonParser parser = new JsonFactory().createParser(json)) {
            assertThat(parser.nextToken()).as(json).isEqualTo(JsonToken.START_OBJECT);
            Map<String, Object> object = readObject(parser);
            assertThat(parser.nextToken()).as("one object per line: %s", json).isNull();
            return object;
        } catch (com.fasterxml.jackson.core.JsonParseException e) {
            throw new UncheckedIOException("not JSON: " + json, e);
        }
    }

    private static Map<String, Object> readObject(JsonParser parser) throws IOException {
        Map<String, Object> object = new LinkedHashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String field = parser.currentName();
            parser.nextToken();
            object.put(field, readValue(parser));
        }
        return object;
    }

    private static Object readValue(JsonParser parser) throws IOException {
        switch (parser.currentToken()) {
            case START_OBJECT:
                return readObject(parser);
            case START_ARRAY:
                List<Object> list = new ArrayList<>();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    list.add(readValue(parser));
                }
                return list;
            case VALUE_NUMBER_INT:
                return parser.getLongValue();
            case VALUE_TRUE:
            case VALUE_FALSE:
                return parser.getBooleanValue();
            case VALUE_NULL:
                return null;
            default:
                return parser.getText();
        }
    }
}
