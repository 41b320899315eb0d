package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shape of relock-core's main code, read from its sources (imports and fully qualified names, javadoc
 * included): its packages depend on one another without a cycle, the engine contract names no engine, and every
 * public type of an internal package says why it is public.
 *
 * <p>Every package uses the API's types (exceptions, {@link LockInfo}, the settings); the API reaches into the
 * internals only through {@link RelockClientBuilder}, which makes the client. The graph leaves the builder's
 * references out: with them, the API and every internal package it builds would form one cycle by construction.
 * One more API source names an internal package: {@code RedisFence}, which the user makes on a connection of its
 * own, runs its script as loaded by the one script loader, {@code dev.relock.internal.script}.
 */
class PackageGraphTest {

    private static final Path SOURCES = Path.of("src/main/java");
    private static final String INTERNAL = "dev.relock.internal";
    private static final Path BUILDER = Path.of("dev", "relock", "RelockClientBuilder.java");
    private static final Path REDIS_FENCE = Path.of("dev", "relock", "fencing", "RedisFence.java");
    private static final String SCRIPTS = INTERNAL + ".script";

    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern REFERENCE = Pattern.compile("\\b(dev\\.relock(?:\\.[a-z]\\w*)*)\\.[A-Z]");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public (?:final |abstract |sealed |non-sealed )*(?:class|interface|record|enum) (\\w+)", Pattern.MULTILINE);

    // one entry per main source file: its path below SOURCES, package and text; read once
    private static final List<Source> sources = new ArrayList<>();

    private record Source(Path path, String pkg, String text) {

        Set<String> referencedPackages() {
            Set<String> packages = new TreeSet<>();
            Matcher matcher = REFERENCE.matcher(text);
            while (matcher.find()) {
                if (!matcher.group(1).equals(pkg)) {
                    packages.add(matcher.group(1));
                }
            }
            return packages;
        }
    }

    @BeforeAll
    static void readSources() throws IOException {
        assertThat(SOURCES).as("relock-core's main sources (tests run in the module's directory)").isDirectory();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            // module-info.java has no package; ModuleDescriptorTest checks what it exports
            files.filter(file -> file.toString().endsWith(".java") && !file.endsWith("module-info.java"))
                    .forEach(file -> {
                        String text = read(file);
                        Matcher pkg = PACKAGE.matcher(text);
                        assertThat(pkg.find()).as("package line of %s", file).isTrue();
                        sources.add(new Source(SOURCES.relativize(file), pkg.group(1), text));
                    });
        }
        assertThat(sources).as("main sources read").hasSizeGreaterThan(50);
    }

    @Test
    void packagesDependOnOneAnotherWithoutACycle() {
        Map<String, Set<String>> graph = new TreeMap<>();
        for (Source source : sources) {
            Set<String> targets = graph.computeIfAbsent(source.pkg(), pkg -> new TreeSet<>());
            if (!source.path().equals(BUILDER)) {
                targets.addAll(source.referencedPackages());
            }
        }
        assertThat(cycle(graph)).as("a cycle among relock-core's packages (the graph: %s)", graph).isEmpty();
    }

    @Test
    void theApiReachesIntoTheInternalsOnlyThroughTheBuilder() {
        List<Path> reaching = sources.stream()
                .filter(source -> !source.pkg().startsWith(INTERNAL) && !source.path().equals(BUILDER))
                .filter(source -> source.referencedPackages().stream().anyMatch(pkg -> pkg.startsWith(INTERNAL)
                        && !(source.path().equals(REDIS_FENCE) && pkg.equals(SCRIPTS))))
                .map(Source::path)
                .toList();
        assertThat(reaching).as("API sources that name an internal package").isEmpty();
    }

    @Test
    void onlyTheEnginesAndTheBuilderNameAnEngine() {
        Set<String> engines = Set.of(INTERNAL + ".single", INTERNAL + ".redlock");
        List<String> naming = new ArrayList<>();
        for (Source source : sources) {
            if (engines.contains(source.pkg()) || source.path().equals(BUILDER)) {
                continue;
            }
            for (String pkg : source.referencedPackages()) {
                if (engines.contains(pkg)) {
                    naming.add(source.path() + " -> " + pkg);
                }
            }
        }
        assertThat(naming).as("sources outside the engines that name one").isEmpty();
    }

    @Test
    void everyPublicInternalTypeSaysWhyItIsPublic() {
        List<String> unexplained = new ArrayList<>();
        for (Source source : sources) {
            Matcher type = PUBLIC_TYPE.matcher(source.text());
            if (source.pkg().startsWith(INTERNAL) && type.find()) {
                String javadoc = javadocBefore(source.text(), type.start());
                if (!javadoc.contains("Public because")) {
                    unexplained.add(source.path() + " (" + type.group(1) + ")");
                }
            }
        }
        assertThat(unexplained).as("public internal types whose javadoc does not say 'Public because ...'").isEmpty();
    }

    /** The javadoc comment that ends right before {@code at} (annotations aside), or "". */
    private static String javadocBefore(String text, int at) {
        int end = text.lastIndexOf("*/", at);
        int start = end < 0 ? -1 : text.lastIndexOf("/**", end);
        if (start < 0 || !text.substring(end + 2, at).strip().replaceAll("@\\w+(\\([^)]*\\))?", "").isBlank()) {
            return "";
        }
        return text.substring(start, end);
    }

    /** One cycle of {@code graph}, as the packages along it (the first again at the end); empty if there is none. */
    private static List<String> cycle(Map<String, Set<String>> graph) {
        Set<String> done = new HashSet<>();
        for (String start : graph.keySet()) {
            Deque<String> path = new ArrayDeque<>();
            List<String> found = cycleFrom(start, graph, path, new HashSet<>(), done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    private static List<String> cycleFrom(String pkg, Map<String, Set<String>> graph, Deque<String> path,
            Set<String> onPath, Set<String> done) {
        if (onPath.contains(pkg)) {
            List<String> cycle = new ArrayList<>();
            boolean in = false;
            for (String step : (Iterable<String>) path::descendingIterator) {
                in |= step.equals(pkg);
                if (in) {
                    cycle.add(step);
                }
            }
            cycle.add(pkg);
            return cycle;
        }
        if (!done.add(pkg)) {
            return List.of();
        }
        path.push(pkg);
        onPath.add(pkg);
        for (String next : graph.getOrDefault(pkg, Set.of())) {
            List<String> found = cycleFrom(next, graph, path, onPath, done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        onPath.remove(pkg);
        path.pop();
        return List.of();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
