package dev.relock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.testredis.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher script itself: where it runs from, and its class-data-sharing archive. */
@Tag("redis")
class LauncherTest {

    private static final Path CDS = Launcher.ROOT.resolve("relock-cli/target/cds");

    @TempDir
    Path dir;

    @Test
    void runsFromAnyDirectoryAndThroughASymlink() throws IOException {
        Launcher.ensureBuilt();
        Path link = Files.createSymbolicLink(dir.resolve("relock"), Launcher.SCRIPT);

        Launcher.Result result;
        try {
            result = Launcher.startCommand(List.of(link.toString(), "--version"), dir, Map.of()).await();
        } finally {
            Files.delete(link); // not left for @TempDir, which warns about links out of it
        }

        assertThat(result.exitCode()).as(result.describe()).isZero();
        assertThat(result.stdout()).startsWith("relock ");
        assertThat(result.stderr()).isEmpty();
    }

    @Test
    void firstRunDumpsAnArchiveTheNextRunChecksAndUsesAndABrokenOneIsDropped() throws IOException {
        Launcher.ensureBuilt();
        try (RedisServer redis = RedisServer.start()) {
            deleteRecursively(CDS);

            Launcher.Result first = Launcher.run("exec", "--redis", redis.uri(), "cds", "--", "true");
            assertThat(first.exitCode()).as(first.describe()).isZero();
            assertThat(first.stdout()).isEmpty();
            assertThat(first.stderr()).isEmpty();
            assertThat(files("*.jsa.*.tmp")).as("dumped by the first run").hasSize(1);

            Launcher.Result second = Launcher.run("exec", "--redis", redis.uri(), "cds", "--", "true");
            assertThat(second.exitCode()).as(second.describe()).isZero();
            assertThat(second.stderr()).isEmpty();
            assertThat(files("*.jsa")).as("checked and put in place by the second run").hasSize(1);
            assertThat(files("*.tmp")).isEmpty();

            // a dump cut short (its JVM killed while writing) is found out and dropped, never used
            Path archive = files("*.jsa").get(0);
            Files.delete(archive);
            Path truncated = archive.resolveSibling(archive.getFileName() + "." + deadPid() + ".tmp");
            Files.write(truncated, new byte[100_000]);
            Launcher.Result third = Launcher.run("exec", "--redis", redis.uri(), "cds", "--", "true");
            assertThat(third.exitCode()).as(third.describe()).isZero();
            assertThat(third.stderr()).isEmpty();
            assertThat(truncated).doesNotExist();
            assertThat(files("*.jsa")).isEmpty();
        }
    }

    @Test
    void whereTargetCannotHoldTheArchiveItGoesToTheUserCacheAndNeverCostsTheCommandItsStatus() throws IOException {
        Launcher.ensureBuilt();
        try (RedisServer redis = RedisServer.start()) {
            deleteRecursively(CDS);
            Files.createDirectories(CDS.getParent());
            Files.writeString(CDS, "a file where the launcher wants a directory"); // so target/cds cannot be made
            try {
                Path cache = dir.resolve("cache");
                Launcher.Result first = Launcher.start(List.of(), Map.of("XDG_CACHE_HOME", cache.toString()),
                        "exec", "--redis", redis.uri(), "cds", "--", "sh", "-c", "exit 3").await();
                assertThat(first.exitCode()).as(first.describe()).isEqualTo(3);
                assertThat(first.stdout()).isEmpty();
                assertThat(first.stderr()).isEmpty();
                try (Stream<Path> dumped = Files.list(cache.resolve("relock/cds"))) {
                    assertThat(dumped.map(path -> path.getFileName().toString()))
                            .as("dumped into the user's cache").singleElement().asString().endsWith(".tmp");
                }

                // no place for an archive at all: the run goes without one, silently
                Path notADirectory = Files.writeString(dir.resolve("not-a-directory"), "");
                Launcher.Result without = Launcher.start(List.of(), Map.of("XDG_CACHE_HOME", notADirectory.toString()),
                        "exec", "--redis", redis.uri(), "cds", "--", "sh", "-c", "exit 4").await();
                assertThat(without.exitCode()).as(without.describe()).isEqualTo(4);
                assertThat(without.stdout()).isEmpty();
                assertThat(without.stderr()).isEmpty();
            } finally {
                Files.delete(CDS);
            }
        }
    }

    private static List<Path> files(String glob) throws IOException {
        if (!Files.isDirectory(CDS)) {
            return List.of();
        }
        try (Stream<Path> listing = Files.list(CDS)) {
            java.nio.file.PathMatcher matcher = CDS.getFileSystem().getPathMatcher("glob:" + glob);
            return listing.filter(path -> matcher.matches(path.getFileName())).toList();
        }
    }

    /** The pid of a process that has exited. */
    private static long deadPid() {
        try {
            Process process = new ProcessBuilder("true").start();
            process.waitFor();
            return process.pid();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            for (Path each : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(each);
            }
        }
    }
}
