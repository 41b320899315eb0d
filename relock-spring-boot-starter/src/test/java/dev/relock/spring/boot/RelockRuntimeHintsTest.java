package dev.relock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.RedisUnavailableException;
import dev.relock.RelockClient;
import dev.relock.RelockReadWriteLock;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;

/**
 * The hints of {@link RelockRuntimeHints}, checked with Spring's predicates for what a native image needs: every Lua
 * script relock-core ships (listed from its jar or class directory, so a script added there later is checked too),
 * the proxies the lazy client makes, with the methods it calls through them, and the binding of the
 * {@code spring.data.redis.*} settings.
 */
class RelockRuntimeHintsTest {

    private final RuntimeHints hints = registered();

    @Test
    void everyLuaScriptInRelockCoreIsAResourceOfTheImage() throws Exception {
        List<String> scripts = luaFilesOfRelockCore();

        assertThat(scripts).as("found by listing relock-core")
                .contains("dev/relock/internal/script/single/acquire.lua",
                        "dev/relock/internal/script/redlock/acquire.lua",
                        "dev/relock/internal/script/fencing/fenced-set.lua");
        assertThat(scripts).allSatisfy(script ->
                assertThat(RuntimeHintsPredicates.resource().forResource(script)).as(script).accepts(hints));
    }

    @Test
    void everyProxyTheLazyClientMakesBeforeItConnectsIsHinted() {
        RelockClient client = LazyRelockClient.of(() -> {
            throw new RedisUnavailableException("not connected in this test", null);
        }, "nowhere");
        RelockReadWriteLock readWriteLock = client.readWriteLock("report");
        List<Object> proxies = List.of(client, client.lock("report"), readWriteLock, readWriteLock.readLock(),
                client.semaphore("slots"), client.multiLock("a", "b"));

        assertThat(proxies).allSatisfy(proxy -> {
            assertThat(Proxy.isProxyClass(proxy.getClass())).isTrue();
            Class<?>[] interfaces = proxy.getClass().getInterfaces();
            assertThat(RuntimeHintsPredicates.proxies().forInterfaces(interfaces)).accepts(hints);
            // the proxy calls the interface's methods on the real client or view by reflection
            assertThat(interfaces).allSatisfy(type -> assertThat(RuntimeHintsPredicates.reflection().onType(type)
                    .withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints));
        });
    }

    @Test
    @SuppressWarnings("removal") // onConstructor: Spring 7 offers onConstructorInvocation, which Spring 6.2 lacks
    void theSpringDataRedisSettingsAndTheirPartsCanBeConstructedByTheBinder() {
        assertThat(Stream.of(SpringDataRedisSettings.class, SpringDataRedisSettings.Ssl.class,
                SpringDataRedisSettings.Sentinel.class, SpringDataRedisSettings.Cluster.class))
                .allSatisfy(type -> assertThat(RuntimeHintsPredicates.reflection()
                        .onConstructor(type.getDeclaredConstructors()[0]).invoke()).as(type.getName()).accepts(hints));
    }

    private static RuntimeHints registered() {
        RuntimeHints hints = new RuntimeHints();
        new RelockRuntimeHints().registerHints(hints, RelockRuntimeHintsTest.class.getClassLoader());
        return hints;
    }

    /** The path of every {@code .lua} file in the jar or directory relock-core's classes are loaded from. */
    private static List<String> luaFilesOfRelockCore() throws IOException, URISyntaxException {
        Path location = Path.of(RelockClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        if (Files.isDirectory(location)) {
            return luaFilesUnder(location);
        }
        try (FileSystem jar = FileSystems.newFileSystem(location)) {
            return luaFilesUnder(jar.getPath("/"));
        }
    }

    private static List<String> luaFilesUnder(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.getFileName() != null && file.getFileName().toString().endsWith(".lua"))
                    .map(file -> root.relativize(file).toString().replace(root.getFileSystem().getSeparator(), "/"))
                    .sorted()
                    .toList();
        }
    }
}
