package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * relock-core is a named module, {@code dev.relock}, that exports only the API packages (and the metrics package to
 * the Spring Boot starter alone): read from the module-info.class the build made. {@link ModulePathTest} runs a
 * lock through it on a module path.
 */
class ModuleDescriptorTest {

    @Test
    void onlyTheApiPackagesAreExported() {
        ModuleDescriptor descriptor = relockCore();

        assertThat(descriptor.name()).isEqualTo("dev.relock");
        Map<String, Set<String>> exports = descriptor.exports().stream().collect(Collectors.toMap(
                ModuleDescriptor.Exports::source, ModuleDescriptor.Exports::targets, (a, b) -> a, TreeMap::new));
        assertThat(exports).containsExactlyEntriesOf(new TreeMap<>(Map.of(
                "dev.relock", Set.of(),
                "dev.relock.fencing", Set.of(),
                "dev.relock.internal.metrics", Set.of("dev.relock.spring"))));
        assertThat(descriptor.opens()).isEmpty();
        // every internal package is in the module, unexported (but metrics, qualified above)
        assertThat(descriptor.packages()).contains("dev.relock.internal.engine", "dev.relock.internal.single",
                "dev.relock.internal.redlock", "dev.relock.internal.redis", "dev.relock.internal.script",
                "dev.relock.internal.lease");
    }

    @Test
    void micrometerIsAnOptionalDependency() {
        Map<String, Set<ModuleDescriptor.Requires.Modifier>> requires = relockCore().requires().stream()
                .collect(Collectors.toMap(ModuleDescriptor.Requires::name, ModuleDescriptor.Requires::modifiers));

        assertThat(requires.get("micrometer.core")).contains(ModuleDescriptor.Requires.Modifier.STATIC);
        assertThat(requires.get("micrometer.observation")).contains(ModuleDescriptor.Requires.Modifier.STATIC);
        assertThat(requires.get("lettuce.core")).containsExactly(ModuleDescriptor.Requires.Modifier.TRANSITIVE);
    }

    /** The descriptor of the classes (or jar) the tests run against: the build's own module-info.class. */
    static ModuleDescriptor relockCore() {
        return ModuleFinder.of(codeSource()).find("dev.relock").orElseThrow(
                () -> new AssertionError("no module dev.relock at " + codeSource())).descriptor();
    }

    static Path codeSource() {
        try {
            return Path.of(RelockClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
