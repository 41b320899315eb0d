package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * relock-core reads its Lua scripts as resources by name, which a GraalVM native image leaves out unless told:
 * the core jar's {@code META-INF/native-image/dev.relock/relock-core/resource-config.json} (read by native-image
 * from every jar on its class path) must name every script (issue 39). Checked by matching its patterns, as
 * native-image does (Java regular expressions over the resource path), against every {@code .lua} file core has;
 * a native build itself is not run here (no GraalVM where relock is tested).
 */
class NativeImageResourcesTest {

    private static final String CONFIG = "META-INF/native-image/dev.relock/relock-core/resource-config.json";

    @Test
    void theNativeImageResourceConfigurationIncludesEveryLuaScriptOfCore() throws Exception {
        List<Pattern> includes = includePatterns();
        List<String> scripts = luaScriptsOfCore();

        assertThat(includes).as("patterns in " + CONFIG).isNotEmpty();
        assertThat(scripts).as("found in relock-core's classes")
                .contains("dev/relock/internal/script/single/acquire.lua",
                        "dev/relock/internal/script/redlock/acquire.lua",
                        "dev/relock/internal/script/fencing/fenced-set.lua");
        assertThat(scripts).allSatisfy(script -> assertThat(includes)
                .as(script).anySatisfy(pattern -> assertThat(pattern.matcher(script).matches()).isTrue()));
        assertThat(includes).as("nothing but the scripts")
                .noneSatisfy(pattern -> assertThat(pattern.matcher("dev/relock/RelockClient.class").matches()).isTrue());
    }

    /** The {@code "pattern"} values of the configuration's includes, JSON string escapes undone. */
    private static List<Pattern> includePatterns() throws Exception {
        String json;
        try (InputStream in = RelockClient.class.getClassLoader().getResourceAsStream(CONFIG)) {
            assertThat(in).as(CONFIG + " on the class path").isNotNull();
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher value = Pattern.compile("\"pattern\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(json);
        List<Pattern> patterns = new java.util.ArrayList<>();
        while (value.find()) {
            patterns.add(Pattern.compile(value.group(1).replaceAll("\\\\(.)", "$1")));
        }
        return patterns;
    }

    private static List<String> luaScriptsOfCore() throws URISyntaxException, java.io.IOException {
        Path classes = Path.of(RelockClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (Stream<Path> files = Files.walk(classes)) {
            return files.filter(file -> file.toString().endsWith(".lua"))
                    .map(file -> classes.relativize(file).toString().replace('\\', '/')).sorted().toList();
        }
    }
}
