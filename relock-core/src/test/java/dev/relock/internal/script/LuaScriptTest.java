package dev.relock.internal.script;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a script sends (its code without indentation or comment text, on the lines of the loaded script), and how the
 * scripts are laid out: one family per directory, each script a constant of its family's class, and every key role
 * at one index of {@code KEYS} in every script (see {@link LuaScript}).
 */
class LuaScriptTest {

    // each family's class and the resource directory of its scripts
    private static final Map<Class<?>, String> FAMILIES = Map.of(SingleServerScripts.class, "single/",
            RedlockScripts.class, "redlock/", SharedScripts.class, "shared/", FencingScripts.class, "fencing/");
    // where each key role of a lock stands in KEYS; a semaphore's hash and leases stand where a lock's hash and
    // readers do
    private static final Map<String, Integer> ROLES = Map.of("lock", 1, "sem", 1, "fence", 2, "queue", 3, "expiry", 4,
            "readers", 5, "leases", 5);
    // "local a, b = KEYS[1], KEYS[base + 4]", over one line or more
    private static final Pattern KEYS_BOUND = Pattern.compile(
            "(?m)^\\s*local ([a-z_]+(?:, [a-z_]+)*) = (KEYS\\[[^\\]]+\\](?:,\\s*KEYS\\[[^\\]]+\\])*)");
    private static final Pattern KEY_INDEX = Pattern.compile("KEYS\\[(?:base \\+ )?(\\d+)\\]|KEYS\\[[^\\]]+\\]");

    @Test
    void indentationAndCommentLinesGoAndEveryLineKeepsItsNumber() {
        String script = "-- header\n  local x = 1 -- stays: a comment after code\n\tif x then\n    -- gone\n"
                + "    return x\n  end\n";

        assertThat(LuaScript.asSent(script))
                .isEqualTo("\nlocal x = 1 -- stays: a comment after code\nif x then\n\nreturn x\nend\n");
    }

    @Test
    void relocksScriptsHaveNoLongStringsOrCommentsWhereALineStartingWithDashesWouldNotBeAComment() throws Exception {
        List<LuaScript> scripts = new ArrayList<>(scripts().values());
        assertThat(scripts).hasSizeGreaterThan(20);
        for (LuaScript script : scripts) {
            assertThat(script.body()).as(script.name()).doesNotContain("[[", "]]", "[=")
                    .doesNotContainPattern("(?m)^[ \\t]*--").doesNotContainPattern("(?m)^[ \\t]+\\S");
        }
    }

    @Test
    void everyScriptFileIsAConstantOfItsFamilysClassAndItsHeaderSaysWhichFamily() throws Exception {
        Map<String, Class<?>> scripts = new LinkedHashMap<>();
        scripts().forEach((field, script) -> scripts.put(script.name(), field.getDeclaringClass()));
        List<String> files = scriptFiles();

        assertThat(files).as("the script files, lib/ aside").containsExactlyInAnyOrderElementsOf(scripts.keySet());
        for (String file : files) {
            assertThat(file).as("the directory of %s's scripts", scripts.get(file).getSimpleName())
                    .startsWith(FAMILIES.get(scripts.get(file)));
            assertThat(source(file)).as(file).startsWith("-- " + file + ": ");
        }
    }

    @Test
    void everyScriptReadsEachKeyRoleFromOneIndexOfKeys() throws Exception {
        int checked = 0;
        for (LuaScript script : scripts().values()) {
            Matcher bound = KEYS_BOUND.matcher(source(script.name()));
            while (bound.find()) {
                String[] names = bound.group(1).split(", ");
                Matcher index = KEY_INDEX.matcher(bound.group(2));
                for (int i = 0; i < names.length && index.find(); i++) {
                    if (ROLES.containsKey(names[i]) && index.group(1) != null) {
                        assertThat(Integer.parseInt(index.group(1))).as("%s: the index of %s in KEYS (of its lock)",
                                script.name(), names[i]).isEqualTo(ROLES.get(names[i]));
                        checked++;
                    }
                }
            }
        }
        assertThat(checked).as("keys bound to a role by index").isGreaterThan(60);
    }

    /** Every script constant of the family classes, by its field. */
    private static Map<Field, LuaScript> scripts() throws IllegalAccessException {
        Map<Field, LuaScript> scripts = new LinkedHashMap<>();
        for (Class<?> family : FAMILIES.keySet()) {
            for (Field field : family.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) && field.getType() == LuaScript.class) {
                    scripts.put(field, (LuaScript) field.get(null));
                }
            }
        }
        return scripts;
    }

    /** The .lua files below this package in the classes, lib/ aside, each by its {@link LuaScript#name()}. */
    private static List<String> scriptFiles() throws Exception {
        Path classes = Path.of(LuaScript.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path root = classes.resolve(LuaScript.class.getPackageName().replace('.', '/'));
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().endsWith(".lua"))
                    .map(file -> root.relativize(file).toString().replace('\\', '/'))
                    .filter(file -> !file.startsWith("lib/"))
                    .sorted()
                    .toList();
        }
    }

    /** The file as written, comments and all. */
    private static String source(String file) throws IOException {
        try (InputStream in = LuaScript.class.getResourceAsStream(file)) {
            assertThat(in).as(file).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
